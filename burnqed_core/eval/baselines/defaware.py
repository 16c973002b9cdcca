"""Baseline (b): definition-aware automation.

For each theorem, in order: ``simp [defs]``, ``grind [defs]`` and, for each variable ``x`` of the statement,
``induction x <;> simp_all [defs]`` and ``induction x <;> grind [defs]``, where ``defs`` are the user definitions
(``def`` / ``abbrev`` of the preamble) that the statement names (the list:
`burnqed_core.lean.definitions.definition_aware_tactics`): what a user of Lean tries before reaching for a
prover. Tried in batched rounds like baseline (a) (`burnqed_core.eval.baselines.rounds.first_closing`), the
report counting tactic shapes (`DEFAWARE_SHAPES`).
"""

from __future__ import annotations

from collections.abc import Sequence

from burnqed_core.eval.baselines.rounds import BaselineReport, first_closing
from burnqed_core.lean.definitions import definition_aware_tactics
from burnqed_core.lean.types import ProofEnv
from burnqed_core.records import Theorem

DEFAWARE_SHAPES: tuple[str, ...] = ("simp [defs]", "grind [defs]", "induction <;> simp_all [defs]",
                                    "induction <;> grind [defs]")


async def definition_aware_baseline(env: ProofEnv, theorems: Sequence[Theorem], progress: bool = False
                                    ) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first of `definition_aware_tactics` that closes the theorem
    (None: none does), and a report (``by_tactic`` counts tactic shapes)."""
    lists = {t.name: definition_aware_tactics(t) for t in theorems}
    mapping, report = await first_closing(env, theorems, lists, progress=progress, by_tactic=DEFAWARE_SHAPES,
                                           shape=_shape)
    return mapping, report


def _shape(tactic: str) -> str:
    if tactic.startswith("induction"):
        return "induction <;> simp_all [defs]" if "simp_all" in tactic else "induction <;> grind [defs]"
    return "simp [defs]" if tactic.startswith("simp") else "grind [defs]"
