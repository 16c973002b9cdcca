"""The pool on the shared embedded worker: states, batching, checker verdicts."""

from __future__ import annotations

import pytest

from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.types import Status
from burnqed_core.records import Theorem

pytestmark = [pytest.mark.lean]

AND = Theorem(name="and_intro", statement="(p q : Prop) (hp : p) (hq : q) : p ∧ q",
              proof=["constructor", "exact hp", "exact hq"])
# A user name that exists in Init: the pool must not clash with it.
CLASH = Theorem(name="Nat.add_comm", statement="(a b : Nat) : a + b = b + a", proof=["omega"])
DEFS = Theorem(
    name="double_even",
    preamble="def double (n : Nat) : Nat := n + n\n\ntheorem double_zero : double 0 = 0 := rfl",
    statement="(n : Nat) : double n = 2 * n",
    proof=["unfold double", "omega"],
)


async def test_start_apply_and_finish(lean_pool: LeanPool) -> None:
    r = await lean_pool.start_proof(AND)
    assert r.ok and r.state is not None
    assert r.state.goals == ("p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q",)
    r = await lean_pool.apply(r.state, "constructor")
    assert r.ok and r.state is not None
    assert [g.splitlines()[0] for g in r.state.goals] == ["case left", "case right"]
    assert r.state.tactics == ("constructor",)
    r = await lean_pool.apply(r.state, "exact hp")
    assert r.ok and r.state is not None and len(r.state.goals) == 1 and r.state.goals[0].endswith("⊢ q")
    r = await lean_pool.apply(r.state, "exact hq")
    assert r.ok and r.state is not None and r.state.is_proved


async def test_failures_are_typed(lean_pool: LeanPool) -> None:
    start = await lean_pool.start_proof(AND)
    assert start.state is not None
    wrong, garbage, unfinished_bullet = await lean_pool.apply_many(
        [(start.state, "exact hq"), (start.state, "frobnicate the goal"), (start.state, "constructor\n· skip")])
    assert wrong.status is Status.TACTIC_ERROR and "hq" in wrong.message
    assert garbage.status is Status.PARSE_ERROR
    # a bullet that does not close its goal is an error, not a state with fewer goals
    assert unfinished_bullet.status is Status.TACTIC_ERROR and "unsolved goals" in unfinished_bullet.message
    bad = await lean_pool.start_proof(Theorem(name="bad", statement="(n : Nat) : n + (undefinedThing 1) = n"))
    assert bad.status is Status.START_ERROR and bad.state is None


async def test_batch_matches_one_at_a_time(lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lean_pool.verdicts, "capacity", 0)  # each single call is Lean's own answer, not a kept one
    start = await lean_pool.start_proof(Theorem(name="lt", statement="(a b : Nat) (h : a ≤ b) : a < b + 1"))
    assert start.state is not None
    candidates = ["omega", "rfl", "exact Nat.lt_succ_of_le h", "intro x", "simp", "constructor", "assumption",
                  "apply Nat.lt_of_le_of_lt h"]
    batched = await lean_pool.apply_many([(start.state, t) for t in candidates])
    single = [await lean_pool.apply(start.state, t) for t in candidates]
    assert [r.status for r in batched] == [r.status for r in single]
    assert [r.state.goals if r.state else None for r in batched] == [r.state.goals if r.state else None
                                                                      for r in single]
    assert batched[0].ok and batched[0].state is not None and batched[0].state.is_proved
    assert not batched[1].ok


async def test_mixed_theorems_and_preambles_in_one_call(lean_pool: LeanPool) -> None:
    s1 = (await lean_pool.start_proof(CLASH)).state
    s2 = (await lean_pool.start_proof(DEFS)).state
    assert s1 is not None and s2 is not None
    assert s2.goals == ("n : Nat\n⊢ double n = 2 * n",)
    r = await lean_pool.apply_many([(s1, "omega"), (s2, "unfold double"), (s1, "rfl"), (s2, "omega")])
    assert [x.status for x in r] == [Status.OK, Status.OK, Status.TACTIC_ERROR, Status.TACTIC_ERROR]
    assert r[0].state is not None and r[0].state.is_proved
    assert r[1].state is not None and r[1].state.goals == ("n : Nat\n⊢ n + n = 2 * n",)
    done = await lean_pool.apply(r[1].state, "omega")
    assert done.ok and done.state is not None and done.state.is_proved


async def test_multiline_tactic(lean_pool: LeanPool) -> None:
    thm = Theorem(name="zero_add", statement="(n : Nat) : 0 + n = n")
    s = (await lean_pool.start_proof(thm)).state
    assert s is not None
    r = await lean_pool.apply(s, "induction n with\n| zero => rfl\n| succ n ih => omega")
    assert r.ok and r.state is not None and r.state.is_proved
    r = await lean_pool.apply(s, "induction n")
    assert r.ok and r.state is not None and len(r.state.goals) == 2
    r = await lean_pool.apply(r.state, "· rfl")
    assert r.ok and r.state is not None and len(r.state.goals) == 1 and r.state.goals[0].startswith("case succ")


async def test_checker_verdicts(lean_pool: LeanPool) -> None:
    assert (await lean_pool.check_proof(AND, AND.proof)).ok
    assert (await lean_pool.check_proof(CLASH, CLASH.proof)).ok
    assert (await lean_pool.check_proof(DEFS, DEFS.proof)).ok
    wrong = await lean_pool.check_proof(AND, ["constructor", "exact hp"])
    assert not wrong.ok and not wrong.infra and any("unsolved goals" in e for e in wrong.errors)
    for cheat in (["sorry"], ["constructor", "exact hp", "sorry"], ["admit"]):
        res = await lean_pool.check_proof(AND, cheat)
        assert not res.ok, cheat
    false = Theorem(name="false", statement="(n : Nat) : n + 1 = n")
    assert not (await lean_pool.check_proof(false, ["omega"])).ok
    assert not (await lean_pool.check_proof(false, ["native_decide"])).ok


async def test_stats(lean_pool: LeanPool) -> None:
    s = lean_pool.stats()
    assert s.workers == 1 and s.requests > 0 and s.latency_p50_s > 0
    assert s.by_status.get("ok", 0) > 0
    assert s.rss_mb[0] > 1000


HOSTILE = [
    "run_tac (do IO.println \"hi\")",
    "#eval IO.Process.run {cmd := \"id\"}",
    "#exit",
    "exact (unsafeCast 0)",
    "set_option maxHeartbeats 0 in omega",
    "omega\ntheorem evil : False := sorry",
    "omega\naxiom cheat : False",
    "sorry",
    "native_decide",
    "simp /- unterminated comment",
    "x" * 5000,
]


async def test_hostile_tactics_never_reach_lean(lean_pool: LeanPool) -> None:
    start = await lean_pool.start_proof(AND)
    assert start.state is not None
    requests = lean_pool.stats().requests
    results = await lean_pool.apply_many([(start.state, t) for t in HOSTILE])
    assert [r.status for r in results] == [Status.REJECTED] * len(HOSTILE)
    assert all(r.message for r in results)
    assert lean_pool.stats().requests == requests
    # mixed with legitimate tactics, only the hostile ones are refused
    mixed = await lean_pool.apply_many([(start.state, "constructor"), (start.state, "#exit"),
                                        (start.state, "exact ⟨hp, hq⟩")])
    assert [r.status for r in mixed] == [Status.OK, Status.REJECTED, Status.OK]


async def test_self_test_refuses_a_wrong_answer(lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch) -> None:
    from burnqed_core.errors import LeanSetupError
    from burnqed_core.lean import pool as pool_mod

    await lean_pool.self_test()  # right answers: passes
    # A "known-bad" theorem that Lean in fact proves must make the self-test refuse.
    monkeypatch.setattr(pool_mod, "SELF_TEST_BAD", Theorem(name="b", statement="(n : Nat) : n + 0 = n",
                                                           proof=["omega"]))
    with pytest.raises(LeanSetupError, match="self-test failed"):
        await lean_pool.self_test()


async def test_a_calls_limit_is_the_workers_limit(lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """No silent limit under the caller's: with the worker's own default wait cut to almost nothing, a whole
    source and a tactic batch given the pool's limits still get their answers (a 150-line document of the suite
    once ran into the worker's 120 s default under a 600 s limit of its caller, on a loaded box)."""
    worker = lean_pool.backend(0).worker
    monkeypatch.setattr(worker, "timeout_s", 0.001)
    diags = await lean_pool.check_source("example : (5:Nat) + 5 = 10 := by decide\n", timeout_s=60)
    assert not [d for d in diags if d.is_error], diags
    t = Theorem(name="lim", statement="(n : Nat) : n + 0 = n")
    started = await lean_pool.start_proof(t)
    assert started.status is Status.OK, started.message
    assert lean_pool.backend(0).worker is worker  # the same process answered: no restart
