"""Which theorems to search in an iteration.

The seeds' iteration 2 (000) picked 15,000 of 61,542 theorems after removing
those with proofs of one step (search on them teaches nothing new), those
closed by built-in automation alone, those already searched in earlier
iterations and, always, the held-out benchmark. Each excluded theorem is
counted under the first reason that applies, in that order: held out,
already searched, automation-easy, short. The sample is a seeded random
draw from the eligible theorems sorted by name, so it does not depend on
input order. A theorem is held out by name, by split, or by what it states:
``held_out_theorems`` are compared by normalised statement
(`burnqed_core.data.hygiene.statement_key`), so a benchmark theorem copied
into the corpus under another name is excluded too.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from burnqed_core.data.hygiene import statement_key
from burnqed_core.records import Split, Theorem

HELD_OUT_SPLITS: tuple[Split, ...] = ("benchmark", "test")


class SelectionStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    total: int
    excluded_held_out: int
    excluded_searched: int
    excluded_easy: int
    excluded_short: int
    unknown_length: int
    eligible: int
    selected: int
    seed: int


class Selection(BaseModel):
    model_config = ConfigDict(frozen=True)
    theorems: list[Theorem]
    stats: SelectionStats


def select_theorems(
    theorems: Sequence[Theorem],
    n: int,
    seed: int,
    searched: Iterable[str] = (),
    held_out: Iterable[str] = (),
    held_out_splits: Collection[str] = HELD_OUT_SPLITS,
    proof_lengths: Mapping[str, int] | None = None,
    easy: Iterable[str] = (),
    min_length: int = 2,
    held_out_theorems: Iterable[Theorem] = (),
) -> Selection:
    """A seeded sample of up to ``n`` theorems to search.

    A theorem's proof length is ``proof_lengths[name]`` (e.g. max depth + 1 of
    its tactic pairs, `pairs.proof_lengths`) or else the length of its known
    proof; theorems shorter than ``min_length`` are excluded, and theorems
    whose length is unknown are kept (counted as ``unknown_length``).
    """
    searched_set, held_set, easy_set = set(searched), set(held_out), set(easy)
    held_statements = {statement_key(t.statement) for t in held_out_theorems}
    held_set |= {t.name for t in held_out_theorems}
    lengths = proof_lengths or {}
    counts = {"held_out": 0, "searched": 0, "easy": 0, "short": 0}
    unknown = 0
    eligible: list[Theorem] = []
    for t in theorems:
        length = lengths.get(t.name, len(t.proof))
        if t.name in held_set or t.split in held_out_splits or (
                held_statements and statement_key(t.statement) in held_statements):
            counts["held_out"] += 1
        elif t.name in searched_set:
            counts["searched"] += 1
        elif t.name in easy_set:
            counts["easy"] += 1
        elif length and length < min_length:
            counts["short"] += 1
        else:
            unknown += not length
            eligible.append(t)
    eligible.sort(key=lambda t: t.name)
    rng = random.Random(seed)
    chosen = rng.sample(eligible, n) if n < len(eligible) else rng.sample(eligible, len(eligible))
    stats = SelectionStats(
        total=len(theorems), excluded_held_out=counts["held_out"], excluded_searched=counts["searched"],
        excluded_easy=counts["easy"], excluded_short=counts["short"], unknown_length=unknown,
        eligible=len(eligible), selected=len(chosen), seed=seed,
    )
    return Selection(theorems=chosen, stats=stats)
