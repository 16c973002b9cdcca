"""FixedTacticsPolicy: the automation-only baseline's policy."""

from __future__ import annotations

import math

import pytest

from burnqed_core.config import load_profile
from burnqed_core.errors import PolicyError, ProfileError
from burnqed_core.policy.base import Policy, dedup_candidates
from burnqed_core.policy.factory import make_policy
from burnqed_core.policy.fixed import FixedTacticsPolicy


async def test_every_state_gets_every_tactic_with_uniform_logprob() -> None:
    p = FixedTacticsPolicy(["omega", " simp ", "omega", "", "decide"])
    assert isinstance(p, Policy)
    out = await p.generate(["⊢ True", "n : Nat\n⊢ n = n"], n=2, temperature=0.8)
    assert len(out) == 2
    for per in out:
        assert [c.tactic for c in per] == ["omega", "simp", "decide"]
        assert all(c.logprob == pytest.approx(-math.log(3)) and c.num_tokens == 1 for c in per)
        assert len(dedup_candidates(per)) == 3
    assert await p.generate([], 4, 1.0) == []
    with pytest.raises(PolicyError, match="no encoder"):
        await p.encode(["x"])


def test_empty_list_is_a_user_error() -> None:
    with pytest.raises(PolicyError, match="at least one"):
        FixedTacticsPolicy(["", "  "])


async def test_factory_fixed_backend_uses_profile_tactics() -> None:
    profile = load_profile("tiny", overrides={"policy.backend": "fixed", "policy.fixed_tactics": ["grind", "rfl"]})
    p = make_policy(profile)
    assert isinstance(p, FixedTacticsPolicy) and p.tactics == ["grind", "rfl"]
    default = make_policy(load_profile("tiny", overrides={"policy.backend": "fixed"}))
    assert "omega" in default.tactics and "decide" in default.tactics  # type: ignore[attr-defined]
    with pytest.raises(ProfileError, match=r"policy\.backend"):
        load_profile("tiny", overrides={"policy.backend": "vllm"})
