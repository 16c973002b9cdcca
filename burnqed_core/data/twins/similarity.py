"""How close a set of theorems is to a training corpus: nearest neighbours and the eval report's block.

Built on `burnqed_core.data.twins.near_twins` (the near-twin form, the similarity of two theorems, the near-twins of a
set): `nearest_neighbours` gives each theorem its most similar corpus theorem by statement, by statement with
definitions and by proof; `similarity_report` is the block every eval's summary and report carry
(`burnqed_core.eval.summary.EvalSummary.similarity`): the spread of those similarities, the near-twins found and
each theorem's neighbours; `family_spread` is the yardstick, how close the corpus's own families are to each
other. ``burnqed data similarity SET... [--corpus SPEC] [--exclude FAMILY] [--all]`` prints them
(`similarity_lines`).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.twins.near_twins import (
    ASPECTS,
    HOW_ORDER,
    MIN_SKELETON_STEPS,
    PARTIAL_SIMILARITY,
    Forms,
    NearTwin,
    as_forms,
    find_near_twins,
    forms_of,
)
from burnqed_core.records import Theorem


class Neighbour(BaseModel):
    model_config = ConfigDict(frozen=True)
    other: str
    similarity: float


class NearestNeighbours(BaseModel):
    """One theorem's most similar theorem of a reference set, by each aspect (None: nothing to compare)."""

    model_config = ConfigDict(frozen=True)
    theorem: str
    statement: Neighbour | None = None
    definitions: Neighbour | None = None
    proof: Neighbour | None = None


def nearest_neighbours(reference: Iterable[Theorem] | Sequence[Forms],
                       theorems: Iterable[Theorem] | Sequence[Forms]) -> list[NearestNeighbours]:
    """For each theorem, the reference theorem most similar to it by statement, by statement with definitions
    and by proof (ties: the first by name); in the order of ``theorems``."""
    ref = sorted(as_forms(reference, MIN_SKELETON_STEPS), key=lambda f: f.theorem.name)
    out = []
    for f in as_forms(theorems, MIN_SKELETON_STEPS):
        best: dict[str, Neighbour] = {}
        for r in ref:
            if r.theorem.name == f.theorem.name:
                continue
            for aspect in ASPECTS:
                s = f.similarity(r, aspect)
                if s is not None and (aspect not in best or s > best[aspect].similarity):
                    best[aspect] = Neighbour(other=r.theorem.name, similarity=round(s, 4))
        out.append(NearestNeighbours(theorem=f.theorem.name, **best))
    return out


class Spread(BaseModel):
    """Quantiles of nearest-neighbour similarities."""

    model_config = ConfigDict(frozen=True)
    theorems: int
    median: float
    q1: float
    q3: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread | None:
        if not values:
            return None
        v = sorted(values)
        qs = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
        return cls(theorems=len(v), median=round(qs[1], 4), q1=round(qs[0], 4), q3=round(qs[2], 4),
                   max=round(v[-1], 4))

    def __str__(self) -> str:
        return f"median {self.median:.2f} [quartiles {self.q1:.2f}, {self.q3:.2f}], max {self.max:.2f}"


class SimilarityReport(BaseModel):
    """How close an evaluated set is to the training corpus: nearest-neighbour similarity by statement, by
    statement with definitions and by proof, and the near-twins found (strong ones are refused by hygiene before
    an eval, so an eval's report lists partial ones)."""

    model_config = ConfigDict(frozen=True)
    reference: str = Field("", description="what the set was compared with (the corpus spec)")
    reference_theorems: int = 0
    theorems: int = 0
    statement: Spread | None = None
    definitions: Spread | None = None
    proof: Spread | None = None
    near_twins: list[NearTwin] = Field(default_factory=list)
    neighbours: list[NearestNeighbours] = Field(default_factory=list)

    @property
    def strong(self) -> list[NearTwin]:
        return [n for n in self.near_twins if n.strong]

    def with_near_twin(self) -> set[str]:
        return {n.theorem for n in self.near_twins}

    def counts(self) -> dict[str, int]:
        """Theorems per strongest relation (each theorem counted once, at its strongest)."""
        best: dict[str, str] = {}
        for n in self.near_twins:
            if n.theorem not in best or HOW_ORDER[n.how] < HOW_ORDER[best[n.theorem]]:
                best[n.theorem] = n.how
        return dict(Counter(best.values()))

    def lines(self, limit: int = 8) -> list[str]:
        """The report's lines."""
        out = [f"nearest-neighbour similarity to the training corpus ({self.reference}, {self.reference_theorems} "
               f"theorems; 1.0 = the same near-twin form):"]
        for aspect in ASPECTS:
            sp = getattr(self, aspect)
            label = {"statement": "statement", "definitions": "statement with definitions", "proof": "proof"}[aspect]
            out.append(f"  {label}: {sp if sp is not None else 'nothing to compare'}"
                       + (f" ({sp.theorems} theorems)" if sp is not None and aspect == "proof" else ""))
        counts = self.counts()
        if not counts:
            out.append("  near-twins: none")
            return out
        out.append("  near-twins (each theorem at its strongest): "
                   + ", ".join(f"{counts[h]} {h}" for h in sorted(counts, key=HOW_ORDER.__getitem__)))
        best: dict[str, NearTwin] = {}
        for n in self.near_twins:
            if n.theorem not in best or HOW_ORDER[n.how] < HOW_ORDER[best[n.theorem].how]:
                best[n.theorem] = n
        shown = sorted(best.values(), key=lambda n: (HOW_ORDER[n.how], -n.similarity, n.theorem))
        out += [f"    {n.theorem} ~ {n.other} ({n.how}, {n.similarity:.2f})" for n in shown[:limit]]
        if len(shown) > limit:
            out.append(f"    ... ({len(shown) - limit} more in summary.json)")
        return out


def similarity_report(reference: Iterable[Theorem] | Sequence[Forms], theorems: Iterable[Theorem], *,
                      reference_name: str = "", partial_similarity: float = PARTIAL_SIMILARITY) -> SimilarityReport:
    """`SimilarityReport` of ``theorems`` against ``reference``."""
    ref = as_forms(reference, MIN_SKELETON_STEPS)
    mine = as_forms(theorems, MIN_SKELETON_STEPS)
    nn = nearest_neighbours(ref, mine)
    spreads = {a: Spread.of([getattr(n, a).similarity for n in nn if getattr(n, a) is not None]) for a in ASPECTS}
    twins = find_near_twins(ref, mine, partial_similarity=partial_similarity)
    return SimilarityReport(reference=reference_name, reference_theorems=len(ref), theorems=len(mine),
                            near_twins=twins, neighbours=nn, **spreads)


# --- command line -------------------------------------------------------------------------------------------------


def family_spread(theorems: Sequence[Theorem]) -> Spread | None:
    """Nearest-neighbour similarity (statement with definitions) of each theorem to the theorems of *other*
    families of the same set: how close a corpus's own families are to each other, the yardstick for how close
    a held-out set is to the corpus."""
    forms = forms_of(theorems)
    by_family: dict[str, list[Forms]] = defaultdict(list)
    for f in forms:
        by_family[f.theorem.family or f.theorem.name].append(f)
    values = []
    for fam, mine in by_family.items():
        others = [f for f in forms if (f.theorem.family or f.theorem.name) != fam]
        for f in mine:
            values.append(max((f.similarity(o, "definitions") or 0.0 for o in others), default=0.0))
    return Spread.of(values)


def similarity_lines(corpus_name: str, corpus: Sequence[Theorem], sets: Sequence[tuple[str, Sequence[Theorem]]],
                     show_all: bool = False) -> list[str]:
    """What ``burnqed data similarity`` prints: how close the corpus's families are to each other, then each set's
    similarity block against the corpus and its unseen theorems (``show_all``: every near-twin and every unseen
    theorem)."""
    ref = forms_of(corpus)
    out = [f"corpus {corpus_name}: {len(corpus)} theorems; its families to each other (statement with "
           f"definitions): {family_spread(corpus)}"]
    for spec, theorems in sets:
        report = similarity_report(ref, theorems, reference_name=corpus_name)
        unseen = sorted({t.name for t in theorems} - report.with_near_twin())
        out.append(f"\n{spec}: {len(theorems)} theorems")
        out.append("\n".join(report.lines(limit=10 ** 6 if show_all else 12)))
        out.append(f"  unseen (no near-twin of any kind): {len(unseen)} of {len(theorems)}"
                   + (": " + ", ".join(unseen) if show_all else ""))
    return out
