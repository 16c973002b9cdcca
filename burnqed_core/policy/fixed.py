"""A policy that proposes the same tactics for every state.

The automation-only baseline: every solve rate is reported beside what the
automation tactics (``omega``, ``simp``, ``decide``, ``grind`` ...) find by
themselves under the same search, so the search must be able to run with
them as its "policy". Each tactic gets the same logprob (uniform over the
list), so the best-first order is breadth-first by depth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from burnqed_core.data.pairs.prompt import normalize_tactic
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Candidate, check_seeds


class FixedTacticsPolicy:
    """Proposes ``tactics`` (all of them, whatever ``n``) with uniform logprobs."""

    def __init__(self, tactics: Sequence[str]) -> None:
        cleaned = [normalize_tactic(t) for t in tactics]
        cleaned = list(dict.fromkeys(t for t in cleaned if t))
        if not cleaned:
            raise PolicyError("a fixed-tactics policy needs at least one non-empty tactic")
        self.tactics = cleaned
        self.name = "fixed:" + ",".join(cleaned)
        lp = -math.log(len(cleaned))
        self._candidates = [Candidate(tactic=t, logprob=lp, num_tokens=1) for t in cleaned]

    async def generate(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
    ) -> list[list[Candidate]]:
        """Every tactic for every state; ``n``, ``temperature``,
        ``max_new_tokens`` and ``seeds`` do not apply to a fixed list (it is
        deterministic whatever they are)."""
        check_seeds(states, seeds)
        return [list(self._candidates) for _ in states]

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        raise PolicyError("the fixed-tactics policy has no encoder: run the EBM with a model policy")

    async def close(self) -> None:
        return None
