"""A verdict per theorem of a user's file, in bounded time.

`check_file` asks the trusted checker for the whole file in one request (one
elaboration decides everything, and each declaration is replayed once) when it
has at most `WHOLE_FILE_MAX_THEOREMS` theorems. A
file whose request does not end in time (a theorem that never finishes, with
or without options of the file: the limit is a wall clock, which no
``set_option`` can lift) or that kills the worker is checked again in chunks
of its theorems, in order, each chunk in a request of its own with its own
limit (the file's definitions are elaborated in each: a chunk holds as many
theorems as their cost makes worth it, one when they are cheap); a chunk that
runs out is checked again one theorem per request, and a theorem that runs
out alone gets a timeout verdict: its own limit, plus the definitions' time
and a worker's restart. In a chunk's text every theorem before the
chunk is an ``axiom`` of the same name and statement (its verdict is known),
the theorems after it are cut, and the rest of the file (definitions,
instances, sections, options) is kept as it is, on the same lines: a theorem
that uses an earlier one is accepted only when that one was (a timed-out
theorem's dependents fail). Kimina Lean Server and Pantograph give each
snippet its own limit in the same way.

The file's definitions are the same text in every chunk after the first: they
go to the checker as the request's preamble (the text before the first
theorem, `preamble_split`), which each worker elaborates and replays once and
keeps (`judge.lean`, the preamble store), and the chunk's own text follows it
on the same lines. The first chunk keeps the whole text as one candidate, so
that the definitions' own messages are reported; a preamble that Lean refuses
is sent again as part of the chunk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from burnqed_core.data.theorems.lean_file import parse_lean_file
from burnqed_core.errors import DataError
from burnqed_core.lean.judge import ReportError, user_text
from burnqed_core.lean.lexer import LexError, TokKind, tokenize
from burnqed_core.lean.pool import InfraFailure, LeanPool, load_factor
from burnqed_core.lean.types import (
    ALLOWED_AXIOMS,
    DEFAULT_THEOREM_TIMEOUT_S,
    DeclaredTheorem,
    Diagnostic,
    Elaboration,
    Status,
)
from burnqed_core.lean.verdicts import elaboration_of

log = logging.getLogger(__name__)

MAX_CHUNK = 16
PER_THEOREM_S = 1.0
"""Each request's limit is the per-theorem limit plus this much per theorem it holds (and the definitions' time
and a margin), the margin stretched by the machine's load."""
WHOLE_FILE_MAX_THEOREMS = 64
"""A file with more theorems goes to chunks at once: one request over a file of ~100 definitions and 105 to 150
theorems was seen to take minutes where its halves take seconds each (`benchmarks/user_file.py`; the cause, in
the checker or in Lean, is not found)."""
CHUNK_PRE_S = 0.5
"""A chunk holds one theorem per this many seconds of the definitions' elaboration (at most `MAX_CHUNK`)."""

Progress = Callable[[str], None]


@dataclass
class _Decl:
    """A theorem-like declaration of the file, as the file parser cut it."""

    name: str
    keyword: str
    line: int  # 0-based line of the keyword
    col: int
    end_line: int  # 0-based last line
    signature: str  # from the name to the `:=` (binders and type)
    written: str  # the name as written


@dataclass
class _Run:
    text: str
    decls: list[_Decl]
    limit_s: float
    progress: Progress | None
    verdicts: dict[str, bool] = field(default_factory=dict)  # name -> accepted
    parts: list[tuple[list[int], Elaboration]] = field(default_factory=list)
    timed_out: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    split: int | None = None  # `preamble_split`: the first line after the shared definitions


def theorem_declarations(text: str) -> list[_Decl] | None:
    """The file's theorem-like declarations with where they stand, or None
    when the file parser cannot read it."""
    try:
        parsed = parse_lean_file(text)
        toks = tokenize(text, strict=False)
    except (DataError, LexError):
        return None
    by_line: dict[int, list[int]] = {}
    for k, t in enumerate(toks):
        if t.kind is TokKind.IDENT:
            by_line.setdefault(t.line, []).append(k)
    out = []
    for e in parsed.entries:
        line = e.line - 1
        kw = next((k for k in by_line.get(line, []) if toks[k].text == e.keyword), None)
        if kw is None:
            return None
        written = toks[kw + 1].text if e.keyword != "example" and kw + 1 < len(toks) else ""
        out.append(_Decl(name=e.theorem.name, keyword=e.keyword, line=line, col=toks[kw].col,
                         end_line=e.end_line - 1, signature=e.theorem.statement, written=written))
    return out


def chunk_text(text: str, decls: Sequence[_Decl], first: int, last: int) -> str:
    """The file for the theorems ``first..last`` (indices into ``decls``):
    earlier theorems as axioms (examples dropped), later text cut; every
    kept line where it was."""
    lines = text.split("\n")
    for d in decls[:first]:
        stub = "" if d.keyword == "example" else f"axiom {d.written} {' '.join(d.signature.split())}"
        head = lines[d.line][:d.col]
        for i in range(d.line, d.end_line + 1):
            lines[i] = ""
        lines[d.line] = head + stub
    return "\n".join(lines[:decls[last].end_line + 1]) + "\n"


def _stub_axioms(elab: Elaboration, name: str) -> list[str]:
    return [user_text(a.removeprefix("local:")) for a in elab.axioms.get(name, []) if a.startswith("local:")]


_MODIFIERS = frozenset({"private", "protected", "noncomputable", "nonrec", "partial", "unsafe", "public", "meta"})


def preamble_split(text: str, decls: Sequence[_Decl]) -> int | None:
    """The line where the file's first theorem command starts (its docstring, attributes and modifiers
    included): the text before it is the definitions every chunk shares. None when that command does not
    start a line of its own, or carries an ``… in`` prefix."""
    if not decls or decls[0].line == 0:
        return None
    try:
        toks = tokenize(text, comments=True, strict=False)
    except LexError:
        return None
    i = next((k for k, t in enumerate(toks) if (t.line, t.col) == (decls[0].line, decls[0].col)), None)
    if i is None:
        return None
    i -= 1
    while i >= 0:
        t = toks[i]
        if t.kind is TokKind.DOC or (t.kind is TokKind.IDENT and t.text in _MODIFIERS):
            i -= 1
        elif t.text == "]":
            depth, i = 1, i - 1
            while i >= 0 and depth:
                depth += {"]": 1, "[": -1, "@[": -1}.get(toks[i].text, 0)
                i -= 1
            if depth or toks[i + 1].text != "@[":
                return None
        else:
            break
    start = toks[i + 1]
    if i >= 0 and (toks[i].line == start.line or toks[i].text == "in"):
        return None
    return start.line if start.line > 0 and text.split("\n", start.line)[:start.line] != [""] * start.line \
        else None


async def _request(pool: LeanPool, run: _Run, text: str, limit_s: float, split: int | None = None) -> \
        Elaboration | None:
    """One request over ``text``; with ``split`` its lines before ``split`` go as the preamble (kept by the
    worker), the rest on the same lines as the candidate. None: no answer within ``limit_s``."""
    run.requests += 1
    try:
        if split is not None:
            lines = text.split("\n")
            preamble = "\n".join(lines[:split]) + "\n"
            report = await pool.judge(preamble, "", "\n" * split + "\n".join(lines[split:]), [],
                                      timeout_s=limit_s, mode="list")
            if report.preamble_error is None:
                return elaboration_of(report, None)
            log.info("the definitions as a preamble gave errors: the chunk is checked as one text")
            run.requests += 1
        return await pool.elaborate(text, declared=True, timeout_s=limit_s, retry=False)
    except InfraFailure as e:
        log.info("a file request gave no answer (%s)", e.message)
        return None
    except ReportError as e:  # the checker's answer was unusable: as no answer
        log.warning("a file request got an unusable answer (%s)", e)
        return None


def _limit(theorem_s: float, pre_s: float, n: int) -> float:
    return theorem_s + (1.5 * pre_s + 5.0 + PER_THEOREM_S * n) * load_factor()


async def _chunk(pool: LeanPool, run: _Run, idx: list[int], pre_s: float) -> None:
    """Check the theorems ``idx`` (consecutive) in one request; one by one on a timeout."""
    text = chunk_text(run.text, run.decls, idx[0], idx[-1])
    split = run.split if idx[0] > 0 else None  # the first chunk reports the definitions' messages
    elab = await _request(pool, run, text, _limit(run.limit_s, pre_s, len(idx)), split)
    if elab is None:
        if len(idx) > 1:
            for i in idx:
                await _chunk(pool, run, [i], pre_s)
            return
        d = run.decls[idx[0]]
        run.timed_out[d.name] = (f"no verdict within its limit ({run.limit_s:.0f} s, `--theorem-timeout`): "
                                 "the theorem did not finish or ended the worker")
        run.verdicts[d.name] = False
        return
    run.parts.append((idx, elab))
    for t in elab.theorems or []:
        run.verdicts[t.name] = t.found and t.name in elab.axioms and all(
            run.verdicts.get(s, False) for s in _stub_axioms(elab, t.name)) and not [
            a for a in elab.axioms[t.name] if not a.startswith("local:") and a not in ALLOWED_AXIOMS]
    if run.progress:
        run.progress(f"{len(run.verdicts)}/{len(run.decls)} theorems")


@dataclass
class _Merged:
    theorems: list[DeclaredTheorem] = field(default_factory=list)
    axioms: dict[str, list[str]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    marks: dict[str, list[str]] = field(default_factory=dict)
    diags: list[Diagnostic] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    complete: bool = True


def _verdicts_of(run: _Run, m: _Merged, elab: Elaboration) -> None:
    """A chunk's verdicts: a theorem using an earlier one (an axiom in the chunk's text) is accepted only when
    that one was."""
    for name, axs in elab.axioms.items():
        stubs = _stub_axioms(elab, name)
        bad = [s for s in stubs if not run.verdicts.get(s, False)]
        if bad:
            why = "timed out" if bad[0] in run.timed_out else "is not accepted"
            m.rejected[name] = f"`{name}` uses `{bad[0]}`, which {why}"
        else:
            m.axioms[name] = [a for a in axs if not (a.startswith("local:") and user_text(a[6:]) in stubs)]


def _add_chunk(run: _Run, m: _Merged, idx: list[int], elab: Elaboration) -> None:
    m.theorems += elab.theorems or []
    own = {t.start_line for t in elab.theorems or []}
    lo = run.decls[idx[0]].line if idx[0] else 0  # the lines before the chunk are the earlier chunks'
    m.diags += [g for g in elab.diagnostics if g.line >= lo or g.line in own]
    m.complete = m.complete and elab.complete
    m.ran += elab.ran_code
    m.notes.update(elab.notes)
    m.marks.update(elab.file_constants)
    m.rejected.update(elab.rejected)
    _verdicts_of(run, m, elab)


def _merge(run: _Run) -> Elaboration:
    """One `Elaboration` from the chunks' (lines are the file's: kept in place)."""
    m = _Merged()
    got: dict[int, tuple[list[int], Elaboration]] = {i: part for part in run.parts for i in part[0]}
    for i, d in enumerate(run.decls):
        if i not in got:
            m.theorems.append(DeclaredTheorem(name=d.name, kind=d.keyword, found=False, line=d.line, column=d.col,
                                              start_line=d.line, end_line=d.end_line, statement=""))
        elif i == got[i][0][0]:
            _add_chunk(run, m, *got[i])
    return Elaboration(diagnostics=m.diags, axioms=m.axioms, rejected=m.rejected, notes=m.notes,
                       complete=m.complete, theorems=m.theorems, declarations=[t.name for t in m.theorems if t.found],
                       declaration_lines=[(t.start_line, t.end_line) for t in m.theorems if t.found],
                       ran_code=m.ran, file_constants=m.marks, timed_out=dict(run.timed_out))


async def check_file(pool: LeanPool, text: str, theorem_timeout_s: float = DEFAULT_THEOREM_TIMEOUT_S,
                     progress: Progress | None = None) -> Elaboration:
    """Every theorem of ``text`` judged by the trusted checker (see the module's
    docstring), with `Elaboration.timed_out` for those that got no verdict
    within ``theorem_timeout_s`` of their own."""
    decls = theorem_declarations(text)
    n = len(decls) if decls is not None else 1
    whole = _limit(theorem_timeout_s, 5.0, n)
    if progress:
        progress(f"checking {n} theorem(s) in one request (limit {whole:.0f} s)" if n <= WHOLE_FILE_MAX_THEOREMS
                 else f"checking {n} theorems in chunks")
    run = _Run(text=text, decls=decls or [], limit_s=theorem_timeout_s, progress=progress)
    if not decls or n <= WHOLE_FILE_MAX_THEOREMS:
        elab = await _request(pool, run, text, whole)
        if elab is not None:
            return elab
        if not decls:
            raise InfraFailure(Status.TIMEOUT, f"the file got no answer within {whole:.0f} s")
    run.split = preamble_split(text, decls)
    t0 = time.monotonic()
    pre = await _request(pool, run, chunk_text(text, decls, len(decls), len(decls) - 1), whole, run.split)
    pre_s = time.monotonic() - t0
    if pre is None:
        # The definitions themselves do not finish: each theorem alone (those before the culprit get their
        # verdicts, those after it time out with it).
        pre_s, size = theorem_timeout_s, 1
    else:
        size = max(1, min(MAX_CHUNK, round(pre_s / CHUNK_PRE_S)))
    if progress:
        why = f"no answer within {whole:.0f} s" if n <= WHOLE_FILE_MAX_THEOREMS else f"{n} theorems"
        progress(f"{why}: checking the theorems {size} per request (the definitions take {pre_s:.1f} s)")
    for k in range(0, len(decls), size):
        await _chunk(pool, run, list(range(k, min(len(decls), k + size))), pre_s)
    return _merge(run)

