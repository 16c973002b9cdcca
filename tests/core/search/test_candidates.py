"""One candidate set for every searcher (issue 65): on the same states, baseline (c)'s candidates (the
structural policy's steps with the automation tactics, and the premise steps for "(c) with retrieval") are a
subset of the prover's (its policy's samples, the automation, the structural steps and the premise steps)."""

from __future__ import annotations

import asyncio

import pytest

from burnqed_core.config import AutomationConfig, PremiseStepsConfig, SearchConfig, StructuralStepsConfig, load_profile
from burnqed_core.eval.baselines.structural import search_config
from burnqed_core.policy.base import Candidate
from burnqed_core.policy.structural import StructuralPolicy
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.records import Premise
from burnqed_core.records import Theorem
from burnqed_core.search.automation import tactic_key
from burnqed_core.search.candidates import CandidateBuilder

PREAMBLE = """def dup : List Nat → List Nat
  | [] => []
  | x :: xs => x :: x :: dup xs

theorem dup_append (a b : List Nat) : dup (a ++ b) = dup a ++ dup b := by
  induction a <;> simp_all [dup]
"""
THEOREM = Theorem(name="dup_len", statement="(a : List Nat) : (dup a).length = 2 * a.length", preamble=PREAMBLE)
STATES = [
    "⊢ ∀ (a : List Nat), (dup a).length = 2 * a.length",
    "a : List Nat\n⊢ (dup a).length = 2 * a.length",
    "a b : List Nat\nh : a.length = b.length ∧ b ≠ []\n⊢ (dup (a ++ b)).length = 2 * (a ++ b).length ∨ a = b",
    "x : Nat\nxs : List Nat\nih : (dup xs).length = 2 * xs.length\n⊢ (dup (x :: xs)).length = 2 * (xs.length + 1)",
    "n m : Nat\n⊢ ∃ k, n + m = k ∧ k = m + n",
]
LIBRARY = PremiseIndex([Premise(name="List.length_append", module="L",
                                type="(a ++ b).length = a.length + b.length"),
                        Premise(name="Nat.mul_succ", module="L", type="n * Nat.succ m = n * m + n")],
                       {"L": []})
AUTOMATION = AutomationConfig(enabled=True, tactics=["simp_all", "omega", "decide", "grind"])


def prover_config() -> SearchConfig:
    return SearchConfig(automation=AUTOMATION, structural=StructuralStepsConfig(enabled=True),
                        premises=PremiseStepsConfig(enabled=True, k=3))


def tactics(builder: CandidateBuilder, policy: list[Candidate], state: str, depth: int) -> set[str]:
    return {tactic_key(c.tactic) for c in builder.build(policy, state, depth)}


@pytest.mark.parametrize("retrieval", [False, True])
@pytest.mark.parametrize("seeded", [False, True])
def test_baseline_c_candidates_are_a_subset_of_the_provers(retrieval: bool, seeded: bool) -> None:
    profile = load_profile("tiny").model_copy(update={"search": prover_config()})
    c_config = search_config(profile, retrieval=retrieval)
    assert not c_config.structural.enabled and c_config.premises.enabled is retrieval
    c_builder = CandidateBuilder(c_config, THEOREM, LIBRARY)
    prover = CandidateBuilder(profile.search, THEOREM, LIBRARY)
    structural = StructuralPolicy(seeded=seeded)
    model = [Candidate(tactic="rw [foo]", logprob=-0.1, num_tokens=3), Candidate(tactic="simp", logprob=-1,
                                                                                num_tokens=1)]
    for depth, state in enumerate(STATES):
        (c_policy,) = asyncio.run(structural.generate([state], 8, 1.0, seeds=[depth + 7]))
        c = tactics(c_builder, c_policy, state, depth)
        p = tactics(prover, model, state, depth)
        assert c, state
        assert c <= p, (state, sorted(c - p))
        assert {"rw [foo]", "simp"} <= p  # the policy's own samples on top
        if retrieval:
            assert any(t.startswith(("rw [", "simp only [")) and "dup_append" in t for t in c)


def test_sources_and_dedup() -> None:
    b = CandidateBuilder(prover_config(), THEOREM, LIBRARY)
    policy = [Candidate(tactic="intro a", logprob=-0.5, num_tokens=2), Candidate(tactic="omega", logprob=-3,
                                                                                num_tokens=1)]
    out = b.build(policy, STATES[0], 0)
    by = {c.tactic: c.source for c in out}
    assert by["intro a"] == "policy"  # also a structural step: kept once, as the policy's
    assert by["omega"] == "both"
    assert by["simp_all"] == "automation"
    assert by["rw [dup_append]"] == "premise" and by["simp only [dup_append]"] == "premise"
    assert "exact dup" not in by  # a definition is unfolded, never applied
    assert len(by) == len(out)
    assert b.premises_retrieved > 0


def test_without_the_new_sources_the_set_is_the_old_one() -> None:
    old = CandidateBuilder(SearchConfig(automation=AUTOMATION), THEOREM, None)
    out = old.build([Candidate(tactic="intro a", logprob=-0.5, num_tokens=2)], STATES[0], 0)
    assert {c.source for c in out} == {"policy", "automation"}
