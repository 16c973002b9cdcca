"""The automation-only baselines: which automation closes a theorem alone.

Two baselines. (a) Single tactic, below. (b) Definition-aware
(`definition_aware_tactics`): ``simp [defs]``, ``grind [defs]`` and, for
each variable ``x`` of the statement, ``induction x <;> simp_all [defs]``
and ``induction x <;> grind [defs]``, where ``defs`` are the user
definitions (``def`` / ``abbrev`` of the preamble) that the statement names:
what a user of Lean tries before reaching for a prover.

Every solve rate is reported beside this baseline, and benchmarks report
their automation-resistant ("hard") split separately: a prover that only
learned to type ``omega`` should not look good. For each theorem the
tactics of `AUTOMATION_TACTICS` are tried in that order, each in one batched
round over the theorems still open; the first that closes the goal is the
theorem's automation tactic, and a theorem none closes is hard (``null`` in
``automation.json``, the format `burnqed_core.data.theorems.load.automation_map`
reads). ``exact?`` is left out: too slow in the embedded build.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field
from tqdm import tqdm

from burnqed_core.lean.types import GoalState, ProofEnv, Status
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

AUTOMATION_TACTICS: tuple[str, ...] = ("rfl", "trivial", "decide", "omega", "simp", "simp_all", "grind")


class BaselineReport(BaseModel):
    theorems: int
    closed: int = 0
    hard: int = 0
    by_tactic: dict[str, int] = Field(default_factory=dict)
    start_errors: list[str] = Field(default_factory=list, description="theorems whose statement did not elaborate")
    infra: list[str] = Field(default_factory=list, description="theorems with a timeout/crash on some tactic")
    refused: int = Field(0, description="closing steps of library theorems the whole-proof check refused "
                         "(the premise rule: the theorem itself or a later lemma closed the goal)")
    elapsed_s: float = 0.0

    def summary(self) -> str:
        tactics = ", ".join(f"{k} {v}" for k, v in self.by_tactic.items() if v)
        s = (f"{self.theorems} theorems: {self.closed} closed by automation ({tactics or 'none'}), "
             f"{self.hard} hard")
        if self.start_errors:
            s += f", {len(self.start_errors)} did not start"
        if self.infra:
            s += f", {len(self.infra)} with infrastructure failures"
        if self.refused:
            s += f", {self.refused} closing steps refused by the premise rule"
        return s + f" ({self.elapsed_s:.0f}s)"


async def automation_baseline(env: ProofEnv, theorems: Sequence[Theorem],
                              tactics: Sequence[str] = AUTOMATION_TACTICS,
                              progress: bool = False) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first tactic of ``tactics`` that closes the theorem alone
    (None: none does, or the statement did not start), and a report."""
    return await first_closing(env, theorems, {t.name: list(tactics) for t in theorems}, progress=progress,
                               by_tactic=tactics)


async def definition_aware_baseline(env: ProofEnv, theorems: Sequence[Theorem], progress: bool = False
                                    ) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first of `definition_aware_tactics` that closes the theorem
    (None: none does), and a report (``by_tactic`` counts tactic shapes)."""
    lists = {t.name: definition_aware_tactics(t) for t in theorems}
    mapping, report = await first_closing(env, theorems, lists, progress=progress, by_tactic=DEFAWARE_SHAPES)
    return mapping, report


DEFAWARE_SHAPES: tuple[str, ...] = ("simp [defs]", "grind [defs]", "induction <;> simp_all [defs]",
                                    "induction <;> grind [defs]")

_IDENT = r"[^\s:()\[\]{}⦃⦄,]+"
_DEF_RE = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?((?:(?:private|protected|noncomputable|partial|unsafe)\s+)*)"
                     r"(?:def|abbrev)\s+(" + _IDENT + ")", re.MULTILINE)
_NS_RE = re.compile(r"^\s*(namespace|end)\s+(" + _IDENT + r")\s*$", re.MULTILINE)
_STMT_IDENT_RE = re.compile(r"[A-Za-z_\u00c0-\u1fff][\w.'!?\u00c0-\u1fff]*")


def user_definitions(preamble: str) -> list[str]:
    """Full names of the ``def`` / ``abbrev`` declarations of a preamble (in
    order; ``partial``/``unsafe`` ones, which have no equations, left out),
    prefixed with their ``namespace``."""
    events = sorted([(m.start(), "def", m) for m in _DEF_RE.finditer(preamble)]
                    + [(m.start(), "ns", m) for m in _NS_RE.finditer(preamble)], key=lambda e: e[0])
    scope: list[str] = []
    out: list[str] = []
    for _, kind, m in events:
        if kind == "ns":
            if m.group(1) == "namespace":
                scope.append(m.group(2))
            elif scope and scope[-1] == m.group(2):
                scope.pop()
            continue
        if re.search(r"\b(partial|unsafe)\b", m.group(1)):
            continue
        name = m.group(2).removeprefix("_root_.")
        full = ".".join([*scope, name]) if scope and not m.group(2).startswith("_root_.") else name
        if full not in out:
            out.append(full)
    return out


def mentioned_definitions(text: str, definitions: Sequence[str]) -> list[str]:
    """Those of ``definitions`` (full names, e.g. from `user_definitions`) that
    ``text`` (a statement, or a goal state as Lean prints it) names as an
    identifier: by full name, by the name without its namespace, or in dot
    notation (``x.f``, ``x.f.g``). In the order of ``definitions``."""
    idents = set(_STMT_IDENT_RE.findall(text))
    tails = {part for i in idents if "." in i for part in i.split(".")[1:]}  # x.f, x.f.g
    out = []
    for full in definitions:
        short = full.rsplit(".", 1)[-1]
        if full in idents or short in idents or short in tails:
            out.append(full)
    return out


def statement_definitions(theorem: Theorem) -> list[str]:
    """The user definitions of the preamble that the statement names."""
    return mentioned_definitions(theorem.statement, user_definitions(theorem.preamble))


def statement_variables(statement: str) -> list[str]:
    """Names bound by the statement's leading explicit/implicit binders
    (``(a b : T)``, ``{x : T}``, ``⦃x⦄``; instance binders ``[..]`` and type
    variables ``(α : Type)`` skipped)."""
    pairs = {"(": ")", "{": "}", "⦃": "⦄", "[": "]"}
    out: list[str] = []
    i, n = 0, len(statement)
    while True:
        while i < n and statement[i].isspace():
            i += 1
        if i >= n or statement[i] not in pairs:
            break
        open_, depth, j = statement[i], 0, i
        while j < n:
            if statement[j] in pairs:
                depth += 1
            elif statement[j] in pairs.values():
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = statement[i + 1:j]
        i = j + 1
        if open_ == "[":
            continue
        head, _, typ = inner.partition(":")
        if re.match(r"\s*(Type|Sort|Prop)\b", typ):  # a type variable: nothing to induct on
            continue
        for name in head.split():
            if re.fullmatch(r"[A-Za-z_\u00c0-\u1fff][\w'\u00c0-\u1fff]*", name) and name not in out:
                out.append(name)
    return out


def definition_aware_tactics(theorem: Theorem) -> list[str]:
    """Baseline (b) for one theorem, in the order tried."""
    defs = statement_definitions(theorem)
    lst = f" [{', '.join(defs)}]" if defs else ""
    out = [f"simp{lst}", f"grind{lst}"]
    for x in statement_variables(theorem.statement):
        out += [f"induction {x} <;> simp_all{lst}", f"induction {x} <;> grind{lst}"]
    return out


def _shape(tactic: str) -> str:
    if tactic.startswith("induction"):
        return "induction <;> simp_all [defs]" if "simp_all" in tactic else "induction <;> grind [defs]"
    return "simp [defs]" if tactic.startswith("simp") else "grind [defs]"


async def first_closing(env: ProofEnv, theorems: Sequence[Theorem], tactic_lists: Mapping[str, Sequence[str]],
                        *, progress: bool = False, by_tactic: Sequence[str] = ()
                        ) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first tactic of the theorem's list that closes it alone (None:
    none does). Round r tries the r-th tactic of every theorem still open, in
    one batched `apply_many`."""
    t0 = time.monotonic()
    report = BaselineReport(theorems=len(theorems), by_tactic=dict.fromkeys(by_tactic, 0))
    result: dict[str, str | None] = {t.name: None for t in theorems}
    by_name = {t.name: t for t in theorems}
    starts = await asyncio.gather(*(env.start_proof(t) for t in theorems))
    open_: dict[str, GoalState] = {}
    for t, r in zip(theorems, starts, strict=True):
        if r.ok and r.state is not None:
            open_[t.name] = r.state
        elif r.status.is_infra:
            report.infra.append(t.name)
        else:
            report.start_errors.append(t.name)
    rounds = max((len(v) for v in tactic_lists.values()), default=0)
    bar = tqdm(total=rounds, desc="baseline", unit="round", disable=not progress)
    for k in range(rounds):
        names = [n for n in open_ if k < len(tactic_lists[n])]
        if not names:
            break
        results = await env.apply_many([(open_[n], tactic_lists[n][k]) for n in names])
        # a library theorem (`Theorem.module`): the step closes its goal in the worker's whole library, the
        # premise rule is the whole-proof check's (the theorem itself, or a later lemma, would close it)
        confirm = [n for n, r in zip(names, results, strict=True) if by_name[n].module and r.ok
                   and r.state is not None and r.state.is_proved]
        checks = await asyncio.gather(*(env.check_proof(by_name[n], [tactic_lists[n][k]]) for n in confirm))
        refused = {n for n, c in zip(confirm, checks, strict=True) if not c.ok}
        report.refused += sum(not c.ok and not c.infra for c in checks)
        report.infra += [n for n, c in zip(confirm, checks, strict=True) if c.infra and n not in report.infra]
        for n, r in zip(names, results, strict=True):
            tactic = tactic_lists[n][k]
            if n in refused:
                continue
            if r.ok and r.state is not None and r.state.is_proved:
                result[n] = tactic
                key = tactic if tactic in report.by_tactic else _shape(tactic)
                report.by_tactic[key] = report.by_tactic.get(key, 0) + 1
                del open_[n]
            elif r.status.is_infra and n not in report.infra:
                report.infra.append(n)
            elif r.status is Status.REJECTED:
                log.warning("the sandbox rejected automation tactic %r: %s", tactic, r.message)
        bar.update(1)
    bar.close()
    await env.free(list(open_.values()))
    report.closed = sum(v is not None for v in result.values())
    report.hard = len(theorems) - report.closed - len(report.start_errors)
    report.elapsed_s = round(time.monotonic() - t0, 2)
    return result, report


def write_automation(mapping: Mapping[str, str | None], path: Path, merge: bool = True) -> Path:
    """Write ``automation.json`` (sorted by name). With ``merge``, entries of an
    existing file for other theorems are kept (one file serves several sets)."""
    data: dict[str, str | None] = {}
    if merge and path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(old, dict):
            data.update(old)
    data.update(mapping)
    atomic_write_text(path, json.dumps(dict(sorted(data.items())), indent=1, ensure_ascii=False) + "\n")
    return path
