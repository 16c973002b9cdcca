"""What baselines (a) and (b) share: a list of tactics per theorem tried in batched rounds in Lean, the first
that closes the theorem alone kept (`first_closing`), and its report (`BaselineReport`).

A theorem none closes is hard (``null`` in ``automation.json``, the format
`burnqed_core.data.theorems.load.automation_map` reads).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field
from tqdm import tqdm

from burnqed_core.lean.types import GoalState, ProofEnv, Status, TacticResult
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)


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


async def first_closing(env: ProofEnv, theorems: Sequence[Theorem], tactic_lists: Mapping[str, Sequence[str]],
                        *, progress: bool = False, by_tactic: Sequence[str] = (),
                        shape: Callable[[str], str] = str) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first tactic of the theorem's list that closes it alone (None:
    none does). Round r tries the r-th tactic of every theorem still open, in
    one batched `apply_many`. A closing tactic is counted in ``by_tactic`` under its own text, or under its
    ``shape`` when that text is not one of ``by_tactic`` (baseline (b) counts tactic shapes)."""
    t0 = time.monotonic()
    report = BaselineReport(theorems=len(theorems), by_tactic=dict.fromkeys(by_tactic, 0))
    result: dict[str, str | None] = {t.name: None for t in theorems}
    by_name = {t.name: t for t in theorems}
    open_ = await _start_all(env, theorems, report)
    rounds = max((len(v) for v in tactic_lists.values()), default=0)
    bar = tqdm(total=rounds, desc="baseline", unit="round", disable=not progress)
    for k in range(rounds):
        names = [n for n in open_ if k < len(tactic_lists[n])]
        if not names:
            break
        tactics = [tactic_lists[n][k] for n in names]
        results = await env.apply_many([(open_[n], tac) for n, tac in zip(names, tactics, strict=True)])
        refused = await _refused_by_premise_rule(env, by_name, names, tactics, results, report)
        for n, tactic, r in zip(names, tactics, results, strict=True):
            if n not in refused:
                _record_step(n, tactic, r, open_, result, report, shape)
        bar.update(1)
    bar.close()
    await env.free(list(open_.values()))
    report.closed = sum(v is not None for v in result.values())
    report.hard = len(theorems) - report.closed - len(report.start_errors)
    report.elapsed_s = round(time.monotonic() - t0, 2)
    return result, report


async def _start_all(env: ProofEnv, theorems: Sequence[Theorem], report: BaselineReport) -> dict[str, GoalState]:
    """Start a proof of every theorem at once: name -> its initial goal state for those that started; the others
    are recorded in ``report`` (``infra`` for a timeout/crash, ``start_errors`` for a statement that did not
    elaborate)."""
    starts = await asyncio.gather(*(env.start_proof(t) for t in theorems))
    open_: dict[str, GoalState] = {}
    for t, r in zip(theorems, starts, strict=True):
        if r.ok and r.state is not None:
            open_[t.name] = r.state
        elif r.status.is_infra:
            report.infra.append(t.name)
        else:
            report.start_errors.append(t.name)
    return open_


def _closes(r: TacticResult) -> bool:
    """Whether the step ``r`` succeeded and left no goal."""
    return r.ok and r.state is not None and r.state.is_proved


async def _refused_by_premise_rule(env: ProofEnv, by_name: Mapping[str, Theorem], names: Sequence[str],
                                   tactics: Sequence[str], results: Sequence[TacticResult],
                                   report: BaselineReport) -> set[str]:
    """The names among ``names`` whose closing step the whole-proof check refused.

    A library theorem (`Theorem.module`): the step closes its goal in the worker's whole library, the premise
    rule is the whole-proof check's (the theorem itself, or a later lemma, would close it). Each closing step of a
    library theorem is checked as a whole proof; refusals are counted in ``report.refused`` and infrastructure
    failures of the check added to ``report.infra``."""
    confirm = [(n, tac) for n, tac, r in zip(names, tactics, results, strict=True)
               if by_name[n].module and _closes(r)]
    checks = await asyncio.gather(*(env.check_proof(by_name[n], [tac]) for n, tac in confirm))
    refused = {n for (n, _), c in zip(confirm, checks, strict=True) if not c.ok}
    report.refused += sum(not c.ok and not c.infra for c in checks)
    report.infra += [n for (n, _), c in zip(confirm, checks, strict=True) if c.infra and n not in report.infra]
    return refused


def _record_step(name: str, tactic: str, r: TacticResult, open_: dict[str, GoalState],
                 result: dict[str, str | None], report: BaselineReport, shape: Callable[[str], str]) -> None:
    """Record the outcome ``r`` of trying ``tactic`` on the open theorem ``name``: a closing tactic is kept in
    ``result``, counted in ``report.by_tactic`` (under its text, or its ``shape`` when the text is not a key) and
    the theorem leaves ``open_``; an infrastructure failure is added to ``report.infra`` once; a sandbox rejection
    is logged."""
    if _closes(r):
        result[name] = tactic
        key = tactic if tactic in report.by_tactic else shape(tactic)
        report.by_tactic[key] = report.by_tactic.get(key, 0) + 1
        del open_[name]
    elif r.status.is_infra and name not in report.infra:
        report.infra.append(name)
    elif r.status is Status.REJECTED:
        log.warning("the sandbox rejected automation tactic %r: %s", tactic, r.message)
