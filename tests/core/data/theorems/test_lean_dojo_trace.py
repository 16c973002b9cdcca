"""LeanDojo traced theorems -> tactic pairs, on objects with the attributes of lean_dojo's TracedTheorem /
TracedTactic / Pos (tracing itself needs a native Lean and the network; LeanDojo is not installed here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from burnqed_core.data.theorems.lean_dojo_trace import TRACED_FILE, pairs_from_traced, traced_entries
from burnqed_core.errors import DataError


@dataclass(frozen=True)
class Pos:  # lean_dojo.data_extraction.lean.Pos
    line_nb: int
    column_nb: int


@dataclass(frozen=True)
class DojoTheorem:  # lean_dojo.Theorem: repo, file_path, full_name
    full_name: str
    file_path: Path


@dataclass(frozen=True)
class TracedTactic:  # tactic, state_before, state_after are properties over the AST in lean_dojo
    tactic: str
    state_before: str
    state_after: str


@dataclass
class TracedTheorem:
    theorem: DojoTheorem
    start: Pos
    end: Pos
    tactics: list[TracedTactic] = field(default_factory=list)

    @property
    def file_path(self) -> Path:
        return self.theorem.file_path

    def get_traced_tactics(self, atomic_only: bool = False) -> list[TracedTactic]:
        return self.tactics


def _traced() -> list[TracedTheorem]:
    path = Path("Mathlib/Algebra/Group/Basic.lean")
    return [
        TracedTheorem(DojoTheorem("mul_one'", path), Pos(10, 1), Pos(12, 20), [
            TracedTactic("intro a", "⊢ ∀ (a : G), a * 1 = a", "a : G\n⊢ a * 1 = a"),
            TracedTactic("·", "a : G\n⊢ a * 1 = a", "a : G\n⊢ a * 1 = a"),
            TracedTactic("simp", "a : G\n⊢ a * 1 = a", "no goals"),
        ]),
        TracedTheorem(DojoTheorem("term_mode", path), Pos(20, 1), Pos(20, 30), []),
        TracedTheorem(DojoTheorem("after_end", path), Pos(30, 1), Pos(31, 9), [
            TracedTactic("rfl", "no goals", "no goals"),
        ]),
    ]


def test_entries_have_the_benchmark_4_shape_and_filters() -> None:
    entries = traced_entries(_traced(), url="https://github.com/leanprover-community/mathlib4", commit="abc")
    assert [e["full_name"] for e in entries] == ["mul_one'"]
    e = entries[0]
    assert e["file_path"] == "Mathlib/Algebra/Group/Basic.lean" and e["start"] == [10, 1] and e["end"] == [12, 20]
    assert [t["tactic"] for t in e["traced_tactics"]] == ["intro a", "simp"]  # no bare "·", nothing after no goals
    assert e["url"].endswith("mathlib4") and e["commit"] == "abc"


def test_pairs_from_traced_writes_the_file_and_reads_it_as_records(tmp_path: Path) -> None:
    data = pairs_from_traced(_traced(), tmp_path, url="u", commit="c")
    assert json.loads((tmp_path / TRACED_FILE).read_text())[0]["full_name"] == "mul_one'"
    assert [(p.tactic, p.depth, p.state_after) for p in data.pairs] == [("intro a", 0, "a : G\n⊢ a * 1 = a"),
                                                                       ("simp", 1, "")]
    assert data.theorems[0].name == "mul_one'" and data.theorems[0].family == "Mathlib.Algebra.Group"
    assert data.pairs[0].source == "leandojo:Mathlib/Algebra/Group/Basic.lean:10"


def test_nothing_traced_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="traced no theorem"):
        pairs_from_traced(_traced()[1:2], tmp_path, url="u", commit="c")
