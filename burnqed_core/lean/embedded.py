"""The embedded backend: Lean 4 compiled to WebAssembly, driven over LSP.

A proof state is not stored in Lean: it is the document text
``preamble + example <statement> := by`` + the tactic path. The path sits in
a block of its own, nested under the goal reader of the checker's header::

    example (n : Nat) : n + 0 = n := by
      burnqed_step "<nonce>" 3
        <the tactic path, indented under it>

``burnqed_step`` (`judge.lean`) runs the path as one tactic sequence and then
reports, from its own code, the goals left (as Lean prints them) in one
message made of the document's nonce and netstrings. Nothing follows the path
in the block, so no focusing tactic (``focus``, ``next =>``, ``case _ =>``,
``·`` ...) can capture the reader, whatever the layout. A step that leaves no
goal counts only when the kernel accepts the replay of its proof term (with
the auxiliary declarations the candidate made); the leaves of the axioms of
every step's (partial) proof term are reported, so that native evaluation or
a `sorry` never closes a goal.

Many (state, tactic) pairs are checked in ONE document as consecutive blocks
(one edit, one answer per block). Diagnostics are attributed to blocks by
line range. "unsolved goals" reported on the ``example`` header is the normal
state of a proof prefix, not a failure; reported inside the tactics (a bullet
that did not close its goal) it is a tactic error.

Whole-proof checks, `elaborate` (``burnqed lean check``) and the states of a
traced proof come from the trusted checker's ``burnqed_judge`` alone
(`judge`): one elaboration decides.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from burnqed_core.config import LeanConfig
from burnqed_core.errors import LeanSetupError
from burnqed_core.lean import checker, checker_module
from burnqed_core.lean.install import LeanInstall, require_installed
from burnqed_core.lean.judge import (
    JudgeReport,
    ReportError,
    StepReport,
    StoreStats,
    judge_command,
    judged,
    lean_string,
    new_nonce,
    parse_seq_report,
    parse_step_reports,
    parse_store_stats,
    step_command,
    store_stats_command,
    tactics_command,
    worker_header,
)
from burnqed_core.lean.lsp import LspWorker, Symbol, is_sorry_warning, process_rss_mb
from burnqed_core.lean.scratch import make as make_scratch
from burnqed_core.lean.source import indent_tactic, preamble_text, strict_line
from burnqed_core.lean.types import (
    ALLOWED_AXIOMS,
    BackendDied,
    CheckResult,
    Diagnostic,
    Elaboration,
    GoalState,
    Status,
    TacticResult,
)
from burnqed_core.lean.verdicts import elaboration_of, leaf_axioms
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

# Used when lean.embedded.elab_async is off. Lean's default elaborates the
# proofs of a document's blocks as parallel tasks: 64 tactics/s at 32 blocks
# per edit against 26/s without (measured 2026-11-22, 2 cores). But a stream
# of documents with changing preambles (tracing a corpus whose theorems each
# have their own definitions) made the worker start new threads (each a new
# ~0.5 GB Worker in this build): 5 -> 9.7 GB RSS within 44 s, recycled every
# few calls. With this option 150 corpus theorems replayed and re-checked at
# a steady 6.7-6.9 GB, 16-17 threads. `burnqed lean trace/baseline` use it.
SYNC_ELAB_OPTIONS = ("-DElab.async=false",)
_PARSE_ERROR = re.compile(r"^(unexpected |expected |unknown tactic|unterminated )")


@dataclass(frozen=True)
class Block:
    """Where one proof block sits in a document (0-based lines)."""

    decl_line: int          # the ``example`` line
    first_tactic_line: int  # first line after the header (``:= by``): the goal reader's
    end_line: int           # last line of the block


# Every document of the worker starts with this header (changing a
# document's imports makes the file worker exit, so it is the same for all):
# the trusted checker (`judge.lean`, compiled once per install into a module
# that the header imports, `checker_module`; Lean reuses the unchanged prefix
# of a document), then a public, exposed section so that the rest reads as a
# plain file.
HEADER = worker_header(compiled=checker_module.MODULE)
HEADER_LINES = HEADER.count("\n")
WARMUP = HEADER + "theorem burnqed_warmup : 1 + 1 = 2 := by decide\n"
STEP_INDENT = "    "  # of the candidate's lines under the goal reader


STORED_PREAMBLE_LINES = 40
"""A preamble of at least this many lines goes into a search document as ``burnqed_preamble "<text>"`` (the
checker's store gives the state after it, elaborated once per worker, `judge.lean`); a shorter one as text,
which Lean elaborates in a moment and reuses while the document keeps it."""


def document_head(preamble: str) -> str:
    """`HEADER`, then the preamble: as text, or (`STORED_PREAMBLE_LINES` lines and more) taken from the
    checker's store whatever documents came between."""
    text = preamble_text(preamble) + strict_line(preamble)
    if text.count("\n") >= STORED_PREAMBLE_LINES:
        return HEADER + f"burnqed_preamble {lean_string(text)}\n"
    return HEADER + text


def block_tactics(tactics: Sequence[str]) -> str:
    """The tactic text of a block as it sits in the document (``skip`` for none)."""
    return "".join(indent_tactic(t) for t in tactics) or "  skip\n"


def build_document(preamble: str, items: Sequence[tuple[str, Sequence[str]]],
                   nonce: str = "") -> tuple[str, list[Block]]:
    """One document: `HEADER`, the preamble, then one anonymous ``example``
    block per (statement, tactic path), the path nested under the goal
    reader ``burnqed_step "<nonce>" <index>``. Blocks are anonymous so that no
    candidate can cite another (by name or through ``exact?``). Also where
    each block is."""
    parts = [document_head(preamble)]
    line = parts[0].count("\n")
    blocks = []
    for k, (statement, tactics) in enumerate(items):
        head = f"example {statement.strip()} := by\n"
        body = "".join(indent_tactic(t, STEP_INDENT) for t in tactics) or f"{STEP_INDENT}skip\n"
        text = head + f"  {step_command(nonce, k)}\n" + body + "\n"
        n = text.count("\n")
        blocks.append(Block(decl_line=line, first_tactic_line=line + head.count("\n"), end_line=line + n - 1))
        parts.append(text)
        line += n
    return "".join(parts), blocks


NAMESPACE_KIND = 3  # LSP SymbolKind.Namespace: `namespace`/`section` blocks are not declarations


def _shift(d: Diagnostic, by: int) -> Diagnostic:
    return d.model_copy(update={"line": d.line + by, "end_line": d.end_line + by})


NOT_ONE_SEQUENCE = "not one tactic sequence by Lean's parser"


def tactic_parse(diags: Sequence[Diagnostic], nonce: str, n: int) -> list[bool] | None:
    """The answer of a document's ``burnqed_tactics`` command: for each block,
    whether its tactic text is one tactic sequence by Lean's parser (None
    when there is no single well-formed answer of this nonce)."""
    answers = [d.message for d in diags if d.severity == 3 and d.message.startswith(nonce)]
    if len(answers) != 1:
        return None
    try:
        return parse_seq_report(answers[0], nonce, n)
    except ReportError:
        return None


def is_parse_error(message: str) -> bool:
    return bool(_PARSE_ERROR.match(message))


def first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


@dataclass(frozen=True)
class BlockVerdict:
    status: Status
    goals: tuple[str, ...] = ()
    message: str = ""


def judge_block(block: Block, diags: Sequence[Diagnostic], report: StepReport | None) -> BlockVerdict:
    """The result of one block from its diagnostics and its goal reader's report."""
    mine = [d for d in diags if block.decl_line <= d.line <= block.end_line]
    header_errors = [d for d in mine if d.is_error and d.line < block.first_tactic_line
                     and not d.message.startswith("unsolved goals")]
    if header_errors:
        return BlockVerdict(Status.START_ERROR, message=header_errors[0].message)
    errors = [d for d in mine if d.is_error and d.line >= block.first_tactic_line]
    if errors:
        parse = [d for d in errors if is_parse_error(d.message)]
        if parse:
            return BlockVerdict(Status.PARSE_ERROR, message=parse[0].message)
        return BlockVerdict(Status.TACTIC_ERROR, message=errors[0].message)
    if any(is_sorry_warning(d) for d in mine):
        return BlockVerdict(Status.TACTIC_ERROR, message="the tactic uses `sorry`")
    if report is None:
        # No answer of the reader: never read as "no goals left".
        return BlockVerdict(Status.PARSE_ERROR, message="no proof state after the tactic (not parsed as a tactic)")
    if report.status != "ok":
        return BlockVerdict(Status.TACTIC_ERROR, message="the tactic failed")
    bad = sorted({a for a in leaf_axioms(report.leaves) if a not in ALLOWED_AXIOMS})
    if bad:
        return BlockVerdict(Status.TACTIC_ERROR, message=f"the step's proof uses disallowed axioms: {', '.join(bad)}")
    if not report.goals and report.verdict != "ok":
        why = f" ({report.detail})" if report.detail else ""
        return BlockVerdict(Status.TACTIC_ERROR, message=f"the kernel rejects the step's proof{why}")
    return BlockVerdict(Status.OK, goals=tuple(report.goals))


def parse_problem(blocks: Sequence[Block], symbols: Sequence[Symbol]) -> str | None:
    """Lean's own parse of a batch document against its blocks: a
    declaration after the preamble that does not start on a block's line
    means model text left its block and declared something (then no verdict
    of that document is used). A block that merely ends early (a parse
    error: Lean skips to the next block's ``example``) is that block's own
    parse error. Commands that declare nothing are refused by the static
    rules before Lean."""
    if not blocks:
        return None
    starts = {b.decl_line for b in blocks}
    for s in symbols:
        if s.line < blocks[0].decl_line or s.kind == NAMESPACE_KIND:
            continue
        if s.line not in starts:
            return f"unexpected declaration `{s.name}` at line {s.line + 1}"
    return None


def _isolate(tactic: str) -> bool:
    """Tactics that could swallow the blocks after them (an unclosed comment
    or string runs to the end of the document): checked in a document alone."""
    return "/-" in tactic or "-/" in tactic or tactic.count('"') % 2 == 1


def _one_answer(diags: Sequence[Diagnostic], nonce: str) -> str:
    """The checker's one answer to the request of ``nonce`` (an information message that starts with it)."""
    answers = [d.message for d in diags if d.severity == 3 and d.message.startswith(nonce)]
    if len(answers) != 1:
        raise ReportError(f"the checker answered {len(answers)} times (expected once)")
    return answers[0]


class EmbeddedBackend:
    """One ``lean --worker`` process (WebAssembly Lean run by Node 26).

    Implements `LeanBackend`. Not safe for concurrent use by design: every
    call takes the worker's lock, as Lean must see one request at a time.
    """

    def __init__(self, config: LeanConfig, install_dir: Path | None = None) -> None:
        self.config = config
        root = install_dir or config.embedded.install_dir
        if root is None:
            raise LeanSetupError("lean.embedded.install_dir is not set (load a profile, or pass install_dir)")
        self.install_root = Path(root)
        self.worker: LspWorker | None = None
        self.scratch: str | None = None
        self.last_preamble: str | None = None
        self.started_at = 0.0
        self.startup_s = 0.0
        # One document operation (an edit and its answers) at a time, so
        # that concurrent callers never read answers of another's document.
        self._doc_lock = asyncio.Lock()
        # Set when a judged text ran code of its own (`JudgeReport.ran_code`), or when the checker's answer to a
        # text was unusable (the text's code may have done that: a task it spawned can read the worker's stdin
        # and take a message of the protocol): a task it left could read the next request (and its nonce) or
        # write to stdout, so the process takes no further request.
        self.tainted = ""
        # The current call's limit (set by the pool for each call): the worker's wait for a judge answer
        # follows it, not the worker's default `request_timeout_s`.
        self.call_limit_s: float | None = None

    # -- process ------------------------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.worker.pid if self.worker else None

    def alive(self) -> bool:
        return self.worker is not None and self.worker.alive()

    def rss_mb(self) -> int:
        return process_rss_mb(self.pid)

    async def start(self) -> None:
        inst: LeanInstall = require_installed(self.install_root)
        compiled = await asyncio.to_thread(checker_module.ensure, inst)
        args = [f"-Dserver.reportDelayMs={self.config.embedded.report_delay_ms}", *self.worker_options(), "--worker"]
        # The worker sees the library and the compiled checker (read-only) and this directory only.
        self.scratch = make_scratch()
        env = dict(inst.env(), LEAN_PATH=checker_module.lean_path(inst, compiled), BURNQED_LEAN_SCRATCH=self.scratch)
        self.worker = LspWorker(inst.command(*args), env=env, timeout_s=self.config.embedded.request_timeout_s,
                                cwd=self.scratch)
        t0 = time.monotonic()
        try:
            limit = self.config.embedded.start_timeout_s
            diags = await asyncio.wait_for(self.worker.start(WARMUP, timeout_s=limit), limit)
        except (TimeoutError, BackendDied) as e:
            tail = " | ".join(list(self.worker.stderr_tail)[-5:])
            await self.close()
            detail = f": {tail}" if tail else ""
            raise LeanSetupError(f"the embedded Lean worker did not start ({e or 'timeout'}){detail}") from None
        except BaseException:  # cancelled (or anything else): never leave the process or its scratch behind
            await asyncio.shield(self.close())
            raise
        if any(d.is_error for d in diags):
            await self.close()
            raise LeanSetupError(f"the embedded Lean worker cannot elaborate `1 + 1 = 2`: {diags[0].message}")
        self.started_at = time.monotonic()
        self.startup_s = self.started_at - t0
        self.last_preamble = ""
        log.info("embedded Lean worker pid %s started in %.1fs", self.pid, self.startup_s)

    async def close(self) -> None:
        if self.worker is not None:
            await self.worker.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def worker_options(self) -> tuple[str, ...]:
        return () if self.config.embedded.elab_async else SYNC_ELAB_OPTIONS

    def _w(self) -> LspWorker:
        if self.worker is None or not self.worker.alive():
            raise BackendDied(self.worker._death_message() if self.worker else "worker not started")
        if self.tainted:
            # A text ran code of its own in this process, or its answer was unusable: no request (and no nonce)
            # goes to it any more.
            raise BackendDied(f"the worker is retired: {self.tainted}")
        return self.worker

    # -- documents ----------------------------------------------------------------------------------------------
    async def run_blocks(self, preamble: str,
                         items: Sequence[tuple[str, Sequence[str]]]) -> list[BlockVerdict] | None:
        """Elaborate (statement, tactic path) blocks in one document; None when
        Lean's parse of a batch shows a declaration that is not one of the
        blocks (the caller redoes the batch one block per document)."""
        if not items:
            return []
        async with self._doc_lock:
            return await self._run_blocks(preamble, items)

    async def _run_blocks(self, preamble: str,
                          items: Sequence[tuple[str, Sequence[str]]]) -> list[BlockVerdict] | None:
        """First the blocks' tactic texts through Lean's parser (`_check_tactics`), then the blocks whose
        text is one tactic sequence elaborated in one document (`_judge_document`)."""
        w = self._w()
        nonce = new_nonce()
        out = await self._check_tactics(w, preamble, items, nonce)
        good = [i for i, v in enumerate(out) if v is None]
        if good:
            judged = await self._judge_document(w, preamble, [items[i] for i in good], nonce)
            if judged is None:
                return None
            for i, v in zip(good, judged, strict=True):
                out[i] = v
        return [v for v in out if v is not None]

    async def _check_tactics(self, w: LspWorker, preamble: str, items: Sequence[tuple[str, Sequence[str]]],
                             nonce: str) -> list[BlockVerdict | None]:
        """Per block, None when its tactic text is exactly one tactic sequence, else its parse error; every
        block a start error when the preamble does not elaborate. A document of the preamble and a
        ``burnqed_tactics`` command (Lean's parser): Lean re-elaborates only that command, the header and the
        preamble are an unchanged prefix. A candidate that is not one sequence gets its parse error and never
        reaches the blocks' document, where it could swallow the goal reader's ``skip`` or change how the
        others parse."""
        head = document_head(preamble)
        diags = await w.check(head + tactics_command(nonce, [block_tactics(t) for _, t in items]),
                             timeout_s=self.call_limit_s)
        self.last_preamble = preamble
        pre_errors = [d for d in diags if d.is_error and d.line < head.count("\n")]
        if pre_errors:
            msg = f"preamble: {first_line(pre_errors[0].message)}"
            return [BlockVerdict(Status.START_ERROR, message=msg) for _ in items]
        seqs = tactic_parse(diags, nonce, len(items))
        why = NOT_ONE_SEQUENCE if seqs is not None else "Lean's parser gave no answer"
        seqs = seqs or [False] * len(items)
        return [None if ok else BlockVerdict(Status.PARSE_ERROR, message=why) for ok in seqs]

    async def _judge_document(self, w: LspWorker, preamble: str, items: Sequence[tuple[str, Sequence[str]]],
                              nonce: str) -> list[BlockVerdict] | None:
        """The blocks (each one tactic sequence) elaborated in one document: a verdict per block; None when
        Lean's parse shows a declaration that is not one of the blocks, or a shared document has an error
        outside every block (the caller redoes them one block per document)."""
        text, blocks = build_document(preamble, items, nonce)
        diags = await w.check(text, timeout_s=self.call_limit_s)
        if len(blocks) > 1 and parse_problem(blocks, await w.document_symbols()):
            return None
        stray = [d for d in diags if d.is_error and not any(b.decl_line <= d.line <= b.end_line for b in blocks)]
        if stray:
            # An error outside every block (the preamble elaborated cleanly above): a candidate placed it
            # there (meta code throwing at a made-up position). No verdict of this document is used; alone,
            # the block fails.
            if len(blocks) > 1:
                return None
            return [BlockVerdict(Status.TACTIC_ERROR, message=f"an error outside the block: "
                                 f"{first_line(stray[0].message)}")]
        reports = parse_step_reports([d.message for d in diags if d.severity == 3], nonce)
        return [judge_block(b, diags, reports.get(k)) for k, b in enumerate(blocks)]

    async def _run_batch(self, preamble: str, items: Sequence[tuple[str, Sequence[str]]]) -> list[BlockVerdict]:
        """`run_blocks` in chunks of ``batch_size``; risky tactics alone; a block
        that got no proof state in a shared document is re-run alone (another
        block's parse error may have run into it)."""
        out: list[BlockVerdict | None] = [None] * len(items)
        alone = [i for i, (_, path) in enumerate(items) if path and _isolate(path[-1])]
        shared = [i for i in range(len(items)) if i not in set(alone)]
        bs = self.config.batch_size
        for k in range(0, len(shared), bs):
            idx = shared[k:k + bs]
            got = await self.run_blocks(preamble, [items[i] for i in idx])
            if got is None:  # Lean's parse differs from the blocks: each one alone, in its own document
                log.warning("a batch of %d blocks parsed into unexpected declarations: redone one by one", len(idx))
                alone += idx
                continue
            for i, v in zip(idx, got, strict=True):
                out[i] = v
            if len(idx) > 1:
                alone += [i for i in idx if (v := out[i]) is not None and v.status is Status.PARSE_ERROR
                          and v.message.startswith("no proof state")]
        for i in alone:
            one = await self.run_blocks(preamble, [items[i]])
            assert one is not None  # a single block is never re-split
            out[i] = one[0]
        return [v for v in out if v is not None]

    # -- ProofEnv -----------------------------------------------------------------------------------------------
    async def start_proof(self, theorem: Theorem) -> TacticResult:
        t0 = time.monotonic()
        v = (await self._run_batch(theorem.preamble, [(theorem.statement, ())]))[0]
        dt = time.monotonic() - t0
        if v.status is not Status.OK:
            return TacticResult(status=Status.START_ERROR, message=v.message, elapsed_s=dt)
        return TacticResult(status=Status.OK, state=GoalState(theorem=theorem, goals=v.goals), elapsed_s=dt)

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        t0 = time.monotonic()
        by_preamble: dict[str, list[int]] = {}
        for i, (state, _) in enumerate(items):
            by_preamble.setdefault(state.theorem.preamble, []).append(i)
        results: list[TacticResult | None] = [None] * len(items)
        for preamble, idx in by_preamble.items():
            blocks = [(items[i][0].theorem.statement, (*items[i][0].tactics, items[i][1])) for i in idx]
            verdicts = await self._run_batch(preamble, blocks)
            dt = (time.monotonic() - t0) / max(1, len(items))
            for i, v in zip(idx, verdicts, strict=True):
                state, tactic = items[i]
                if v.status is Status.OK:
                    new = GoalState(theorem=state.theorem, tactics=(*state.tactics, tactic), goals=v.goals)
                    results[i] = TacticResult(status=Status.OK, state=new, elapsed_s=dt)
                else:
                    results[i] = TacticResult(status=v.status, message=v.message, elapsed_s=dt)
        return [r for r in results if r is not None]

    async def check_source(self, text: str) -> list[Diagnostic]:
        """Diagnostics of ``text`` (lines of ``text``: the header is hidden)."""
        async with self._doc_lock:
            diags = await self._w().check(HEADER + text, timeout_s=self.call_limit_s)
        self.last_preamble = None
        return [_shift(d, -HEADER_LINES) for d in diags if d.line >= HEADER_LINES]

    reads_goals = True  # `judge`/`elaborate` read the goals at positions from the checked run itself
    trusted_checker = True  # `judge`: the header's checker decides

    async def judge(self, preamble: str, expected: str, candidate: str, names: Sequence[str],
                    module: str = "", mode: str = "names", trusted: bool = False,
                    positions: Sequence[tuple[int, int]] = ()) -> JudgeReport:
        """The trusted checker's verdict (`judge.lean`): ``candidate`` elaborated
        after ``preamble`` as strings by the checker's own code, the judged
        declarations (``names``, or in mode ``list`` every theorem of the
        candidate) replayed through the kernel with everything they need that is
        not the library's, their types compared with what ``expected``
        declares, their axioms collected; the goals at ``positions`` of the
        candidate from the same run. Read only from the one message that starts
        with this call's nonce; anything else (no such message, a malformed one)
        is an error. A text that ran code of its own retires the process
        (`tainted`)."""
        nonce = new_nonce()
        doc = HEADER + judge_command(nonce, preamble, expected, candidate, names, module, mode, trusted, positions)
        async with self._doc_lock:
            diags = await self._w().check(doc, timeout_s=self.call_limit_s)
        self.last_preamble = None
        return judged(lambda: _one_answer(diags, nonce), nonce, None if mode == "list" else list(names), self._retire)

    def _retire(self, why: str) -> None:
        """No further request (nor nonce) goes to this process (`tainted`); the pool replaces it."""
        self.tainted = why
        log.info("embedded Lean worker pid %s retired: %s", self.pid, why[:200])

    async def store_stats(self) -> StoreStats | None:
        """The checker's preamble store in this process (`judge.lean`: a preamble is elaborated and its
        declarations replayed once per worker): what it keeps, and how many requests started from it."""
        nonce = new_nonce()
        async with self._doc_lock:
            diags = await self._w().check(HEADER + store_stats_command(nonce), timeout_s=self.call_limit_s)
        self.last_preamble = None
        return parse_store_stats(_one_answer(diags, nonce), nonce)

    async def elaborate(self, text: str, axioms_of: Sequence[str] = (),
                        goals_at: Sequence[tuple[int, int]] = (), declared: bool = False) -> Elaboration:
        """`LeanBackend.elaborate` by the trusted checker alone (`judge`): one
        elaboration of ``text`` decides its diagnostics, whether Lean processed
        it to the end, the kernel's verdict and the axioms of ``axioms_of`` (or,
        with ``declared``, of every theorem-like declaration of the text, listed
        as Lean elaborated it), the notes on their statements and the goals at
        ``goals_at``."""
        body = text + ("" if text.endswith("\n") else "\n")
        try:
            report = await self.judge("", "", body, [] if declared else axioms_of,
                                      mode="list" if declared else "names", positions=goals_at)
        except ReportError as e:
            log.warning("the trusted checker's answer is unusable: %s", e)
            return Elaboration(diagnostics=[Diagnostic(severity=1, line=0, end_line=0,
                                                       message=f"the trusted checker gave no usable answer: {e}")])
        return elaboration_of(report, None if declared else axioms_of, goals_at)

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str], states: bool = False,
                          meaning: str = "refuse") -> CheckResult:
        return await checker.check_proof(self, theorem, tactics, states=states, meaning=meaning)

    async def free(self, states: Sequence[GoalState]) -> None:
        """Nothing to free: a state is its text."""
