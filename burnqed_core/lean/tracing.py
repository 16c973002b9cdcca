"""Replay known proofs through Lean into tactic pairs.

For every theorem with a known proof (`Theorem.proof`), the proof is applied
tactic by tactic, recording (state before, tactic, state after, depth) as a
`TacticPair`, and then the whole proof is re-checked as one source. This is
how the tiny profile gets its base pairs, and how a user validates a traced
corpus (e.g. LeanDojo's) against their own Lean: a theorem that does not
replay, or replays but fails the re-check, is a failure in the report, and
`burnqed lean trace` exits non-zero on any.

On a backend that reads goals at positions (the embedded one: `ProofEnv`
``reads_goals``), the states come from the re-check itself: the whole proof
is elaborated once, as `checker.check_proof` judges it, and Lean's goals at
the first character of each tactic are the states before it (the state after
the last tactic is "no goals"). Measured on the 355 bundled corpus theorems:
the same 866 pairs, character for character, as the step-by-step replay, in
one elaboration per theorem instead of a start, one step per tactic and the
re-check. A theorem this fast path does not accept (a failing proof, a state
Lean does not report) is replayed step by step, so that its failure names
the step; so is a proof with a ``case tag =>`` step (`focuses_by_tag`), where
Lean's goals at the step's first character are the focused goal alone.

Steps are batched across theorems: step k of every theorem still replaying
goes to Lean in one `apply_many` call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field
from tqdm import tqdm

from burnqed_core.lean.checker import reads_goals
from burnqed_core.lean.types import CheckResult, GoalState, ProofEnv, Status
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
    one_pass: int = Field(0, description="theorems traced from their accepting re-check alone (no step replay)")
    pairs: int = 0
    failures: list[TraceFailure] = Field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def focuses_by_tag(tactic: str) -> bool:
    """``case tag ... =>`` (or ``case'``, ``next``): Lean reports the goals at its first character as the
    focused goal alone, not the goals before it (which the step replay, and the search, see: every goal with
    its case tag). A proof with such a step is replayed step by step."""
    head = tactic.split(maxsplit=1)[0] if tactic.strip() else ""
    return head in ("case", "case'", "next")


async def _start_all(env: ProofEnv, theorems: Sequence[Theorem]) -> list[GoalState | TraceFailure]:
    results = await asyncio.gather(*(env.start_proof(t) for t in theorems))
    out: list[GoalState | TraceFailure] = []
    for t, r in zip(theorems, results, strict=True):
        if r.ok and r.state is not None:
            out.append(r.state)
        else:
            out.append(TraceFailure(theorem=t.name, step=-1, status=r.status.value, message=r.message))
    return out


async def trace_theorems(env: ProofEnv, theorems: Sequence[Theorem], recheck: bool = True,
                         progress: bool = False, source: str = "trace") -> tuple[list[TacticPair], TraceReport]:
    """Replay the known proofs of ``theorems``; (pairs of fully replayed and
    re-checked theorems, report). Theorems without a proof are counted and
    skipped."""
    t0 = time.monotonic()
    with_proof = [t for t in theorems if t.proof]
    report = TraceReport(theorems=len(theorems), without_proof=len(theorems) - len(with_proof))
    fast: dict[str, list[TacticPair]] = {}
    if recheck and with_proof and reads_goals(env):
        fast = await _trace_from_checks(env, with_proof, source, progress)
        report.replayed = report.rechecked = report.one_pass = len(fast)
    rest = [t for t in with_proof if t.name not in fast]
    if rest and fast:
        log.info("%d theorems not accepted by the one-pass trace: replayed step by step", len(rest))
    pairs, report = await _replay(env, rest, recheck, progress, source, report)
    out = [p for t in with_proof for p in (fast.get(t.name) or pairs.get(t.name, []))]
    report.pairs = len(out)
    report.elapsed_s = round(time.monotonic() - t0, 2)
    log.info("traced %d/%d theorems into %d pairs in %.1fs (%d failures)", report.replayed - len(
        [f for f in report.failures if f.status in ("recheck_failed", "infra")]), len(with_proof), len(out),
        report.elapsed_s, len(report.failures))
    return out, report


async def _trace_from_checks(env: ProofEnv, theorems: Sequence[Theorem], source: str,
                             progress: bool) -> dict[str, list[TacticPair]]:
    """Theorem name -> its pairs, for the theorems whose whole-proof check
    accepted the proof and reported the state before every tactic."""
    theorems = [t for t in theorems if not any(focuses_by_tag(tac) for tac in t.proof)]
    bar = tqdm(total=len(theorems), desc="trace (one pass)", unit="thm", disable=not progress)

    async def one(t: Theorem) -> tuple[Theorem, CheckResult]:
        c = await env.check_proof(t, t.proof, states=True)  # type: ignore[call-arg]
        bar.update(1)
        return t, c

    out: dict[str, list[TacticPair]] = {}
    for t, c in await asyncio.gather(*(one(t) for t in theorems)):
        if not c.ok or c.states is None or len(c.states) != len(t.proof):
            continue
        texts = [GoalState(theorem=t, goals=g).text for g in c.states] + [""]  # as the search renders a state
        out[t.name] = [TacticPair(theorem=t.name, state_before=texts[k], tactic=tac, state_after=texts[k + 1],
                                  depth=k, source=t.source or source) for k, tac in enumerate(t.proof)]
    bar.close()
    return out


async def _replay(env: ProofEnv, with_proof: Sequence[Theorem], recheck: bool, progress: bool, source: str,
                  report: TraceReport) -> tuple[dict[str, list[TacticPair]], TraceReport]:
    """The step-by-step replay (then the re-check) of ``with_proof``, counted into ``report``."""
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
        results = []
        for k in range(0, len(todo), SLICE):
            part = todo[k:k + SLICE]
            results += await env.apply_many([(s, with_proof[i].proof[depth]) for i, s in part])
            bar.update(len(part))
        for (i, before), r in zip(todo, results, strict=True):
            thm = with_proof[i]
            tactic = thm.proof[depth]
            if not r.ok or r.state is None:
                report.failures.append(TraceFailure(theorem=thm.name, step=depth, tactic=tactic,
                                                    status=r.status.value, message=r.message))
                del active[i]
                continue
            after = r.state
            pairs[thm.name].append(TacticPair(theorem=thm.name, state_before=before.text, tactic=tactic,
                                              state_after=after.text, depth=depth, source=thm.source or source))
            last = depth == len(thm.proof) - 1
            if after.is_proved and not last:
                report.failures.append(TraceFailure(
                    theorem=thm.name, step=depth, tactic=tactic, status=Status.TACTIC_ERROR.value,
                    message=f"the proof is complete after {depth + 1} of {len(thm.proof)} tactics"))
                del active[i]
            elif last and not after.is_proved:
                report.failures.append(TraceFailure(
                    theorem=thm.name, step=len(thm.proof), status=Status.TACTIC_ERROR.value,
                    message=f"goals remain after the whole proof: {after.goals[0].splitlines()[-1]}"))
                del active[i]
            else:
                active[i] = after
        depth += 1
    failed = {f.theorem for f in report.failures}
    replayed = [t for t in with_proof if t.name not in failed]
    report.replayed += len(replayed)
    if recheck and replayed:
        checks = await asyncio.gather(*(env.check_proof(t, t.proof) for t in replayed))
        for t, c in zip(replayed, checks, strict=True):
            bar.update(1)
            if c.ok:
                report.rechecked += 1
            else:
                report.failures.append(TraceFailure(
                    theorem=t.name, step=len(t.proof), status="infra" if c.infra else "recheck_failed",
                    message=c.errors[0] if c.errors else "rejected"))
    bar.close()
    failed = {f.theorem for f in report.failures}
    return {t.name: pairs[t.name] for t in with_proof if t.name not in failed}, report
