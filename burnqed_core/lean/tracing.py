"""Trace known proofs through Lean into tactic pairs.

For every theorem with a known proof (`Theorem.proof`), the whole proof is
checked once by the trusted checker (`checker.check_proof` with
``states=True``), and the goals before each tactic are read from that very
run (Lean's info trees of the elaboration that the kernel's replay checked:
the outermost tactic that starts where each step starts, so a ``case tag =>``
step sees every goal with its case tag, as the search does). The pairs are
(state before, tactic, state after, depth); the state after the last tactic
is "no goals". One elaboration decides: nothing a separate elaboration of the
same text shows is ever written, so a preamble that behaves differently when
judged cannot poison the data.

A theorem whose check does not accept the proof, or whose run reports no
state before one of its tactics, is refused (no pair written); its proof is
then replayed step by step only to name the failing step in the report.
`burnqed lean trace` exits non-zero on any refusal. This is how the tiny
profile gets its base pairs, and how a user validates a traced corpus (e.g.
LeanDojo's) against their own Lean.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field
from tqdm import tqdm

from burnqed_core.lean.checker import reads_goals
from burnqed_core.lean.types import CheckResult, GoalState, ProofEnv, Status, TacticResult
from burnqed_core.records import TacticPair, Theorem

log = logging.getLogger(__name__)
SLICE = 64  # (state, tactic) pairs per apply_many call


class TraceFailure(BaseModel):
    """Why one theorem did not replay (or did not re-check)."""

    theorem: str
    step: int = Field(description="index of the failing tactic; -1: the start; len(proof): the end or re-check")
    tactic: str = ""
    status: str
    message: str

    def line(self) -> str:
        where = "start" if self.step < 0 else f"step {self.step} `{self.tactic}`" if self.tactic else "end"
        return f"{self.theorem}: {where}: {self.status}: {self.message.strip().splitlines()[0] if self.message else ''}"


class TraceReport(BaseModel):
    theorems: int
    without_proof: int = 0
    replayed: int = 0
    rechecked: int = 0
    one_pass: int = Field(0, description="theorems traced from their accepting check (all traced ones)")
    pairs: int = 0
    failures: list[TraceFailure] = Field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


async def _start_all(env: ProofEnv, theorems: Sequence[Theorem]) -> list[GoalState | TraceFailure]:
    results = await asyncio.gather(*(env.start_proof(t) for t in theorems))
    out: list[GoalState | TraceFailure] = []
    for t, r in zip(theorems, results, strict=True):
        if r.ok and r.state is not None:
            out.append(r.state)
        else:
            out.append(TraceFailure(theorem=t.name, step=-1, status=r.status.value, message=r.message))
    return out


async def trace_theorems(env: ProofEnv, theorems: Sequence[Theorem], progress: bool = False,
                         source: str = "trace") -> tuple[list[TacticPair], TraceReport]:
    """Trace the known proofs of ``theorems``; (pairs of the accepted
    theorems, report). Theorems without a proof are counted and skipped."""
    t0 = time.monotonic()
    with_proof = [t for t in theorems if t.proof]
    report = TraceReport(theorems=len(theorems), without_proof=len(theorems) - len(with_proof))
    fast: dict[str, list[TacticPair]] = {}
    refused: dict[str, TraceFailure] = {}
    if with_proof and reads_goals(env):
        fast, refused = await _trace_from_checks(env, with_proof, source, progress)
    else:
        refused = {t.name: TraceFailure(theorem=t.name, step=len(t.proof), status="infra", message=(
            "this Lean backend cannot read the states of its checked run")) for t in with_proof}
    report.replayed = report.rechecked = report.one_pass = len(fast)
    rest = [t for t in with_proof if t.name not in fast]
    if rest:
        # Only to name the failing step: no pair of this replay is ever written.
        log.info("%d theorems refused by the checked trace: replayed step by step to name the failing step",
                 len(rest))
        _, steps = await _replay(env, rest, False, progress, source,
                                 TraceReport(theorems=len(rest)))
        by_name = {f.theorem: f for f in steps.failures}
        for t in rest:
            f = refused[t.name]
            step = by_name.get(t.name)
            if step is not None and f.status != "infra":
                f = step.model_copy(update={"message": f"{step.message} (the check: {f.message})"[:2000]})
            report.failures.append(f)
    out = [p for t in with_proof for p in fast.get(t.name, [])]
    report.pairs = len(out)
    report.elapsed_s = round(time.monotonic() - t0, 2)
    log.info("traced %d/%d theorems into %d pairs in %.1fs (%d failures)", len(fast), len(with_proof), len(out),
             report.elapsed_s, len(report.failures))
    return out, report


async def _trace_from_checks(env: ProofEnv, theorems: Sequence[Theorem], source: str, progress: bool
                             ) -> tuple[dict[str, list[TacticPair]], dict[str, TraceFailure]]:
    """(theorem name -> its pairs, for the theorems whose check accepted the
    proof and reported the state before every tactic; theorem name -> why
    each other one is refused)."""
    bar = tqdm(total=len(theorems), desc="trace", unit="thm", disable=not progress)

    async def one(t: Theorem) -> tuple[Theorem, CheckResult]:
        c = await env.check_proof(t, t.proof, states=True)  # type: ignore[call-arg]
        bar.update(1)
        return t, c

    out: dict[str, list[TacticPair]] = {}
    refused: dict[str, TraceFailure] = {}
    for t, c in await asyncio.gather(*(one(t) for t in theorems)):
        if not c.ok:
            refused[t.name] = TraceFailure(theorem=t.name, step=len(t.proof), status="infra" if c.infra
                                           else "recheck_failed", message=c.errors[0] if c.errors else "rejected")
            continue
        if c.states is None or len(c.states) != len(t.proof):
            refused[t.name] = TraceFailure(theorem=t.name, step=len(t.proof), status="no_states", message=(
                "the checked run reports no state before some tactic: no pair is written from another run"))
            continue
        texts = [GoalState(theorem=t, goals=g).text for g in c.states] + [""]  # as the search renders a state
        out[t.name] = [TacticPair(theorem=t.name, state_before=texts[k], tactic=tac, state_after=texts[k + 1],
                                  depth=k, source=t.source or source) for k, tac in enumerate(t.proof)]
    bar.close()
    return out, refused


async def _replay(env: ProofEnv, with_proof: Sequence[Theorem], recheck: bool, progress: bool, source: str,
                  report: TraceReport) -> tuple[dict[str, list[TacticPair]], TraceReport]:
    """The step-by-step replay (then the re-check) of ``with_proof``, counted into ``report``: all theorems'
    step ``depth`` in one round, depth after depth, a theorem leaving at its first failure."""
    if not with_proof:
        return {}, report
    bar = tqdm(total=sum(len(t.proof) + 1 + recheck for t in with_proof), desc="trace", unit="step",
               disable=not progress)
    starts = await _start_all(env, with_proof)
    bar.update(len(with_proof))
    pairs: dict[str, list[TacticPair]] = {t.name: [] for t in with_proof}
    active: dict[int, GoalState] = {}
    for i, s in enumerate(starts):
        if isinstance(s, TraceFailure):
            report.failures.append(s)
        else:
            active[i] = s
    depth = 0
    while active:
        todo = [(i, s) for i, s in active.items() if depth < len(with_proof[i].proof)]
        for i in [i for i in active if depth >= len(with_proof[i].proof)]:
            del active[i]
        if not todo:
            break
        # Same preambles next to each other (one document each), slices for progress.
        todo.sort(key=lambda x: with_proof[x[0]].preamble)
        results = await _apply_step(env, [(s, with_proof[i].proof[depth]) for i, s in todo], bar)
        for (i, before), r in zip(todo, results, strict=True):
            after = _replayed_step(with_proof[i], depth, before, r, source, pairs, report)
            if after is None:
                del active[i]
            else:
                active[i] = after
        depth += 1
    failed = {f.theorem for f in report.failures}
    replayed = [t for t in with_proof if t.name not in failed]
    report.replayed += len(replayed)
    if recheck and replayed:
        await _recheck(env, replayed, bar, report)
    bar.close()
    failed = {f.theorem for f in report.failures}
    return {t.name: pairs[t.name] for t in with_proof if t.name not in failed}, report


async def _apply_step(env: ProofEnv, items: list[tuple[GoalState, str]], bar: tqdm) -> list[TacticResult]:
    """``env.apply_many`` over ``items`` in slices of `SLICE` (the bar advanced after each)."""
    results: list[TacticResult] = []
    for k in range(0, len(items), SLICE):
        part = items[k:k + SLICE]
        results += await env.apply_many(part)
        bar.update(len(part))
    return results


def _replayed_step(thm: Theorem, depth: int, before: GoalState, r: TacticResult, source: str,
                   pairs: dict[str, list[TacticPair]], report: TraceReport) -> GoalState | None:
    """Step ``depth`` of ``thm``'s proof from ``before`` with Lean's result ``r``: its pair appended to
    ``pairs`` when it ran; the state to go on from, or None when the theorem's replay ends here with a
    failure in ``report`` (the step failed, closed the goals too early, or was the last and left goals)."""
    tactic = thm.proof[depth]
    if not r.ok or r.state is None:
        report.failures.append(TraceFailure(theorem=thm.name, step=depth, tactic=tactic,
                                            status=r.status.value, message=r.message))
        return None
    after = r.state
    pairs[thm.name].append(TacticPair(theorem=thm.name, state_before=before.text, tactic=tactic,
                                      state_after=after.text, depth=depth, source=thm.source or source))
    last = depth == len(thm.proof) - 1
    if after.is_proved and not last:
        report.failures.append(TraceFailure(
            theorem=thm.name, step=depth, tactic=tactic, status=Status.TACTIC_ERROR.value,
            message=f"the proof is complete after {depth + 1} of {len(thm.proof)} tactics"))
        return None
    if last and not after.is_proved:
        report.failures.append(TraceFailure(
            theorem=thm.name, step=len(thm.proof), status=Status.TACTIC_ERROR.value,
            message=f"goals remain after the whole proof: {after.goals[0].splitlines()[-1]}"))
        return None
    return after


async def _recheck(env: ProofEnv, replayed: list[Theorem], bar: tqdm, report: TraceReport) -> None:
    """The whole proofs of ``replayed`` re-checked at once, counted into ``report``."""
    checks = await asyncio.gather(*(env.check_proof(t, t.proof) for t in replayed))
    for t, c in zip(replayed, checks, strict=True):
        bar.update(1)
        if c.ok:
            report.rechecked += 1
        else:
            report.failures.append(TraceFailure(
                theorem=t.name, step=len(t.proof), status="infra" if c.infra else "recheck_failed",
                message=c.errors[0] if c.errors else "rejected"))
