"""Near-twins and similarity (`burnqed_core.data.twins.near_twins`); no Lean."""

from __future__ import annotations

import random

import pytest

from burnqed_core.data.synthetic.catalogue import BY_NAME
from burnqed_core.data.synthetic.generate_sets import family_theorems
from burnqed_core.data.twins.canonical import canonical_form, find_twins, proof_skeleton
from burnqed_core.data.twins.near_twins import (
    STRONG,
    NearTwin,
    find_near_twins,
    forms_of,
    near_twin_form,
    near_twin_groups,
    similarity,
)
from burnqed_core.data.twins.similarity import nearest_neighbours, similarity_report
from burnqed_core.eval.hygiene import HeldOutLeakError, check_no_twins
from burnqed_core.records import Theorem


def thm(name: str, statement: str, preamble: str = "", proof: list[str] | None = None) -> Theorem:
    return Theorem(name=name, statement=statement, preamble=preamble, proof=proof or [])


# --- the two known skeleton cases ----------------------------------------------------------------------------------


def test_one_script_over_definitions_of_another_size_is_a_skeleton_twin() -> None:
    """``weave_dup_length`` (a list function binding three names) and ``aff_closed_0_2`` (a recursion on Nat
    binding one): ``induction x; simp [f]; simp [f]; omega`` both, numbered from the statement."""
    weave = {t.name: t for t in family_theorems(BY_NAME["weave"])}["weave_dup_length"]
    aff = {t.name: t for t in family_theorems(BY_NAME["aff"])}["aff_closed_0_2"]
    assert proof_skeleton(weave) == proof_skeleton(aff) == "induction u1\nsimp [ u2 ]\nsimp [ u2 ]\nomega"
    assert canonical_form(weave) != canonical_form(aff)
    assert [(t.benchmark, t.corpus, t.how) for t in find_twins([aff], [weave])] == [
        ("weave_dup_length", "aff_closed_0_2", "skeleton")]
    assert [(n.theorem, n.how) for n in find_near_twins([aff], [weave], partial=False)] == [
        ("weave_dup_length", "skeleton")]


# --- a near-twin by binder style and order and an isomorphic definition --------------------------------------------

EVEN = """\
inductive Ev : Nat → Prop
  | zero : Ev 0
  | step {n : Nat} : Ev n → Ev (n + 2)
"""
EVEN_ADD = thm("even_add", "(m n : Nat) (hm : Ev m) (hn : Ev n) : Ev (m + n)", EVEN,
               ["induction hn", "· simpa using hm", "· rw [← Nat.add_assoc]\n  exact Ev.step ‹_›"])
# Another name for the predicate and its constructors, the constructors listed the other way round, an explicit
# binder where the original has an implicit one, `where`, the statement's binders in another order, a hypothesis
# stated as an arrow, another proof.
TWICE = """\
namespace Other
inductive Twice : Nat → Prop where
  | more : (k : Nat) → Twice k → Twice (k + 2)
  | none : Twice 0
end Other
open Other
"""
TWICE_ADD = thm("twice_add", "(b : Nat) (hb : Twice b) (a : Nat) : Twice a → Twice (a + b)", TWICE,
                ["intro ha", "induction hb", "· exact ha", "· constructor\n  assumption"])


def test_binder_style_and_order_and_an_isomorphic_definition_make_a_near_twin() -> None:
    assert canonical_form(EVEN_ADD) != canonical_form(TWICE_ADD)  # not a twin
    assert proof_skeleton(EVEN_ADD) != proof_skeleton(TWICE_ADD)
    assert find_twins([EVEN_ADD], [TWICE_ADD]) == []
    assert near_twin_form(EVEN_ADD) == near_twin_form(TWICE_ADD)
    assert find_near_twins([EVEN_ADD], [TWICE_ADD]) == [
        NearTwin(theorem="twice_add", other="even_add", how="near_statement", similarity=1.0)]
    assert similarity(EVEN_ADD, TWICE_ADD) == 1.0
    # the form says what the telescope is: variables by their first mention in the conclusion, hypotheses
    # without names and sorted, the constructors sorted
    assert near_twin_form(EVEN_ADD).splitlines()[-1] == \
        "theorem ( x1 : Nat ) ( x2 : Nat ) ( _ : u1 x1 ) ( _ : u1 x2 ) ⊢ u1 ( x1 + x2 )"


@pytest.mark.parametrize("statement", [
    "(m n : Nat) (hm : Ev m) (hn : Ev n) : Ev (m * n)",      # another operation
    "(m n : Nat) (hm : Ev m) : Ev (m + n)",                  # a hypothesis fewer
    "(m n : Nat) (hm : Ev m) (hn : Ev n) : Ev (n + m + 1)",  # another conclusion
])
def test_other_statements_are_not_near_twins(statement: str) -> None:
    other = thm("other", statement, EVEN)
    assert near_twin_form(other) != near_twin_form(EVEN_ADD)
    assert not [n for n in find_near_twins([EVEN_ADD], [other]) if n.strong]


def test_a_definition_that_is_not_isomorphic_is_no_near_twin() -> None:
    steps_of_three = EVEN.replace("Ev (n + 2)", "Ev (n * 3)")
    other = thm("other", EVEN_ADD.statement, steps_of_three)
    assert near_twin_form(other) != near_twin_form(EVEN_ADD)
    hows = {n.how for n in find_near_twins([EVEN_ADD], [other])}
    assert hows == {"statement_only"}  # the same statement over other definitions: reported, not refused


def test_a_user_copy_of_append_is_the_library_append() -> None:
    every = """\
inductive All {α : Type} (p : α → Prop) : List α → Prop
  | nil : All p []
  | cons {x : α} {xs : List α} : p x → All p xs → All p (x :: xs)
"""
    app = "def app {α : Type} : List α → List α → List α\n  | [], ys => ys\n  | x :: xs, ys => x :: app xs ys\n"
    with_lib = thm("with_lib", "{α : Type} (p : α → Prop) (xs ys : List α) (h1 : All p xs) (h2 : All p ys) : "
                               "All p (xs ++ ys)", every)
    with_copy = thm("with_copy", "(α : Type) (q : α → Prop) (ps qs : List α) (hq : All q qs) (hp : All q ps) : "
                                 "All q (app ps qs)", every + app)
    assert near_twin_form(with_lib) == near_twin_form(with_copy)
    length = "def len {α : Type} : List α → Nat\n  | [] => 0\n  | _ :: xs => len xs + 1\n"
    a = thm("a", "(xs : List Nat) : (xs ++ xs).length = 2 * xs.length")
    b = thm("b", "(ys : List Nat) : len (app ys ys) = 2 * len ys", app + length)
    assert near_twin_form(a) == near_twin_form(b)


def test_groups_are_transitive_and_do_not_depend_on_order() -> None:
    unrelated = thm("unrelated", "(n : Nat) : n + 0 = n", proof=["omega"])
    theorems = [EVEN_ADD, TWICE_ADD, unrelated]
    assert near_twin_groups(theorems) == [["even_add", "twice_add"]]
    for seed in range(4):
        shuffled = theorems[:]
        random.Random(seed).shuffle(shuffled)
        assert near_twin_groups(shuffled) == [["even_add", "twice_add"]]


def test_a_three_step_script_numbered_from_the_proof_is_a_near_twin() -> None:
    """``weave_snoc_eq`` and ``lst_app_nil``: one four-step script, the function the statement's third name in one
    and its second in the other; a two-step script is too generic to count."""
    weave = {t.name: t for t in family_theorems(BY_NAME["weave"])}["weave_snoc_eq"]
    lst = {t.name: t for t in family_theorems(BY_NAME["lst"])}["lst_app_nil"]
    assert proof_skeleton(weave) != proof_skeleton(lst)
    assert [n.how for n in find_near_twins([lst], [weave], partial=False)] == ["near_skeleton"]
    short_a = thm("a", "(n : Nat) (h : n < 0) : False", proof=["cases h", "omega"])
    short_b = thm("b", "(m k : Nat) (h : m < 0) : k = 7", proof=["cases h", "omega"])
    assert proof_skeleton(short_a) != proof_skeleton(short_b)  # `h` is the second name of one, the third of b
    assert not find_near_twins([short_a], [short_b], partial=False)


def test_similarity_is_symmetric_and_one_for_equal_forms() -> None:
    unrelated = thm("unrelated", "(xs : List Nat) : xs.reverse.reverse = xs", proof=["simp"])
    assert similarity(EVEN_ADD, EVEN_ADD) == 1.0
    assert similarity(EVEN_ADD, unrelated) == pytest.approx(similarity(unrelated, EVEN_ADD))
    assert 0.0 <= similarity(EVEN_ADD, unrelated) < 0.5
    assert similarity(EVEN_ADD, unrelated, "proof") is not None
    assert similarity(EVEN_ADD, thm("no_proof", "(n : Nat) : n = n"), "proof") is None
    (nn,) = nearest_neighbours([unrelated, TWICE_ADD], [EVEN_ADD])
    assert nn.definitions is not None and nn.definitions.other == "twice_add" and nn.definitions.similarity == 1.0


def test_the_report_block_lists_near_twins_and_spreads() -> None:
    unrelated = thm("unrelated", "(xs : List Nat) : xs.reverse.reverse = xs", proof=["simp"])
    report = similarity_report(forms_of([TWICE_ADD, unrelated]), [EVEN_ADD], reference_name="mine")
    assert report.theorems == 1 and report.reference_theorems == 2
    assert report.definitions is not None and report.definitions.median == 1.0
    assert [n.how for n in report.strong] == ["near_statement"]
    lines = "\n".join(report.lines())
    assert "even_add ~ twice_add (near_statement, 1.00)" in lines and "mine, 2 theorems" in lines
    assert set(report.counts()) <= STRONG | {"statement_only", "definitions", "similar"}


def test_hygiene_refuses_a_strong_near_twin() -> None:
    with pytest.raises(HeldOutLeakError, match=r"twice_add is a twin of corpus theorem even_add \(same statement"):
        check_no_twins([TWICE_ADD], [EVEN_ADD], where="test set")
    check_no_twins([thm("other", "(m n : Nat) (hm : Ev m) : Ev (m * n)", EVEN)], [EVEN_ADD], where="test set")
