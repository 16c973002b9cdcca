"""Held-out hygiene by statement, and no swallowed errors on earlier outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.data.hygiene import (
    HeldOutLeakError,
    check_training_pairs,
    goal_key,
    load_training_pairs,
    same_statement,
    statement_key,
)
from burnqed_core.data.selection import select_theorems
from burnqed_core.data.theorems import load_theorems
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.eval.run import RESULTS_FILE, earlier_solved
from burnqed_core.record_io import write_parquet
from burnqed_core.records import EvalResult, TacticPair, Theorem


def test_statement_key_ignores_names_binders_and_layout() -> None:
    a = statement_key("(xs : List Nat) : mirror (mirror xs) = xs")
    assert a == statement_key("(ys : List Nat) :\n    mirror (mirror ys) = ys  -- involutive")
    assert a == statement_key("(l : List Nat) : mirror /- twice -/ (mirror l) = l")
    assert a != statement_key("(xs : List Nat) : mirror xs = xs")
    assert statement_key("(a b : Nat) : a + b = b + a") != statement_key("(a b : Nat) : b + a = a + b")
    assert goal_key("xs : List Nat\n⊢ mirror (mirror xs) = xs") == goal_key("l : List Nat\n⊢ mirror (mirror l) = l")


def test_a_benchmark_theorem_renamed_in_the_corpus_is_not_selected() -> None:
    bench = load_theorems("bundled:benchmark")
    victim = bench[5]
    copy = victim.model_copy(update={"name": "innocent_looking_name", "split": "train",
                                     "statement": " ".join(victim.statement.split()) + "  ",
                                     "proof": ["intro h", "simp"]})
    corpus = [Theorem(name=f"c{i}", statement=f"(n : Nat) : n + {i} = {i} + n", proof=["omega", "rfl"])
              for i in range(20)] + [copy]
    assert same_statement(corpus, bench) == {"innocent_looking_name": victim.name}
    by_name_only = select_theorems(corpus, 100, seed=0, held_out={t.name for t in bench})
    assert "innocent_looking_name" in {t.name for t in by_name_only.theorems}  # what a name check misses
    sel = select_theorems(corpus, 100, seed=0, held_out={t.name for t in bench}, held_out_theorems=bench)
    assert "innocent_looking_name" not in {t.name for t in sel.theorems}
    assert sel.stats.excluded_held_out == 1 and sel.stats.selected == 20


def test_training_pairs_holding_a_benchmark_statement_fail_loudly(tmp_path: Path) -> None:
    bench = [Theorem(name="b_mirror", statement="(xs : List Nat) : xs.reverse.reverse = xs", split="benchmark")]
    clean = [TacticPair(theorem="c1", state_before="n : Nat\n⊢ n + 0 = n", tactic="simp", state_after="", depth=0)]
    roots = {"b_mirror": "xs : List Nat\n⊢ xs.reverse.reverse = xs"}
    check_training_pairs(bench, clean, roots)
    renamed = [*clean, TacticPair(theorem="other_name", state_before="l : List Nat\n⊢ l.reverse.reverse = l",
                                  tactic="simp", state_after="", depth=0)]
    with pytest.raises(HeldOutLeakError, match=r"b_mirror \(as other_name\)"):
        check_training_pairs(bench, renamed, roots)
    same_name = [*clean, TacticPair(theorem="b_mirror", state_before="x", tactic="simp", state_after="", depth=1)]
    with pytest.raises(HeldOutLeakError, match=r"b_mirror \(same name\)"):
        check_training_pairs(bench, same_name)
    write_parquet(renamed, tmp_path / "pairs" / "train.parquet", TacticPair)
    write_parquet(clean, tmp_path / "pairs" / "val.parquet", TacticPair)
    assert len(load_training_pairs([tmp_path / "pairs"])) == 3
    with pytest.raises(DataError, match="nowhere"):
        load_training_pairs([tmp_path / "nowhere"])


def test_earlier_results_missing_or_corrupt_raise_naming_the_file(tmp_path: Path) -> None:
    good = tmp_path / "iter_0" / "eval"
    rows = [EvalResult(iteration=0, benchmark="b", theorem="t1", budget=8, proved=True, nodes_to_proof=3,
                       nodes_used=3, time_s=1.0, proof=["simp"]),
            EvalResult(iteration=0, benchmark="b", theorem="t2", budget=8, proved=False, nodes_used=8, time_s=1.0)]
    write_parquet(rows, good / RESULTS_FILE, EvalResult)
    assert earlier_solved([good]) == {"t1"}
    missing = tmp_path / "iter_1" / "eval"
    with pytest.raises(DataError, match=str(missing / RESULTS_FILE)):
        earlier_solved([good, missing])
    corrupt = tmp_path / "iter_2" / "eval"
    corrupt.mkdir(parents=True)
    (corrupt / RESULTS_FILE).write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(BurnqedError, match=str(corrupt / RESULTS_FILE)):
        earlier_solved([good, corrupt])
