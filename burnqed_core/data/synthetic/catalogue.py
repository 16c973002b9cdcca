"""Every family the bundled sets are generated from, and the corpus by proof technique.

`burnqed_core.data.synthetic.families` holds the first families (corpus and benchmark) and the `Family` record; the
technique modules (`burnqed_core.data.synthetic.techniques`, one module per technique, named by it) add corpus
families organised by the technique they teach. `ALL_FAMILIES` is what `burnqed_core.data.synthetic.generate_sets`
generates; `RETIRED` are families no set holds any more (known to `BY_NAME` and `technique_of`, never generated);
`technique_rows` is the sets README's techniques table (families, theorems, share closed by a single automation
tactic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from burnqed_core.data.synthetic.families import FAMILIES, TECHNIQUES, Family, Technique
from burnqed_core.data.synthetic.techniques.generalizing import GENERALIZING_FAMILIES
from burnqed_core.data.synthetic.techniques.have import HAVE_FAMILIES
from burnqed_core.data.synthetic.techniques.iff_funext import IFF_FUNEXT_FAMILIES
from burnqed_core.data.synthetic.techniques.induction import INDUCTION_FAMILIES
from burnqed_core.data.synthetic.techniques.predicates import PREDICATE_FAMILIES, RETIRED_FAMILIES
from burnqed_core.data.synthetic.techniques.prop_cases import PROP_CASES_FAMILIES
from burnqed_core.data.synthetic.techniques.structures import STRUCTURE_FAMILIES
from burnqed_core.errors import DataError
from burnqed_core.records import Theorem

ALL_FAMILIES: tuple[Family, ...] = (*FAMILIES, *PREDICATE_FAMILIES, *STRUCTURE_FAMILIES, *IFF_FUNEXT_FAMILIES,
                                   *HAVE_FAMILIES, *PROP_CASES_FAMILIES, *GENERALIZING_FAMILIES, *INDUCTION_FAMILIES)


def _check(families: Sequence[Family]) -> dict[str, Family]:
    by_name: dict[str, Family] = {}
    for f in families:
        if f.name in by_name:
            raise DataError(f"two families are named {f.name!r}")
        if f.technique not in TECHNIQUES:
            raise DataError(f"family {f.name!r}: technique {f.technique!r} is not one of {sorted(TECHNIQUES)}")
        by_name[f.name] = f
    return by_name


RETIRED: tuple[Family, ...] = RETIRED_FAMILIES
"""Families no bundled set holds any more (`burnqed_core.data.synthetic.techniques.predicates.RETIRED_FAMILIES`:
they mirror the hand-written benchmark); known by name, never generated into a set."""

BY_NAME: dict[str, Family] = _check((*ALL_FAMILIES, *RETIRED))


def technique_of(family: str) -> Technique:
    """The technique a family teaches; `DataError` for a family no module declares."""
    f = BY_NAME.get(family)
    if f is None:
        raise DataError(f"unknown family {family!r}")
    return f.technique


class TechniqueRow(BaseModel):
    """One technique of a corpus: its families, theorems and how many a single automation tactic closes."""

    model_config = ConfigDict(frozen=True)
    technique: Technique
    description: str
    families: dict[str, int]  # family -> theorems
    theorems: int
    measured: int  # theorems the automation map covers
    automation_closes: int  # of the measured

    @property
    def automation_share(self) -> float | None:
        return self.automation_closes / self.measured if self.measured else None


def technique_rows(corpus: Sequence[Theorem], automation: Mapping[str, str | None] | None = None) -> list[TechniqueRow]:
    """The corpus grouped by technique, in `TECHNIQUES` order (techniques with no theorem left out); a theorem of
    a family no module declares is a `DataError`."""
    automation = automation or {}
    groups: dict[Technique, list[Theorem]] = {}
    for t in corpus:
        groups.setdefault(technique_of(t.family or ""), []).append(t)
    rows = []
    for tech, description in TECHNIQUES.items():
        ts = groups.get(tech, [])
        if not ts:
            continue
        fams: dict[str, int] = {}
        for t in ts:
            fams[t.family or ""] = fams.get(t.family or "", 0) + 1
        measured = [t for t in ts if t.name in automation]
        rows.append(TechniqueRow(technique=tech, description=description, families=dict(sorted(fams.items())),
                                 theorems=len(ts), measured=len(measured),
                                 automation_closes=sum(automation[t.name] is not None for t in measured)))
    return rows


def format_technique_table(rows: Sequence[TechniqueRow]) -> str:
    """The rows as a markdown table."""
    lines = ["| technique | families (theorems) | theorems | closed by one automation tactic |", "|---|---|---|---|"]
    for r in rows:
        share = r.automation_share
        closed = (f"{r.automation_closes}/{r.measured} ({100 * share:.0f}%)" if share is not None else "not measured")
        if share is not None and r.measured < r.theorems:
            closed += f", {r.theorems - r.measured} not measured"
        fams = ", ".join(f"`{f}` {n}" for f, n in r.families.items())
        lines.append(f"| {r.technique}: {r.description} | {fams} | {r.theorems} | {closed} |")
    total = sum(r.theorems for r in rows)
    lines.append(f"| all | {sum(len(r.families) for r in rows)} families | {total} | "
                 f"{sum(r.automation_closes for r in rows)}/{sum(r.measured for r in rows)} |")
    return "\n".join(lines)
