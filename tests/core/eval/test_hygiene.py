"""Held-out hygiene by statement, and no swallowed errors on earlier outputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from burnqed_core.data.synthetic.families import FAMILIES
from burnqed_core.data.synthetic.generate_sets import family_theorems, generate
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.eval.hygiene import (
    HeldOutLeakError,
    check_no_twins,
    check_training_pairs,
    goal_key,
    load_training_pairs,
    same_statement,
    statement_key,
)
from burnqed_core.eval.run import RESULTS_FILE, earlier_solved
from burnqed_core.loop.selection import select_theorems
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


# a renamed copy of the corpus's tree_mirror_bump_2: namespace, type, constructors, definitions, bound names
# and numerals all renamed
RENAMES = {"Bq_tree_mirror_bump_2": "Zz_copy", "Pile": "Shrub", "neg": "stub", "high": "branch",
           "normalize": "tally", "height": "depthOf", "trim": "flipAll", "concat": "sumAll", "evaluate": "addAll",
           "weigh": "walk", "acc": "ys", "d": "t", "l": "u", "r": "v", "x": "y", "k": "m", "2": "7"}


def renamed_copy(t: Theorem, name: str = "innocuous") -> Theorem:
    def sub(text: str) -> str:
        return re.sub(r"\b\w+\b", lambda m: RENAMES.get(m.group(0), m.group(0)), text)

    return Theorem(name=name, statement=sub(t.statement), preamble=sub(t.preamble), split="test",
                   source="user.lean")


@pytest.fixture(scope="module")
def corpus() -> list[Theorem]:
    return load_theorems("bundled:corpus")


def test_a_renamed_copy_of_a_corpus_theorem_raises_naming_both(corpus: list[Theorem]) -> None:
    original = next(t for t in corpus if t.name == "tree_mirror_bump_2")
    copy = renamed_copy(original)
    assert copy.statement == "(t : Shrub) : flipAll (addAll 7 t) = addAll 7 (flipAll t)"
    assert not ({"Pile", "trim", "evaluate"} & set(re.findall(r"\w+", copy.preamble)))
    others = load_theorems("bundled:handwritten")[:5]
    check_no_twins(others, corpus, where="mine.lean")
    # the other instances of its template have other numerals: twins too
    with pytest.raises(HeldOutLeakError, match=r"^mine\.lean: benchmark theorem innocuous is a twin of corpus "
                       r"theorems tree_mirror_bump_2, tree_mirror_bump_3, .*\(same canonical form\)"):
        check_no_twins([*others, copy], corpus, where="mine.lean")
    with pytest.raises(HeldOutLeakError, match=r"twin of corpus theorem tree_mirror_bump_2 \(same canonical "
                       r"form\)"):
        check_no_twins([copy], [original], where="mine.lean")


def test_the_generators_known_twins_are_caught() -> None:
    """fork_tips_forks ~ stk_lits_ops and fork_tips_pos ~ stk_lits_pos, from the families before the
    generator's twin filter; the bundled benchmark holds neither."""
    fams = {f.name: f for f in FAMILIES}
    fork, stk = family_theorems(fams["fork"]), family_theorems(fams["stk"])
    with pytest.raises(HeldOutLeakError) as err:
        check_no_twins(fork, stk, where="bundled:benchmark")
    msg = str(err.value)
    for b, c in (("fork_tips_forks", "stk_lits_ops"), ("fork_tips_pos", "stk_lits_pos")):
        assert f"benchmark theorem {b} is a twin of corpus theorem {c} (same canonical form)" in msg
    with pytest.raises(HeldOutLeakError, match=r"benchmark theorem fork_swap_swap is a twin of corpus theorem "
                       r"tree_mirror_mirror \(same proof skeleton\)"):
        check_no_twins(fork, family_theorems(fams["tree"]), where="bundled:benchmark")
    assert not {"fork_tips_forks", "fork_tips_pos"} & {t.name for t in generate()["benchmark"]}
