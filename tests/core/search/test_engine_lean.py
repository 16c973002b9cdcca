"""The search on the real embedded Lean (session `lean_pool`) with real
policies: the automation tactics as a fixed policy, and a tiny Llama
trained here for a few seconds on (state, tactic) pairs of the theorems."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from burnqed_core.config import SearchConfig
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine, SearchOutcome

pytestmark = pytest.mark.lean

THEOREMS = [
    Theorem(name="add_zero", statement="(n : Nat) : n + 0 = n"),
    Theorem(name="two_two", statement=": 2 + 2 = 4"),
    Theorem(name="imp_self", statement="(p : Prop) : p → p"),
    Theorem(name="and_swap", statement="(p q : Prop) (h : p ∧ q) : q ∧ p"),
    Theorem(name="false_succ", statement="(n : Nat) : n + 1 = n"),
    Theorem(name="not_lean", statement="(n : Nat) : n + = n"),
    Theorem(name="double", statement="(n : Nat) : double n = n + n",
            preamble="def double : Nat → Nat\n  | 0 => 0\n  | n + 1 => double n + 2"),
]
AUTOMATION = ["omega", "decide", "simp", "intro h", "exact h", "constructor", "exact h.2", "exact h.1",
              "induction n", "simp [double]"]


def config(**kw: object) -> SearchConfig:
    base: dict[str, object] = dict(max_nodes=24, max_depth=6, num_candidates=8, timeout_s=120.0,
                                   frontier_batch=8, concurrency=4)
    base.update(kw)
    return SearchConfig(**base)


def check_records(o: SearchOutcome) -> None:
    recs = o.records
    if o.result.error == "start":
        assert recs == []
        return
    assert [r.node_id for r in recs] == list(range(len(recs))) and len(recs) == o.result.nodes
    assert recs[0].parent_id == -1 and recs[0].tactic == "" and recs[0].state == recs[0].goal
    assert all(r.proved == o.result.proved and r.theorem == o.result.theorem for r in recs)
    non_terminal = [r.state for r in recs if r.state]
    assert len(non_terminal) == len(set(non_terminal)), "transposition table let a state in twice"
    pos = [r for r in recs if r.label == "positive"]
    if o.result.proved:
        # the positive rows are exactly the proof path, root to the closing node
        assert [r.tactic for r in pos][1:] == o.result.proof
        assert pos[-1].terminal and pos[-1].state == ""
        assert all(b.parent_id == a.node_id for a, b in itertools.pairwise(pos))
    else:
        assert pos == []


async def test_fixed_automation_policy_on_lean(lean_pool: object) -> None:
    engine = SearchEngine(FixedTacticsPolicy(AUTOMATION), lean_pool, config(), check_invariants=True)  # type: ignore[arg-type]
    outs = {o.result.theorem: o async for o in engine.search_many(THEOREMS)}
    assert set(outs) == {t.name for t in THEOREMS}
    proved = {n for n, o in outs.items() if o.result.proved}
    assert {"add_zero", "two_two", "imp_self", "and_swap"} <= proved
    assert "false_succ" not in proved
    bad = outs["not_lean"].result
    assert bad.error == "start" and bad.stop == "start_error" and outs["not_lean"].records == []
    assert outs["false_succ"].result.error == "" and outs["false_succ"].result.stop in ("exhausted", "max_nodes")
    assert outs["and_swap"].result.proof[0] == "constructor" and len(outs["and_swap"].result.proof) == 3
    for o in outs.values():
        check_records(o)
    # every proof passes the whole-theorem check again, independently of the search
    for name in proved:
        thm = next(t for t in THEOREMS if t.name == name)
        assert (await lean_pool.check_proof(thm, outs[name].result.proof)).ok  # type: ignore[attr-defined]
    # imp_self: simp closes it at once; its sibling "intro h" (⊢ p with h : p) is off the proof path
    imp = outs["imp_self"]
    assert imp.result.proof == ["simp"]
    sibling = next(r for r in imp.records if r.tactic == "intro h")
    assert sibling.parent_id == 0 and sibling.label == "negative"
    st = engine.stats
    assert st.apply_calls < st.pairs_applied  # tactics were checked in batches
    assert st.lean_s > st.engine_s




@pytest.fixture(scope="module")
def trained_model(search_model: Path) -> Path:
    return search_model


async def test_tiny_trained_model_proves_the_trivial_theorems(lean_pool: object, trained_model: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy

    policy = LocalPolicy(trained_model, batch_size=64, max_new_tokens=12, seed=0)
    theorems = [t for t in THEOREMS if t.name in ("add_zero", "two_two", "imp_self", "false_succ")]
    engine = SearchEngine(policy, lean_pool, config(max_nodes=16, temperature=1.0), check_invariants=True)  # type: ignore[arg-type]
    outs = {o.result.theorem: o async for o in engine.search_many(theorems)}
    proved = {n for n, o in outs.items() if o.result.proved}
    assert {"add_zero", "two_two", "imp_self"} <= proved, {n: o.result for n, o in outs.items()}
    assert "false_succ" not in proved
    assert outs["imp_self"].result.proof[-1] == "exact h" and len(outs["imp_self"].result.proof) == 2
    for o in outs.values():
        check_records(o)
        r = o.result
        # sampled, then deduplicated: between 1 and n unique candidates per expansion
        assert 1 <= r.candidates_min <= r.candidates_avg <= r.candidates_max <= 8
        assert r.policy_s > 0 and r.lean_s > 0
        assert all(rec.logprob <= 0 for rec in o.records)
