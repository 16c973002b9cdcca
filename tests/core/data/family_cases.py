"""Helpers shared by the technique families' tests: a family's instances at a seed and an instance's template."""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance
from burnqed_core.data.generate_sets import SEED


def instances(family: Family, seed: int = SEED) -> list[Instance]:
    """The family's instances as `generate_sets` draws them (its parameters from ``Random(f"{seed}:{name}")``)."""
    return family.generate(random.Random(f"{seed}:{family.name}"))


def template(key: str) -> str:
    """The template of an instance: its key up to the first numeric part (``lit_3_1_0_101`` -> ``lit``)."""
    parts = []
    for part in key.split("_"):
        if part[:1].isdigit():
            break
        parts.append(part)
    return "_".join(parts)
