"""The verdict cache: what it keeps, for whom it rebuilds an answer, and the pool on real Lean using it."""

from __future__ import annotations

import pytest

from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.types import GoalState, Status, TacticResult
from burnqed_core.lean.verdict_cache import VerdictCache
from burnqed_core.records import Theorem
from tests.fixtures_lean import tiny_lean_config

THM = Theorem(name="first", statement="(a b : Nat) : a + b = b + a")
TWIN = Theorem(name="second", statement=THM.statement)  # the same text under another name
OTHER = Theorem(name="third", preamble="def k : Nat := 1", statement=THM.statement)  # same statement, other preamble


def ok(theorem: Theorem, path: tuple[str, ...], goals: tuple[str, ...] = ()) -> TacticResult:
    return TacticResult(status=Status.OK, state=GoalState(theorem=theorem, tactics=path, goals=goals), elapsed_s=0.3)


def test_an_answer_is_rebuilt_for_the_theorem_that_asks() -> None:
    c = VerdictCache(10)
    assert c.get(THM, ("intro",)) is None and c.misses == 1
    c.put(THM, ("intro",), ok(THM, ("intro",), ("a b : Nat\n⊢ a + b = b + a",)))
    r = c.get(TWIN, ("intro",))
    assert r is not None and r.status is Status.OK and r.state is not None
    assert r.state.theorem == TWIN and r.state.tactics == ("intro",)
    assert r.state.goals == ("a b : Nat\n⊢ a + b = b + a",)
    assert r.elapsed_s == 0.0 and not r.retried and c.hits == 1
    # the preamble, the statement and every step of the path are the key
    assert c.get(OTHER, ("intro",)) is None
    assert c.get(THM, ("intro ",)) is None and c.get(THM, ("skip", "intro")) is None
    assert c.get(Theorem(name="x", statement="(a b : Nat) : b + a = a + b"), ("intro",)) is None


def test_only_lean_verdicts_are_kept() -> None:
    c = VerdictCache(10)
    c.put(THM, ("rfl",), TacticResult(status=Status.TACTIC_ERROR, message="The rfl tactic failed"))
    c.put(THM, ("frob",), TacticResult(status=Status.PARSE_ERROR, message="unknown tactic"))
    c.put(THM, (), TacticResult(status=Status.START_ERROR, message="unknown identifier"))
    c.put(THM, ("slow",), TacticResult(status=Status.TIMEOUT, message="no answer"))
    c.put(THM, ("died",), TacticResult(status=Status.CRASHED, message="the Lean process died"))
    c.put(THM, ("#exit",), TacticResult(status=Status.REJECTED, message="refused"))
    c.put(THM, ("omega",), ok(THM, ("omega",)).model_copy(update={"retried": True}))
    assert len(c) == 3
    err = c.get(TWIN, ("rfl",))
    assert err is not None and err.status is Status.TACTIC_ERROR and err.state is None
    assert err.message == "The rfl tactic failed"
    assert all(c.get(THM, (t,)) is None for t in ("slow", "died", "#exit", "omega"))


def test_least_recently_used_goes_first_and_zero_is_off() -> None:
    c = VerdictCache(2)
    for t in ("a", "b"):
        c.put(THM, (t,), ok(THM, (t,)))
    assert c.get(THM, ("a",)) is not None  # "a" is now the most recent
    c.put(THM, ("c",), ok(THM, ("c",)))
    assert len(c) == 2 and c.get(THM, ("b",)) is None and c.get(THM, ("a",)) is not None
    off = VerdictCache(0)
    off.put(THM, ("a",), ok(THM, ("a",)))
    assert len(off) == 0 and off.get(THM, ("a",)) is None


def test_only_text_states_are_cached() -> None:
    assert LeanPool(tiny_lean_config()).verdicts.capacity > 0
    assert LeanPool(tiny_lean_config(backend="pantograph")).verdicts.capacity == 0  # states are handles there


@pytest.mark.lean
async def test_the_pool_answers_a_repeated_question_without_lean(lean_pool: LeanPool) -> None:
    thm = Theorem(name="cache_probe", statement="(n : Nat) (h : 2 ≤ n) : 1 < n * n")
    first = await lean_pool.start_proof(thm)
    assert first.ok and first.state is not None
    asked = [(first.state, "omega"), (first.state, "exact h"), (first.state, "have : 0 < n := by omega")]
    before = lean_pool.stats()
    fresh = await lean_pool.apply_many(asked)
    mid = lean_pool.stats()
    assert mid.requests > before.requests and mid.cached == before.cached
    kept = await lean_pool.apply_many(asked)
    after = lean_pool.stats()
    assert after.requests == mid.requests and after.cached == mid.cached + 3  # no Lean call
    assert [r.status for r in kept] == [r.status for r in fresh]
    assert [r.state.goals if r.state else None for r in kept] == [r.state.goals if r.state else None for r in fresh]
    assert [r.message for r in kept] == [r.message for r in fresh]
    assert fresh[1].status is Status.TACTIC_ERROR and fresh[2].ok
    # a twin theorem starts from the kept root, with its own name in its states
    twin = await lean_pool.start_proof(thm.model_copy(update={"name": "cache_probe_twin"}))
    assert twin.ok and twin.state is not None and twin.state.theorem.name == "cache_probe_twin"
    assert lean_pool.stats().requests == after.requests
    step = await lean_pool.apply(twin.state, "have : 0 < n := by omega")
    assert step.state is not None and step.state.theorem.name == "cache_probe_twin"
    # a whole-proof check always asks Lean (and its trusted checker), even for a path the cache knows
    assert not (await lean_pool.check_proof(thm, ["exact h"])).ok
    assert lean_pool.stats().requests > after.requests
