"""`load_theorems` on every form of theorem-set spec, dedup and stats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burnqed_core.data.theorems.load import (
    BUNDLED_DIR,
    automation_map,
    bundled_names,
    dedup_theorems,
    load_many,
    load_theorems,
    resolve_spec,
    set_dir,
    theorem_set_stats,
)
from burnqed_core.errors import DataError, RecordFileError
from burnqed_core.record_io import write_jsonl, write_parquet
from burnqed_core.records import Theorem
from tests.core.data.theorems.test_external import DOJO, MINIF2F_ROWS, write_json

THMS = [
    Theorem(name="add_zero'", statement="(n : Nat) : n + 0 = n", proof=["simp"], family="arith"),
    Theorem(name="and_swap'", statement="(p q : Prop) (h : p ∧ q) : q ∧ p",
            proof=["obtain ⟨hp, hq⟩ := h", "exact ⟨hq, hp⟩"], family="logic", split="valid"),
    Theorem(name="double_eq", statement="(n : Nat) : double n = n + n",
            preamble="def double : Nat → Nat\n  | 0 => 0\n  | n + 1 => double n + 2\n",
            proof=["induction n with\n| zero => rfl\n| succ n ih => simp [double, ih]; omega"], family="defs"),
]


def test_bundled_sets() -> None:
    assert {"corpus", "benchmark"} <= set(bundled_names())
    corpus = load_theorems("bundled:corpus")
    assert len(corpus) >= 300 and len({t.name for t in corpus}) == len(corpus)
    assert all(t.split == "train" for t in corpus)
    bench = load_theorems("bundled:benchmark")
    assert not {t.name for t in corpus} & {t.name for t in bench}


def test_bundled_dev_and_test_are_the_splits_of_the_benchmark() -> None:
    assert {"benchmark", "dev", "test"} <= set(bundled_names())
    bench = load_theorems("bundled:benchmark")
    dev, test = load_theorems("bundled:dev"), load_theorems("bundled:test")
    assert dev and test and {t.split for t in dev} == {"dev"} and {t.split for t in test} == {"test"}
    assert sorted(dev + test, key=lambda t: t.name) == sorted(bench, key=lambda t: t.name)
    # one file: the split views resolve to it, and its directory's automation map applies
    assert resolve_spec("bundled:dev") == resolve_spec("bundled:test") == BUNDLED_DIR / "benchmark.jsonl"
    assert set_dir("bundled:test") == BUNDLED_DIR
    auto = automation_map("bundled:test")
    assert auto is not None and {t.name for t in test} <= set(auto)
    assert not list(BUNDLED_DIR.glob("dev.jsonl")) and not list(BUNDLED_DIR.glob("test.jsonl"))


def test_unknown_bundled_set_lists_names() -> None:
    with pytest.raises(DataError, match=r"no bundled theorem set 'nope'; available: .*corpus"):
        load_theorems("bundled:nope")


def test_missing_path() -> None:
    with pytest.raises(DataError, match="no such file"):
        load_theorems("/nonexistent/theorems.jsonl")


def test_theorem_records_jsonl_and_parquet(tmp_path: Path) -> None:
    assert load_theorems(write_jsonl(THMS, tmp_path / "t.jsonl")) == THMS
    assert load_theorems(write_parquet(THMS, tmp_path / "t.parquet")) == THMS
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "x", "statement": 3}\n', encoding="utf-8")
    with pytest.raises(RecordFileError, match=r"bad\.jsonl:1"):
        load_theorems(bad)


def test_minif2f_jsonl_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "minif2f.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in MINIF2F_ROWS), encoding="utf-8")
    thms = load_theorems(path)
    assert [t.name for t in thms] == [r["name"] for r in MINIF2F_ROWS]


def test_lean_file_and_dir(tmp_path: Path) -> None:
    lean = tmp_path / "Problems.lean"
    lean.write_text("def double (n : Nat) : Nat := 2 * n\n\ntheorem d2 : double 2 = 4 := by\n  rfl\n\n"
                    "example : double 0 = 0 := by rfl\n", encoding="utf-8")
    thms = load_theorems(lean)
    assert [t.name for t in thms] == ["d2", "example_6"]
    assert thms[0].preamble == "def double (n : Nat) : Nat := 2 * n\n"
    assert thms[0].source == str(lean)
    d = tmp_path / "dir" / "Valid"
    d.mkdir(parents=True)
    (d / "a.lean").write_text("theorem a1 : 1 + 1 = 2 := by decide\n", encoding="utf-8")
    (d / "b.lean").write_text("theorem b1 : True := by trivial\n", encoding="utf-8")
    thms = load_theorems(tmp_path / "dir")
    assert [(t.name, t.split) for t in thms] == [("a1", "valid"), ("b1", "valid")]
    assert {t.split for t in load_theorems(d)} == {"valid"}  # the directory's own name counts too
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"no train\.json"):
        load_theorems(tmp_path / "empty")


def test_leandojo_split_dir_and_file(tmp_path: Path) -> None:
    split = tmp_path / "random"
    write_json(split / "train.json", DOJO[:1])
    write_json(split / "val.json", DOJO[1:])
    thms = load_theorems(split)
    assert [(t.name, t.split) for t in thms] == [("Nat.my_add_comm", "train"), ("List.my_append_nil", "valid")]
    assert [t.name for t in load_theorems(split / "val.json")] == ["List.my_append_nil"]


def test_dedup(tmp_path: Path) -> None:
    assert dedup_theorems([*THMS, THMS[0]]) == THMS
    other_proof = THMS[0].model_copy(update={"proof": ["omega"]})
    assert dedup_theorems([THMS[0], other_proof]) == [THMS[0]]
    other = THMS[0].model_copy(update={"statement": "(n : Nat) : 0 + n = n", "source": "b.jsonl"})
    with pytest.raises(DataError, match=r"two different theorems named .add_zero'. \(from a\.jsonl and b\.jsonl\)"):
        dedup_theorems([THMS[0].model_copy(update={"source": "a.jsonl"}), other])
    a = write_jsonl(THMS[:2], tmp_path / "a.jsonl")
    b = write_jsonl(THMS[1:], tmp_path / "b.jsonl")
    assert [t.name for t in load_many([a, b])] == [t.name for t in THMS]


def test_stats_and_automation_map(tmp_path: Path) -> None:
    path = write_jsonl(THMS, tmp_path / "set.jsonl")
    assert automation_map(path) is None
    st = theorem_set_stats(load_theorems(path))
    assert st.theorems == 3
    assert st.by_split == {"train": 2, "valid": 1}
    assert st.by_family == {"arith": 1, "defs": 1, "logic": 1}
    assert st.proof_length_histogram == {1: 2, 2: 1}
    assert st.hard is None
    (tmp_path / "automation.json").write_text(json.dumps({"add_zero'": "simp", "and_swap'": "grind",
                                                          "double_eq": None}), encoding="utf-8")
    auto = automation_map(path)
    st = theorem_set_stats(load_theorems(path), auto)
    assert (st.hard, st.easy, st.unmeasured) == (1, 2, 0)
    assert st.closed_by == {"grind": 1, "simp": 1}
    assert st.hard_by_family == {"defs": 1}
    (tmp_path / "automation.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DataError, match=r"automation\.json"):
        automation_map(path)
