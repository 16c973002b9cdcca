"""Lean's answers to tactic applications, kept for reuse within one process.

Where a proof state is its text (the embedded backend: a state is the
preamble, the statement and the tactic path, re-elaborated on every use), the
answer to applying a tactic is a function of that text and of the Lean
settings of the process: the same (preamble, statement, path, tactic) always
gets the same verdict, in a block of its own that no other candidate can
reach. The searches of one run ask the same questions many times: the eval's
policy-alone and policy + automation variants share their root expansions,
every iteration's eval tries the same automation tactics on the same roots,
and every search starts each theorem anew. `VerdictCache` answers those from
memory.

Only Lean's own verdicts are kept (``ok``, tactic, parse and start errors):
never an infrastructure failure (timeout, crash) or an answer of the pool's
retry path, and never a whole-proof check (`LeanPool.check_proof` always asks
Lean and its trusted checker). A hit is rebuilt for the asking state's own
theorem, so a theorem never sees another's name. Bounded, least recently used
first out.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from burnqed_core.lean.judge import checker_fingerprint
from burnqed_core.lean.types import GoalState, Status, TacticResult
from burnqed_core.records import Theorem

Key = tuple[str, str, str, tuple[str, ...]]

# Verdicts that belong to the text: Lean's answer, whatever process gave it.
KEPT = frozenset({Status.OK, Status.TACTIC_ERROR, Status.PARSE_ERROR, Status.START_ERROR})


@dataclass(frozen=True, slots=True)
class _Answer:
    status: Status
    goals: tuple[str, ...]
    message: str


class VerdictCache:
    """Least-recently-used map from (checker, preamble, statement, tactic path) to Lean's answer: keyed by the
    checker's sources too (`judge.checker_fingerprint`), so that an answer of another checker is never served."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.checker = checker_fingerprint()
        self._answers: OrderedDict[Key, _Answer] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._answers)

    def key(self, theorem: Theorem, path: tuple[str, ...]) -> Key:
        return (self.checker, theorem.preamble, theorem.statement, path)

    def get(self, theorem: Theorem, path: tuple[str, ...]) -> TacticResult | None:
        """The kept answer for ``path`` on ``theorem`` (its state built for this theorem), or None."""
        if self.capacity <= 0:
            return None
        k = self.key(theorem, path)
        a = self._answers.get(k)
        if a is None:
            self.misses += 1
            return None
        self._answers.move_to_end(k)
        self.hits += 1
        state = GoalState(theorem=theorem, tactics=path, goals=a.goals) if a.status is Status.OK else None
        return TacticResult(status=a.status, state=state, message=a.message)

    def put(self, theorem: Theorem, path: tuple[str, ...], result: TacticResult) -> None:
        """Keep ``result`` if it is Lean's own verdict on the text."""
        if self.capacity <= 0 or result.retried or result.status not in KEPT:
            return
        if result.status is Status.OK and result.state is None:
            return
        goals = result.state.goals if result.state is not None else ()
        k = self.key(theorem, path)
        self._answers[k] = _Answer(result.status, goals, result.message)
        self._answers.move_to_end(k)
        while len(self._answers) > self.capacity:
            self._answers.popitem(last=False)
