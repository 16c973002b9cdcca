"""Which theorems to search in an iteration.

The seeds' iteration 2 (000) picked 15,000 of 61,542 theorems after removing
those with proofs of one step (search on them teaches nothing new), those
closed by built-in automation alone, those already searched in earlier
iterations and, always, the held-out benchmark. Each excluded theorem is
counted under the first reason that applies, in that order: held out,
already searched, automation-easy, short. The sample is a seeded random
draw from the eligible theorems sorted by name, so it does not depend on
input order.

Across iterations the draw prefers the families where earlier searches
failed (issue 21: new positives come from where the model could not prove
yet): each family gets a quota of the ``n`` theorems proportional to its
eligible theorems times ``1 + failed_family_boost * fail_rate``, where
``fail_rate`` is the share of its searched theorems that no earlier search
proved (1 for a family never searched: it has given no positives yet);
quotas are rounded by largest remainder, capped by what a family has, and
each family's theorems are a seeded draw of their own. With no earlier
searches every fail rate is 1 and the quotas are proportional to the
families' sizes (a stratified draw). Theorems searched before but never
proved (``retry``) may be searched again, by the same rule, when the
never-searched eligible theorems are fewer than ``n``: the model has changed
since. A theorem is held out by name, by split, or by what it states:
``held_out_theorems`` are compared by normalised statement
(`burnqed_core.eval.hygiene.statement_key`), so a benchmark theorem copied
into the corpus under another name is excluded too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.theorems.sampling import stratified_draw
from burnqed_core.eval.hygiene import statement_key
from burnqed_core.records import Split, Theorem

HELD_OUT_SPLITS: tuple[Split, ...] = ("benchmark", "dev", "test")



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
    retried: int = Field(0, description="selected theorems searched before without a proof (searched again)")
    preferred: int = Field(0, description="selected theorems drawn first (withheld exercises)")
    by_family: dict[str, int] = Field(default_factory=dict, description="selected theorems per family")
    family_fail_rate: dict[str, float] = Field(default_factory=dict,
                                               description="per family of the eligible theorems: the fail rate "
                                                           "that weighted its quota (1: never searched)")


class Selection(BaseModel):
    model_config = ConfigDict(frozen=True)
    theorems: list[Theorem]
    stats: SelectionStats


def family_fail_rates(proved_by_theorem: Mapping[str, bool], families: Mapping[str, str]) -> dict[str, float]:
    """Per family: the share of its searched theorems (``proved_by_theorem``: name -> proved by any earlier
    search) that were not proved. Theorems of unknown family count under ``""``."""
    searched: dict[str, int] = {}
    failed: dict[str, int] = {}
    for name, proved in proved_by_theorem.items():
        f = families.get(name, "")
        searched[f] = searched.get(f, 0) + 1
        failed[f] = failed.get(f, 0) + (not proved)
    return {f: failed[f] / searched[f] for f in sorted(searched)}


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
    *,
    retry: Iterable[str] = (),
    family_fail_rate: Mapping[str, float] | None = None,
    failed_family_boost: float = 0.0,
    prefer: Iterable[str] = (),
    prefer_max: int | None = None,
    curriculum: Mapping[str, Any] | None = None,
) -> Selection:
    """A seeded sample of up to ``n`` theorems to search, weighted towards failing families (module doc).

    A theorem's proof length is ``proof_lengths[name]`` (e.g. max depth + 1 of
    its tactic pairs, `pairs.proof_lengths`) or else the length of its known
    proof; theorems shorter than ``min_length`` are excluded, and theorems
    whose length is unknown are kept (counted as ``unknown_length``).
    ``retry``: searched theorems (among ``searched``) that no search proved,
    searched again when the never-searched eligible theorems are fewer than
    ``n``. ``family_fail_rate``: family -> fail rate of earlier searches
    (`family_fail_rates`; a family missing from it counts as 1). ``prefer``:
    eligible theorems drawn first, by the same rule, before the others fill
    the rest (the withheld exercises, `burnqed_core.data.pairs.prepare.TheoremSplit`);
    a preferred theorem in ``retry`` (searched, never proved) is drawn first
    again, whether or not never-searched theorems remain; at most
    ``prefer_max`` of them (None: up to ``n``), the same ones as a draw of
    ``prefer_max`` with nothing else to fill. ``curriculum``: theorem -> its place in a curriculum (a sortable
    key, `curriculum_rank`); each family's quota then takes its first eligible theorems in that order instead of
    a seeded draw (a theorem without a place comes last).
    """
    if failed_family_boost < 0:
        raise ValueError(f"failed_family_boost must be >= 0, got {failed_family_boost}")
    searched_set, held_set, easy_set, retry_set = set(searched), set(held_out), set(easy), set(retry)
    held_statements = {statement_key(t.statement) for t in held_out_theorems}
    held_set |= {t.name for t in held_out_theorems}
    lengths = proof_lengths or {}
    counts = {"held_out": 0, "searched": 0, "easy": 0, "short": 0}
    unknown = 0
    eligible: list[Theorem] = []
    again: list[Theorem] = []
    for t in theorems:
        length = lengths.get(t.name, len(t.proof))
        if t.name in held_set or t.split in held_out_splits or (
                held_statements and statement_key(t.statement) in held_statements):
            counts["held_out"] += 1
        elif t.name in searched_set:
            counts["searched"] += 1
            if t.name in retry_set and t.name not in easy_set and not (length and length < min_length):
                again.append(t)
        elif t.name in easy_set:
            counts["easy"] += 1
        elif length and length < min_length:
            counts["short"] += 1
        else:
            unknown += not length
            eligible.append(t)
    rates = dict(family_fail_rate or {})
    prefer_set = set(prefer)
    # preferred theorems (exercises) that no search proved yet come back first at every iteration
    again_first = [t for t in again if t.name in prefer_set]
    again = [t for t in again if t.name not in prefer_set]
    first = [t for t in eligible if t.name in prefer_set] + again_first
    cur = curriculum
    chosen = stratified_draw(first, n if prefer_max is None else min(n, prefer_max), seed, rates, failed_family_boost,
                         cur)
    if len(chosen) < n:
        chosen += stratified_draw([t for t in eligible if t.name not in prefer_set], n - len(chosen), seed, rates,
                              failed_family_boost, cur)
    retried = stratified_draw(again, n - len(chosen), seed + 1, rates, failed_family_boost, cur) \
        if len(chosen) < n else []
    chosen = sorted(chosen + retried, key=lambda t: t.name)
    by_family: dict[str, int] = {}
    for t in chosen:
        by_family[t.family] = by_family.get(t.family, 0) + 1
    stats = SelectionStats(
        total=len(theorems), excluded_held_out=counts["held_out"], excluded_searched=counts["searched"],
        excluded_easy=counts["easy"], excluded_short=counts["short"], unknown_length=unknown,
        eligible=len(eligible), selected=len(chosen), seed=seed,
        retried=len(retried) + len({t.name for t in again_first} & {t.name for t in chosen}),
        preferred=sum(t.name in prefer_set for t in chosen),
        by_family=dict(sorted(by_family.items())),
        family_fail_rate={f: round(rates.get(f, 1.0), 4)
                          for f in sorted({t.family for t in eligible + again + again_first})},
    )
    return Selection(theorems=chosen, stats=stats)
