"""The catalogue of families (`burnqed_core.data.synthetic.catalogue`): every family once, with a known technique; the
techniques table of the bundled corpus with its measured automation share."""

from __future__ import annotations

import pytest

from burnqed_core.data.synthetic.catalogue import (
    ALL_FAMILIES,
    BY_NAME,
    RETIRED,
    _check,
    format_technique_table,
    technique_of,
    technique_rows,
)
from burnqed_core.data.synthetic.families import TECHNIQUES, Family
from burnqed_core.data.theorems.load import automation_map, load_theorems
from burnqed_core.errors import DataError


def test_every_family_once_with_a_known_technique() -> None:
    assert len(BY_NAME) == len(ALL_FAMILIES) + len(RETIRED)
    assert not set(ALL_FAMILIES) & set(RETIRED)  # a retired family is known by name, never generated
    assert {f.name for f in RETIRED} == {"tmul", "telem", "tsort", "treach"}
    assert all(f.technique in TECHNIQUES for f in (*ALL_FAMILIES, *RETIRED))
    assert technique_of("tmul") == "predicates" and technique_of("thave") == "have"
    with pytest.raises(DataError, match="unknown family 'nope'"):
        technique_of("nope")
    dup = ALL_FAMILIES[0]
    with pytest.raises(DataError, match="two families are named"):
        _check([dup, dup])
    odd = Family("odd", "train", True, "x", lambda rng: [], technique="magic")  # type: ignore[arg-type]
    with pytest.raises(DataError, match="technique 'magic' is not one of"):
        _check([odd])


def test_the_techniques_table_of_the_bundled_corpus() -> None:
    corpus = load_theorems("bundled:corpus")
    rows = technique_rows(corpus, automation_map("bundled:corpus"))
    assert sum(r.theorems for r in rows) == len(corpus)
    assert all(r.measured == r.theorems for r in rows)  # the shipped map covers the corpus
    by = {r.technique: r for r in rows}
    assert set(by["predicates"].families) == {"tred", "tocc", "tsub", "tle"}  # tmul, tsort, treach, telem retired
    assert by["arith"].automation_share == 1.0  # omega closes every linear arithmetic theorem
    assert by["predicates"].automation_closes == 0
    table = format_technique_table(rows)
    assert table.splitlines()[0].startswith("| technique |")
    assert f"| all | {len({t.family for t in corpus})} families | {len(corpus)} |" in table
    unmeasured = technique_rows(corpus[:3], {})
    assert "not measured" in format_technique_table(unmeasured)
