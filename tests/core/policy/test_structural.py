"""Baseline (c)'s policy: structural steps read off the goal, no learning.
The parse and the enumeration here; a search on real Lean in
`test_search_automation_lean.py`."""

from __future__ import annotations

import pytest

from burnqed_core.config import load_profile
from burnqed_core.errors import PolicyError
from burnqed_core.policy.factory import make_policy
from burnqed_core.policy.structural import StructuralPolicy, main_goal, structural_steps

STATE = """case succ
xs ys : List Nat
n : Nat
inst✝ : DecidableEq Nat
α : Type
h : xs.length = n ∧ ys = []
ih : n ≤ 3
⊢ glorp xs (frob ys) = n + 1

n : Nat
⊢ True"""


def test_main_goal_is_read_off_the_first_goal() -> None:
    g = main_goal(STATE)
    assert g.data == ["xs", "ys", "n"]  # the type variable and the inaccessible instance are skipped
    assert g.props == [("h", "xs.length = n ∧ ys = []"), ("ih", "n ≤ 3")]
    assert g.target == "glorp xs (frob ys) = n + 1"


def test_structural_steps_of_a_goal() -> None:
    steps = structural_steps(STATE)
    assert steps[:3] == ["induction xs", "cases xs", "induction xs generalizing ys"]
    assert "induction n generalizing xs" in steps and "fun_induction glorp" in steps
    assert "fun_induction frob" in steps and "cases h" in steps and "cases ih" not in steps
    assert not any(s.startswith(("fun_induction xs", "fun_induction n", "intro")) for s in steps)
    assert len(steps) == len(set(steps))
    assert structural_steps("⊢ ∀ (a b : Nat), a + b = b + a")[0] == "intro a b"
    assert structural_steps("p q : Prop\n⊢ p ∧ q → q ∧ p")[0] == "intro h"
    assert structural_steps("p q : Prop\nhp : p\n⊢ p ∨ q")[-2:] == ["left", "right"]
    assert "split" in structural_steps("b : Bool\n⊢ (if b = true then 1 else 2) ≥ 1")
    assert "constructor" in structural_steps("⊢ ∃ n, n > 0")
    assert structural_steps(STATE, limit=2) == ["induction xs", "cases xs"]
    assert structural_steps("⊢ True") == []


async def test_policy_uniform_deterministic_and_from_the_profile() -> None:
    policy = StructuralPolicy()
    out = await policy.generate([STATE, "⊢ True"], n=4, temperature=1.0)
    assert [c.tactic for c in out[0]] == structural_steps(STATE) and out[1] == []
    assert len({c.logprob for c in out[0]}) == 1
    assert out == await policy.generate([STATE, "⊢ True"], n=1, temperature=0.0)
    with pytest.raises(PolicyError):
        await policy.encode(["x"])
    with pytest.raises(PolicyError):
        StructuralPolicy(limit=0)
    profile = load_profile("tiny", overrides={"policy.backend": "structural"})
    assert isinstance(make_policy(profile), StructuralPolicy)
