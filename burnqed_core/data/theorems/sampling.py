"""A fixed sample of a theorem set, spread over its families.

`stratified_sample` is the fixed sample the eval, the pool's splits and the command line draw by one rule: per
family a quota proportional to its size (largest remainder, `allocate`), drawn within the family with
``random.Random(f"{seed}:{family}")`` from the names sorted. `stratified_draw` is the same draw with weights and an
optional curriculum order, for the loop's selection of the theorems to search
(`burnqed_core.loop.selection.select_theorems`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from burnqed_core.records import Theorem

# The place of a theorem that has none in a curriculum: after every placed one.
CURRICULUM_LAST: tuple[float, ...] = (float("inf"),)


def allocate(sizes: Mapping[str, int], weights: Mapping[str, float], n: int) -> dict[str, int]:
    """Split ``n`` into per-key quotas proportional to ``weights``, each at most ``sizes[key]``: largest
    remainder (ties by key), what a capped key cannot take goes to the others. Sums to ``min(n, sum(sizes))``."""
    quota = {k: 0 for k in sizes}
    left = min(n, sum(sizes.values()))
    while left > 0:
        open_keys = sorted(k for k in sizes if quota[k] < sizes[k])
        total = sum(weights[k] for k in open_keys)
        if total <= 0:  # only zero weights left: spread evenly
            share = {k: left / len(open_keys) for k in open_keys}
        else:
            share = {k: left * weights[k] / total for k in open_keys}
        give = {k: min(math.floor(share[k]), sizes[k] - quota[k]) for k in open_keys}
        given = sum(give.values())
        if given < left:  # largest remainders first, among keys with room
            rest = sorted((k for k in open_keys if quota[k] + give[k] < sizes[k]),
                          key=lambda k: (-(share[k] - math.floor(share[k])), k))
            for k in rest[: left - given]:
                give[k] += 1
        for k, g in give.items():
            quota[k] += g
        left -= sum(give.values())
    return quota


def stratified_draw(pool: Sequence[Theorem], n: int, seed: int, fail_rate: Mapping[str, float],
                boost: float, rank: Mapping[str, Any] | None = None) -> list[Theorem]:
    by_family: dict[str, list[Theorem]] = {}
    for t in pool:
        by_family.setdefault(t.family, []).append(t)
    sizes = {f: len(ts) for f, ts in by_family.items()}
    weights = {f: sizes[f] * (1.0 + boost * fail_rate.get(f, 1.0)) for f in sizes}
    quota = allocate(sizes, weights, n)
    out: list[Theorem] = []
    for f in sorted(by_family):
        members = sorted(by_family[f], key=lambda t: t.name)
        if rank is not None:  # a curriculum: each family's first theorems in its order
            out += sorted(members, key=lambda t: (rank.get(t.name, CURRICULUM_LAST), t.name))[:quota[f]]
        else:
            out += random.Random(f"{seed}:{f}").sample(members, quota[f])
    return out


def stratified_sample(theorems: Sequence[Theorem], n: int, seed: int = 0) -> list[Theorem]:
    """A fixed sample of ``n`` of ``theorems``, spread over their families in proportion to their sizes
    (largest remainder) and drawn within each family with ``random.Random(f"{seed}:{family}")`` from the
    names sorted: the same set and seed give the same sample whatever the input order; it never looks at how
    a theorem was solved. All of them, sorted by name, when ``n`` is not smaller."""
    if n >= len(theorems):
        return sorted(theorems, key=lambda t: t.name)
    return sorted(stratified_draw(theorems, n, seed, {}, 0.0), key=lambda t: t.name)
