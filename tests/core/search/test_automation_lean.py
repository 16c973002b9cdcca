"""Automation tactics as search candidates on the real embedded Lean (the
session `lean_pool`): a theorem over definitions of its own (names in none
of the bundled sets) that needs a structural step (``induction n``) before
the automation can close it. The policy (a fixed list) knows the structural
step but not the definition-aware automation; with the automation candidates
the search proves it, without them it cannot at the same budget. The eval
writes both variants."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from burnqed_core.config import AutomationConfig, SearchConfig, load_profile
from burnqed_core.eval.report import format_table
from burnqed_core.eval.run import attempt_dir, read_eval_results, run_variants, variant_rows
from burnqed_core.eval.summary import SummaryOptions, summarize_variants
from burnqed_core.lean.types import GoalState, ProofEnv, TacticResult
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine
from burnqed_core.trajectory_io import read_trajectories

pytestmark = pytest.mark.lean

PREAMBLE = """def quorble : Nat → Nat
  | 0 => 0
  | n + 1 => quorble n + 3

def zindle (n : Nat) : Nat := n + 1
"""
QUORBLE = Theorem(name="quorble_eq", statement="(n : Nat) : quorble n = 3 * n", preamble=PREAMBLE)
AUTOMATION = AutomationConfig(enabled=True, tactics=["simp_all", "omega", "decide"],
                              defaware=["simp_all [{defs}]", "grind [{defs}]"], prior_logprob=-1.0)


class SpyEnv:
    """The real Lean pool; records every (state, tactic) the search sends it."""

    def __init__(self, pool: ProofEnv) -> None:
        self.pool = pool
        self.tried: list[tuple[str, str]] = []

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        return await self.pool.start_proof(theorem)

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        self.tried.extend((s.text, t) for s, t in items)
        return await self.pool.apply_many(items)

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str]) -> object:
        return await self.pool.check_proof(theorem, tactics)  # type: ignore[attr-defined]

    async def free(self, states: Sequence[GoalState]) -> None:
        await self.pool.free(states)


def config(automation: AutomationConfig) -> SearchConfig:
    return SearchConfig(max_nodes=10, max_depth=6, frontier_batch=2, concurrency=1, timeout_s=300,
                        automation=automation)


async def test_automation_candidates_prove_what_the_policy_alone_cannot(lean_pool: ProofEnv) -> None:
    policy = FixedTacticsPolicy(["induction n", "decide"])  # decide: also an automation tactic
    spy = SpyEnv(lean_pool)
    out = await SearchEngine(policy, spy, config(AUTOMATION), check_invariants=True).search(QUORBLE)  # type: ignore[arg-type]
    r = out.result
    assert r.proved, r
    assert r.proof[0] == "induction n" and r.proof_sources[0] == "policy"
    assert "automation" in r.proof_sources  # a definition-aware step only the automation proposed
    assert (await lean_pool.check_proof(QUORBLE, r.proof)).ok  # type: ignore[attr-defined]
    # deduplicated: `decide` (policy and automation) is one candidate, marked 'both'
    assert r.candidates_max == 6  # induction n, decide, simp_all, omega + 2 templates
    per_state: dict[str, list[str]] = {}
    for state, tactic in spy.tried:
        per_state.setdefault(state, []).append(tactic)
    assert all(tactics.count("decide") == 1 for tactics in per_state.values())
    assert all(len(set(tactics)) == len(tactics) for tactics in per_state.values())
    # definition-aware candidates name the definitions the goal mentions, never the others
    aware = [t for _, t in spy.tried if "[" in t]
    assert aware and all(t in ("simp_all [quorble]", "grind [quorble]") for t in aware), aware
    assert not any("zindle" in t for _, t in spy.tried)
    # every node carries its origin; the proof path's positives too
    by_id = {rec.node_id: rec for rec in out.records}
    assert by_id[0].source == ""
    assert {rec.source for rec in out.records if rec.node_id} <= {"policy", "automation", "both"}
    positives = [rec for rec in out.records if rec.label == "positive" and rec.node_id]
    assert [rec.source for rec in positives] == r.proof_sources

    # the policy alone, same budget: no proof
    alone = await SearchEngine(policy, lean_pool, config(AutomationConfig())).search(QUORBLE)
    assert not alone.result.proved and alone.result.automation_tried == 0
    assert {rec.source for rec in alone.records if rec.node_id} <= {"policy"}


async def test_eval_writes_policy_alone_beside_policy_plus_automation(lean_pool: ProofEnv, tmp_path: Path) -> None:
    prof = load_profile("tiny", overrides={
        "search.concurrency": 2, "search.frontier_batch": 2, "search.max_depth": 6, "search.flush_every": 1,
        "eval.budgets": [4, 10], "eval.pass_k": 1, "search.automation": AUTOMATION.model_dump()})
    theorems = [QUORBLE, Theorem(name="comm", statement="(a b : Nat) : a + b = b + a")]
    policy = FixedTacticsPolicy(["induction n", "decide"])
    await run_variants(prof, policy, lean_pool, theorems, tmp_path, iteration=0, benchmark="tests",
                       progress=False, handle_signals=False)
    rows = variant_rows(read_eval_results(tmp_path), prof, None)
    got = {(r.theorem, r.search_automation): r.proved for r in rows}
    assert got == {("quorble_eq", True): True, ("comm", True): True,
                   ("quorble_eq", False): False, ("comm", False): False}
    assert read_trajectories(attempt_dir(tmp_path, "policy_automation", 0))
    assert read_trajectories(attempt_dir(tmp_path, "policy", 0))
    s = summarize_variants(rows, None, SummaryOptions(iteration=0, benchmark="tests", budgets=[4, 10]))
    assert s.automation and s.cumulative.solved == 2
    assert s.policy_only is not None and s.policy_only.cumulative.solved == 0
    assert "policy alone (no automation candidates)" in format_table(s)


async def test_baseline_at_root_proves_what_baseline_b_proves(lean_pool: ProofEnv) -> None:
    """A policy with nothing useful to say: with ``baseline_at_root`` the root
    tries baseline (b)'s `induction n <;> ... [quorble]` and the proof is that
    one automation step (marked so, and left out of training by the mix)."""
    policy = FixedTacticsPolicy(["rfl"])
    cfg = AutomationConfig(enabled=True, tactics=[], defaware=[], baseline_at_root=True)
    out = await SearchEngine(policy, lean_pool, config(cfg), check_invariants=True).search(QUORBLE)
    r = out.result
    assert r.proved, r
    assert r.proof in (["induction n <;> simp_all [quorble]"], ["induction n <;> grind [quorble]"])
    assert r.proof_sources == ["automation"]
    assert (await lean_pool.check_proof(QUORBLE, r.proof)).ok  # type: ignore[attr-defined]
    without = cfg.model_copy(update={"baseline_at_root": False})
    assert not (await SearchEngine(policy, lean_pool, config(without)).search(QUORBLE)).result.proved


async def test_baseline_c_structural_steps_with_automation_prove_an_induction(lean_pool: ProofEnv) -> None:
    """Baseline (c): no learned policy, the structural steps of each goal
    plus the same automation candidates, in the same engine. It finds the
    induction, and the automation closes the cases; its first step is the
    enumerator's (attributed to the policy slot), the rest automation."""
    from burnqed_core.policy.structural import StructuralPolicy, structural_steps

    start = await lean_pool.start_proof(QUORBLE)
    assert start.state is not None
    root_steps = structural_steps(start.state.text)
    assert "induction n" in root_steps and "fun_induction quorble" in root_steps
    out = await SearchEngine(StructuralPolicy(), lean_pool, config(AUTOMATION),  # type: ignore[arg-type]
                             check_invariants=True).search(QUORBLE)
    r = out.result
    assert r.proved, r
    assert r.proof[0] in root_steps and r.proof_sources[0] == "policy"
    assert set(r.proof_sources[1:]) <= {"automation", "both"} and len(r.proof) >= 2
