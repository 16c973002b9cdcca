"""Node priority for best-first search, and the energy scorer interface.

priority = alpha x (cumulative logprob / depth) - beta x energy

The cumulative log-probability of the tactic path is normalised by its
length (number of tactics) so that deep nodes are not pushed to the back only
for being deep (BFS-Prover); the root scores 0. Energy comes from the EBM
(lower = more provable); without one, or with beta = 0, it is ignored.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class EnergyScorer(Protocol):
    """Scores proof states against the theorem's root goal (the EBM, a later
    issue). ``score`` may be a plain function or a coroutine function (an EBM
    that embeds through an async policy client)."""

    def score(self, states: list[str], goal: str) -> list[float] | Awaitable[list[float]]: ...


async def score_states(scorer: EnergyScorer, states: Sequence[str], goal: str) -> list[float]:
    """Call a sync or async scorer; check it returned one energy per state."""
    out = scorer.score(list(states), goal)
    if inspect.isawaitable(out):
        out = await out
    energies = [float(x) for x in out]
    if len(energies) != len(states):
        raise ValueError(f"energy scorer returned {len(energies)} energies for {len(states)} states")
    return energies


def normalized_logprob(cum_logprob: float, depth: int) -> float:
    return cum_logprob / depth if depth > 0 else 0.0


def priority(cum_logprob: float, depth: int, energy: float | None, alpha: float, beta: float) -> float:
    """Higher is expanded first."""
    p = alpha * normalized_logprob(cum_logprob, depth)
    if energy is not None and beta:
        p -= beta * energy
    return p
