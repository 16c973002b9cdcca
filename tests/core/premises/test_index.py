"""Premise retrieval under the premise rule, on a small library made here (a module graph and typed premises):
what a library theorem may cite is its module's import closure only; a theorem of a user's file gets its own
preamble's lemmas first, then the library; nothing stated after the theorem, the theorem itself, or an
inaccessible premise is ever returned."""

from __future__ import annotations

import pytest

from burnqed_core.errors import DataError
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.local import file_premises
from burnqed_core.premises.records import Premise
from burnqed_core.premises.tokens import name_pieces, text_tokens
from burnqed_core.records import Theorem

# A.Base <- A.List <- A.ListLemmas <- A.Top ; B.Other stands apart (imports A.Base only)
GRAPH = {
    "A.Base": [],
    "A.List": ["A.Base"],
    "A.ListLemmas": ["A.List"],
    "A.Top": ["A.ListLemmas"],
    "B.Other": ["A.Base"],
}
PREMISES = [
    Premise(name="Nat.add_zero_right", type="∀ (n : Nat), n + 0 = n", module="A.Base"),
    Premise(name="Nat.zero_add_left", type="∀ (n : Nat), 0 + n = n", module="A.Base"),
    Premise(name="List.length_nil", type="[].length = 0", module="A.List"),
    Premise(name="List.map_append", type="∀ {f : α → β} {l₁ l₂ : List α}, List.map f (l₁ ++ l₂) = "
                                          "List.map f l₁ ++ List.map f l₂", module="A.ListLemmas"),
    Premise(name="List.length_append", type="∀ {l₁ l₂ : List α}, (l₁ ++ l₂).length = l₁.length + l₂.length",
            module="A.ListLemmas"),
    Premise(name="List.map_append_other", type="List.map f (a ++ b) = List.map f a ++ List.map f b",
            module="B.Other"),
]


@pytest.fixture(scope="module")
def index() -> PremiseIndex:
    return PremiseIndex(PREMISES, GRAPH)


def lib(name: str, module: str) -> Theorem:
    return Theorem(name=name, statement=": True", module=module)


def names(index: PremiseIndex, thm: Theorem, goal: str, k: int = 10) -> list[str]:
    return [r.premise.name for r in index.retrieve(thm, goal, k)]


def test_pieces() -> None:
    assert name_pieces("List.getElem?_map") == ["list", "get", "elem", "getelem", "map"]
    assert name_pieces("Nat.succ_le_of_lt") == ["nat", "succ", "le", "of", "lt"]
    toks = text_tokens("⊢ ∀ {α : Type u_1} (l₁ l₂ : List α), List.map f (l₁ ++ l₂) = l₁.length")
    assert {"list", "map", "List.map", "++", "length"} <= set(toks)
    assert "u_1" not in toks and "f" not in toks


def test_the_best_premise_comes_first(index: PremiseIndex) -> None:
    got = names(index, lib("t", "A.Top"), "⊢ List.map g (xs ++ ys) = List.map g xs ++ List.map g ys")
    assert got[0] == "List.map_append"


def test_only_the_import_closure_of_the_module(index: PremiseIndex) -> None:
    goal = "⊢ List.map g (xs ++ ys) = List.map g xs ++ List.map g ys ∧ (xs ++ ys).length = 0 + 0"
    for module in GRAPH:
        allowed = index.accessible_modules(lib("t", module))
        assert allowed is not None and module not in allowed
        for r in index.retrieve(lib("t", module), goal, 10):
            assert r.premise.module in allowed, (module, r.premise)
    # a theorem of A.List never sees A.ListLemmas (after it) nor its own module nor B.Other
    assert set(names(index, lib("t", "A.List"), goal)) <= {"Nat.add_zero_right", "Nat.zero_add_left"}
    # B.Other's own premise is not retrieved for B.Other's theorem, and A.ListLemmas is not imported by it
    assert not set(names(index, lib("t", "B.Other"), goal)) & {"List.map_append_other", "List.map_append"}


def test_the_theorem_itself_is_never_retrieved(index: PremiseIndex) -> None:
    thm = Theorem(name="List.map_append", statement=": True")  # a file theorem that restates a library name
    assert "List.map_append" not in names(index, thm, "⊢ List.map f (a ++ b) = List.map f a ++ List.map f b")


def test_unknown_module_is_an_error(index: PremiseIndex) -> None:
    with pytest.raises(DataError, match="not in the premise index"):
        index.retrieve(lib("t", "C.Nowhere"), "⊢ List.map f [] = []", 3)


PREAMBLE = """namespace Q
def twirl : List Nat → List Nat
  | [] => []
  | x :: xs => (x + 1) :: twirl xs

theorem twirl_append (a b : List Nat) : twirl (a ++ b) = twirl a ++ twirl b := by
  induction a <;> simp_all [twirl]

theorem twirl_length (a : List Nat) : (twirl a).length = a.length := by
  induction a <;> simp_all [twirl]
end Q
open Q
"""


def test_file_premises_are_the_preamble_declarations() -> None:
    got = file_premises(PREAMBLE)
    assert [(p.name, p.kind) for p in got] == [("Q.twirl", "definition"), ("Q.twirl_append", "theorem"),
                                               ("Q.twirl_length", "theorem")]
    assert "twirl (a ++ b) = twirl a ++ twirl b" in got[1].type
    assert all(p.local for p in got)


def test_a_user_file_gets_its_own_lemmas_first_then_the_library(index: PremiseIndex) -> None:
    thm = Theorem(name="Q.twirl_twice", statement="(a b c : List Nat) : twirl (a ++ b ++ c) = twirl a ++ twirl b "
                  "++ twirl c", preamble=PREAMBLE)
    got = index.retrieve(thm, "⊢ twirl (a ++ b ++ c) = twirl a ++ twirl b ++ twirl c", 4)
    assert got[0].premise.name == "Q.twirl_append"
    assert [r.rank for r in got] == list(range(len(got)))
    assert any(not r.premise.local for r in got)  # the library fills the other half
    # a lemma stated after the theorem is not in its preamble, so never retrieved
    later = Theorem(name="Q.early", statement="(a : List Nat) : twirl a = twirl a",
                    preamble=PREAMBLE.split("theorem twirl_append")[0])
    assert {r.premise.name for r in index.retrieve(later, "⊢ twirl (a ++ b) = twirl a ++ twirl b", 6)
            if r.premise.local} <= {"Q.twirl"}


def test_index_refuses_file_premises_and_unknown_modules() -> None:
    with pytest.raises(DataError, match="library premises only"):
        PremiseIndex([Premise(name="x", type="True")], GRAPH)
    with pytest.raises(DataError, match="import graph lacks"):
        PremiseIndex([Premise(name="x", type="True", module="Z")], GRAPH)


def test_the_index_of_pool_searches_holds_nothing_of_the_held_out_families() -> None:
    """Issue 65: the loop's pool searches retrieve from an index without the module families of core:dev and
    core:test (and of every eval set), whatever a pool module imports; the eval keeps the whole index."""
    from burnqed_core.config import load_profile
    from burnqed_core.data.theorems.core_pool import module_family
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.loop.corpus import held_out_families

    prof = load_profile("core", environ={})
    held = held_out_families(prof.data.benchmark, prof.eval.also, prof.data.search_pool)
    for spec in ("core:dev", "core:test"):
        assert {module_family(t.module) for t in load_theorems(spec)} <= held
    assert not {module_family(t.module) for t in load_theorems("core:pool")} & held
    graph = {"Init.Data.List.Basic": [], "Init.Data.String.Lemmas": ["Init.Data.List.Basic"],
             "Init.Data.List.Lemmas": ["Init.Data.List.Basic", "Init.Data.String.Lemmas"]}
    premises = [Premise(name="List.append_nil'", type="l ++ [] = l", module="Init.Data.List.Basic"),
                Premise(name="String.append_nil'", type="s ++ \"\" = s", module="Init.Data.String.Lemmas")]
    full = PremiseIndex(premises, graph)
    pool_index = full.without_families(held)
    thm = lib("List.foo", "Init.Data.List.Lemmas")
    goal = "⊢ l ++ [] = l ∧ s ++ \"\" = s"
    assert {r.premise.name for r in full.retrieve(thm, goal, 5)} == {"List.append_nil'", "String.append_nil'"}
    assert [r.premise.name for r in pool_index.retrieve(thm, goal, 5)] == ["List.append_nil'"]
    assert all(module_family(p.module) not in held for p in pool_index.premises)
    assert full.without_families(set()) is full
