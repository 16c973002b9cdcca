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
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
    rules = _Rules(held=held_set, held_statements=held_statements, held_out_splits=held_out_splits,
                   searched=searched_set, easy=easy_set, retry=retry_set, lengths=proof_lengths or {},
                   min_length=min_length)
    triage = _triage(theorems, rules)
    rates = dict(family_fail_rate or {})
    prefer_set = set(prefer)
    draw = _draw(triage, prefer_set, n, seed, rates, failed_family_boost, curriculum, prefer_max)
    return Selection(theorems=draw.chosen, stats=_stats(len(theorems), triage, draw, seed, prefer_set, rates))


def _stats(total: int, triage: _Triage, draw: _Draw, seed: int, prefer_set: set[str],
           rates: Mapping[str, float]) -> SelectionStats:
    """The `SelectionStats` of a draw from ``total`` theorems."""
    by_family: dict[str, int] = {}
    for t in draw.chosen:
        by_family[t.family] = by_family.get(t.family, 0) + 1
    return SelectionStats(
        total=total, excluded_held_out=triage.held_out, excluded_searched=triage.searched,
        excluded_easy=triage.easy, excluded_short=triage.short, unknown_length=triage.unknown,
        eligible=len(triage.eligible), selected=len(draw.chosen), seed=seed,
        retried=len(draw.retried) + len({t.name for t in draw.again_first} & {t.name for t in draw.chosen}),
        preferred=sum(t.name in prefer_set for t in draw.chosen),
        by_family=dict(sorted(by_family.items())),
        family_fail_rate={f: round(rates.get(f, 1.0), 4)
                          for f in sorted({t.family for t in triage.eligible + triage.again})},
    )


@dataclass(frozen=True)
class _Rules:
    """What excludes a theorem from `select_theorems`' draw: held-out names, statements (`statement_key`) and
    splits, names searched before (of which ``retry`` were never proved), automation-easy names, and proofs
    (``lengths``: name -> proof length, else the known proof's) shorter than ``min_length``."""

    held: set[str]
    held_statements: set[str]
    held_out_splits: Collection[str]
    searched: set[str]
    easy: set[str]
    retry: set[str]
    lengths: Mapping[str, int]
    min_length: int

    def held_out(self, t: Theorem) -> bool:
        """Whether ``t`` is held out: by name, by split or by what it states."""
        return t.name in self.held or t.split in self.held_out_splits or (
            bool(self.held_statements) and statement_key(t.statement) in self.held_statements)

    def short(self, length: int) -> bool:
        """Whether a known proof length (0: unknown) is under ``min_length``."""
        return bool(length and length < self.min_length)


@dataclass
class _Triage:
    """The theorems `_triage` found eligible, the searched ones that may be searched ``again``, and how many
    each rule excluded (``unknown``: eligible theorems of unknown proof length)."""

    eligible: list[Theorem] = field(default_factory=list)
    again: list[Theorem] = field(default_factory=list)
    held_out: int = 0
    searched: int = 0
    easy: int = 0
    short: int = 0
    unknown: int = 0


def _triage(theorems: Iterable[Theorem], rules: _Rules) -> _Triage:
    """Each theorem counted under the first of ``rules`` that excludes it (held out, searched, easy, short) or
    kept as eligible; a searched theorem of ``rules.retry`` that would otherwise be eligible may come back."""
    out = _Triage()
    for t in theorems:
        length = rules.lengths.get(t.name, len(t.proof))
        if rules.held_out(t):
            out.held_out += 1
        elif t.name in rules.searched:
            out.searched += 1
            if t.name in rules.retry and t.name not in rules.easy and not rules.short(length):
                out.again.append(t)
        elif t.name in rules.easy:
            out.easy += 1
        elif rules.short(length):
            out.short += 1
        else:
            out.unknown += not length
            out.eligible.append(t)
    return out


class _Draw(NamedTuple):
    """`_draw`'s sample sorted by name (``chosen``, the retried theorems included), the never-proved theorems
    it searches again after the others (``retried``) and the preferred never-proved ones drawn first
    (``again_first``)."""

    chosen: list[Theorem]
    retried: list[Theorem]
    again_first: list[Theorem]


def _draw(triage: _Triage, prefer_set: set[str], n: int, seed: int, rates: Mapping[str, float], boost: float,
          curriculum: Mapping[str, Any] | None, prefer_max: int | None) -> _Draw:
    """The preferred theorems first (those never proved included: they come back first at every iteration), up
    to ``prefer_max``; then the other eligible theorems; then, while fewer than ``n``, the other never-proved
    ones with the seed ``seed + 1`` (each a `stratified_draw`)."""
    again_first = [t for t in triage.again if t.name in prefer_set]
    again = [t for t in triage.again if t.name not in prefer_set]
    first = [t for t in triage.eligible if t.name in prefer_set] + again_first
    chosen = stratified_draw(first, n if prefer_max is None else min(n, prefer_max), seed, rates, boost, curriculum)
    if len(chosen) < n:
        chosen += stratified_draw([t for t in triage.eligible if t.name not in prefer_set], n - len(chosen), seed,
                                  rates, boost, curriculum)
    retried = stratified_draw(again, n - len(chosen), seed + 1, rates, boost, curriculum) if len(chosen) < n else []
    return _Draw(sorted(chosen + retried, key=lambda t: t.name), retried, again_first)
