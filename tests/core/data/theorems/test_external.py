"""Loaders for LeanDojo Benchmark 4 and miniF2F, on small files the tests
write in those exact formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burnqed_core.data.pairs.prepare import load_pairs
from burnqed_core.data.theorems.external import (
    leandojo_split_files,
    minif2f_family,
    read_lean_dir,
    read_leandojo,
    read_minif2f_jsonl,
)
from burnqed_core.data.theorems.lean_file import render_theorem
from burnqed_core.errors import DataError


def dojo_entry(name: str, file_path: str, tactics: list[tuple[str, str, str]], line: int = 10) -> dict:
    """One theorem of a LeanDojo Benchmark 4 split file."""
    return {
        "url": "https://github.com/leanprover-community/mathlib4",
        "commit": "29dcec074de168ac2bf835a77ef68bbe069194c5",
        "file_path": file_path,
        "full_name": name,
        "start": [line, 1],
        "end": [line + len(tactics) + 1, 20],
        "traced_tactics": [
            {
                "tactic": tac,
                "annotated_tactic": [tac.replace("Nat.add_comm", "<a>Nat.add_comm</a>"),
                                     [{"full_name": "Nat.add_comm",
                                       "def_path": ".lake/packages/lean4/src/lean/Init/Core.lean",
                                       "def_pos": [1, 1], "def_end_pos": [1, 10]}]],
                "state_before": before,
                "state_after": after,
            }
            for tac, before, after in tactics
        ],
    }


DOJO = [
    dojo_entry("Nat.my_add_comm", "Mathlib/Algebra/Group/Basic.lean", [
        ("intro a b", "⊢ ∀ (a b : ℕ), a + b = b + a", "a b : ℕ\n⊢ a + b = b + a"),
        ("rw [Nat.add_comm]", "a b : ℕ\n⊢ a + b = b + a", "no goals"),
    ]),
    dojo_entry("List.my_append_nil", "Mathlib/Data/List/Basic.lean", [
        ("simp", "α : Type u_1\nl : List α\n⊢ l ++ [] = l", "no goals"),
    ], line=42),
]


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_leandojo_split_file(tmp_path: Path) -> None:
    data = read_leandojo(write_json(tmp_path / "random" / "val.json", DOJO))
    assert [t.name for t in data.theorems] == ["Nat.my_add_comm", "List.my_append_nil"]
    t0 = data.theorems[0]
    assert t0.split == "valid"  # val.json
    assert t0.statement == "" and t0.preamble == ""  # not in the format
    assert t0.proof == ["intro a b", "rw [Nat.add_comm]"]
    assert t0.source == "Mathlib/Algebra/Group/Basic.lean:10"
    assert t0.family == "Mathlib.Algebra.Group"
    assert [(p.theorem, p.depth) for p in data.pairs] == [
        ("Nat.my_add_comm", 0), ("Nat.my_add_comm", 1), ("List.my_append_nil", 0)]
    assert data.pairs[0].state_after == "a b : ℕ\n⊢ a + b = b + a"
    assert data.pairs[1].state_after == ""  # "no goals" -> "" (closed)
    assert data.pairs[2].state_before == "α : Type u_1\nl : List α\n⊢ l ++ [] = l"
    assert data.pairs[2].source == "leandojo:Mathlib/Data/List/Basic.lean:42"


def test_leandojo_errors(tmp_path: Path) -> None:
    bad = tmp_path / "train.json"
    bad.write_text('[{"full_name": "x"', encoding="utf-8")
    with pytest.raises(DataError, match=r"train\.json: not valid JSON"):
        read_leandojo(bad)
    broken = [dict(DOJO[0]), dict(DOJO[1])]
    del broken[1]["file_path"]
    with pytest.raises(DataError, match=r"entry 1 .*file_path"):
        read_leandojo(write_json(tmp_path / "b" / "train.json", broken))
    with pytest.raises(DataError, match="not a LeanDojo"):
        read_leandojo(write_json(tmp_path / "c" / "train.json", {"theorems": []}))


def test_leandojo_split_dir(tmp_path: Path) -> None:
    root = tmp_path / "leandojo_benchmark_4"
    write_json(root / "random" / "train.json", DOJO[:1])
    write_json(root / "random" / "test.json", DOJO[1:])
    assert [p.name for p in leandojo_split_files(root / "random")] == ["train.json", "test.json"]
    # as training pairs, a split directory means its train.json
    pairs = load_pairs([root / "random"])
    assert pairs.height == 2 and set(pairs["theorem"]) == {"Nat.my_add_comm"}
    with pytest.raises(DataError, match="random"):
        leandojo_split_files(root)  # the root holds split dirs: the error names them


MINIF2F_HEADER = ("import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\n"
                  "open BigOperators Real Nat Topology Rat\n\n")
MINIF2F_ROWS = [
    {
        "name": "mathd_algebra_478",
        "split": "test",
        "informal_prefix": "/-- The volume of a cone is given by the formula $V = \\frac{1}{3}Bh$. "
                           "Show that it is 65.-/\n",
        "formal_statement": "theorem mathd_algebra_478 (b h v : ℝ) (h₀ : 0 < b ∧ 0 < h ∧ 0 < v) "
                            "(h₁ : v = 1 / 3 * (b * h))\n    (h₂ : b = 30) (h₃ : h = 13 / 2) : v = 65 := by\n",
        "goal": "b h v : ℝ\nh₀ : 0 < b ∧ 0 < h ∧ 0 < v\nh₁ : v = 1 / 3 * (b * h)\nh₂ : b = 30\n"
                "h₃ : h = 13 / 2\n⊢ v = 65",
        "header": MINIF2F_HEADER,
    },
    {
        "name": "amc12a_2019_p21",
        "split": "valid",
        "informal_prefix": "/-- Let $z$ be a complex number. -/\n",
        "formal_statement": "theorem amc12a_2019_p21 (z : ℂ) (h₀ : z = (1 + Complex.I) / Real.sqrt 2) :\n"
                            "  (∑ k ∈ Finset.Icc 1 12, z ^ k ^ 2) * (∑ k ∈ Finset.Icc 1 12, 1 / z ^ k ^ 2) = 36 :=",
        "goal": "z : ℂ\n⊢ ...",
        "header": MINIF2F_HEADER,
    },
    {  # the DeepSeek few-shot rows carry a formal proof
        "name": "mathd_algebra_182",
        "split": "valid",
        "informal_prefix": "/-- Expand the following expression: $7(3y+2)$ Show that it is 21y+14.-/\n",
        "formal_statement": "theorem mathd_algebra_182 (y : ℂ) : 7 * (3 * y + 2) = 21 * y + 14 := by\n",
        "formal_proof": "  /- We apply the distributive property. -/\n  ring",
        "header": MINIF2F_HEADER,
    },
]


def test_minif2f_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "minif2f.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in MINIF2F_ROWS), encoding="utf-8")
    thms = read_minif2f_jsonl(path)
    assert [t.name for t in thms] == ["mathd_algebra_478", "amc12a_2019_p21", "mathd_algebra_182"]
    assert [t.split for t in thms] == ["test", "valid", "valid"]
    assert [t.family for t in thms] == ["mathd_algebra", "amc12a", "mathd_algebra"]
    assert all(t.preamble == MINIF2F_HEADER for t in thms)
    assert thms[0].statement.endswith("(h₂ : b = 30) (h₃ : h = 13 / 2) : v = 65")
    assert "volume" not in thms[0].statement and thms[0].proof == []
    assert thms[1].statement.startswith("(z : ℂ)") and thms[1].statement.endswith("= 36")
    assert thms[2].proof == ["ring"]
    # the rendered theorem is the formal statement again (modulo the proof)
    assert render_theorem(thms[0]).startswith(MINIF2F_ROWS[0]["formal_statement"])


def test_minif2f_jsonl_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    row = dict(MINIF2F_ROWS[0], split="dev")
    path.write_text(json.dumps(MINIF2F_ROWS[1]) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.jsonl:2: unknown split 'dev'"):
        read_minif2f_jsonl(path)
    path.write_text(json.dumps({"name": "x", "formal_statement": "def x := 1"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="0 theorems"):
        read_minif2f_jsonl(path)


def test_minif2f_one_file_per_problem(tmp_path: Path) -> None:
    """yangky11/miniF2F-lean4 layout: MiniF2F/Test/<name>.lean, MiniF2F/Valid/<name>.lean."""
    header = "import Mathlib\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
    files = {
        "MiniF2F/Test/amc12a_2020_p10.lean": header + "theorem amc12a_2020_p10\n  (n : ℕ)\n  (h₀ : 1 < n)\n"
        "  (h₁ : Real.logb 2 (Real.logb 16 n) = Real.logb 4 (Real.logb 4 n)) :\n"
        "  (Nat.digits 10 n).sum = 13 := by sorry",
        "MiniF2F/Test/imo_1981_p6.lean": header + "theorem imo_1981_p6\n  (f : ℕ → ℕ → ℕ)\n"
        "  (h₀ : ∀ y, f 0 y = y + 1) :\n  f 4 1981 = f 4 1981 := by\nsorry\n",
        "MiniF2F/Valid/mathd_numbertheory_3.lean": header + "theorem mathd_numbertheory_3 :\n"
        "  (∑ x ∈ Finset.range 10, ((x + 1)^2)) % 10 = 5 := by\n  norm_num [Finset.sum_range_succ]\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    thms = read_lean_dir(tmp_path)
    assert [(t.name, t.split, t.family) for t in thms] == [
        ("amc12a_2020_p10", "test", "amc12a"),
        ("imo_1981_p6", "test", "imo"),
        ("mathd_numbertheory_3", "valid", "mathd_numbertheory"),
    ]
    assert thms[0].statement == ("(n : ℕ)\n  (h₀ : 1 < n)\n  (h₁ : Real.logb 2 (Real.logb 16 n) = Real.logb 4 "
                                 "(Real.logb 4 n)) :\n  (Nat.digits 10 n).sum = 13")
    assert thms[1].proof == []  # `sorry` at column 0
    assert thms[2].proof == ["norm_num [Finset.sum_range_succ]"]
    assert thms[0].preamble == header.rstrip() + "\n"
    assert thms[0].source == "MiniF2F/Test/amc12a_2020_p10.lean"


def test_minif2f_family() -> None:
    assert minif2f_family("mathd_numbertheory_1124") == "mathd_numbertheory"
    assert minif2f_family("induction_12dvd4expnp1p20") == "induction"
    assert minif2f_family("aime_1983_p1") == "aime"
