"""Premise steps: retrieved premises as search candidates.

For each of the top-k premises of a goal, the steps a person tries with a lemma in hand: ``rw [p]``,
``simp only [p]``, ``exact p``, ``apply p`` (`PremiseStepsConfig.templates`, ``{p}`` the premise), and for the
premises together ``simp [p₁, …, pₖ]`` (`PremiseStepsConfig.joint`, ``{ps}``; the selected premises handed to
automation, as LeanHammer does). Each step's prior log-probability falls with its premise's rank, so that a
best-first search tries the best premise's steps first.
"""

from __future__ import annotations

from collections.abc import Sequence

from burnqed_core.config import PremiseStepsConfig
from burnqed_core.lean.judge import lean_ident
from burnqed_core.premises.records import Retrieved


def premise_name(name: str) -> str | None:
    """``name`` as Lean reads it in a tactic, or None when it cannot be written."""
    try:
        return lean_ident(name)
    except ValueError:
        return None


def premise_steps(retrieved: Sequence[Retrieved], config: PremiseStepsConfig) -> list[tuple[str, float, str]]:
    """``(tactic, prior logprob, premise name)`` for the premises, best premise first; a joint step names
    every premise (its premise field: the names comma-separated)."""
    names = [(r, n) for r in retrieved[:config.k] if (n := premise_name(r.premise.name)) is not None]
    out: list[tuple[str, float, str]] = []
    for r, n in names:
        lp = config.prior_logprob - config.rank_penalty * r.rank
        for t in config.templates:
            if r.premise.kind == "definition" and t.startswith(("exact", "apply")):
                continue  # a definition is unfolded, not applied
            out.append((t.replace("{p}", n), lp, r.premise.name))
    if len(names) > 1:
        ps = ", ".join(n for _, n in names)
        for t in config.joint:
            out.append((t.replace("{ps}", ps), config.prior_logprob, ",".join(r.premise.name for r, _ in names)))
    return out
