"""Lean's own library read by the worker's trusted header (`library.lean`), on the real embedded Lean: the
enumeration finds known theorems of small modules with their exact types, a theorem is posed by its stored type
(`burnqed_type%`), and the import graph is Lean's."""

from __future__ import annotations

import pytest

from burnqed_core.lean.library import module_graph, scan_modules, type_statement
from burnqed_core.lean.pool import LeanPool
from burnqed_core.records import Theorem

pytestmark = pytest.mark.lean

ADD_COMM = Theorem(name="Nat.add_comm", statement=type_statement("Init.Data.Nat.Basic", "Nat.add_comm"))
MAP_APPEND = Theorem(name="List.map_append", statement=type_statement("Init.Data.List.Lemmas", "List.map_append"))


async def test_enumeration_finds_known_theorems_with_their_exact_types(lean_pool: LeanPool) -> None:
    scans = await scan_modules(lean_pool, ["Init.Data.Nat.Basic", "Init.Core"], max_size=60)
    assert [s.module for s in scans] == ["Init.Data.Nat.Basic", "Init.Core"]
    by = {t.name: t for s in scans for t in s.theorems}
    add = by["Nat.add_comm"]
    assert (add.module, add.type, add.universes) == ("Init.Data.Nat.Basic", "∀ (n m : Nat), n + m = m + n", 0)
    assert add.type_modules == ["Init.Prelude"]
    inj = by["Nat.succ_inj"]
    assert inj.type == "∀ {a b : Nat}, a.succ = b.succ ↔ a = b" and inj.module == "Init.Data.Nat.Basic"
    assert inj.type_modules == ["Init.Core", "Init.Prelude"]  # Iff is declared in Init.Core
    # near-twin skeleton: binder names and kinds erased, Nat abstracted, the logic kept
    assert inj.skeleton.startswith("(P T (P T ((Iff") and "succ" in inj.skeleton
    # theorems only: no definition, no instance, no internal or private name, no true axiom
    assert "Nat.add" not in by and "propext" not in by and "Quot.sound" not in by
    assert not any(n.startswith("_") or "._" in n or ".match_" in n for n in by)
    assert all(s.skipped.get("name", 0) > 0 for s in scans)  # `_simp_` auxiliaries, private equations ...
    # the size limit: a tighter one keeps fewer
    small = await scan_modules(lean_pool, ["Init.Data.Nat.Basic"], max_size=12)
    assert len(small[0].theorems) < len(scans[0].theorems) and small[0].skipped["size"] > 0
    assert all(t.size <= 12 for t in small[0].theorems)


async def test_module_graph_is_leans(lean_pool: LeanPool) -> None:
    graph = await module_graph(lean_pool)
    assert graph["Init.Prelude"] == []
    assert "Init.Prelude" in graph["Init.Coe"]
    assert set(graph["Init.Data.Nat.Basic"]) >= {"Init.SimpLemmas"}
    assert all(i in graph for imports in graph.values() for i in imports)  # closed under imports
    assert sum(m.startswith("Init.") for m in graph) > 400


async def test_a_theorem_is_posed_by_its_stored_type(lean_pool: LeanPool) -> None:
    start = await lean_pool.start_proof(ADD_COMM)
    assert start.ok and start.state is not None
    assert start.state.goals == ("⊢ ∀ (n m : Nat), n + m = m + n",)
    # universe parameters become the declaration's own
    start = await lean_pool.start_proof(MAP_APPEND)
    assert start.ok and start.state is not None and "List.map f (l₁ ++ l₂)" in start.state.goals[0]
    check = await lean_pool.check_proof(MAP_APPEND, ["intro α β f l₁ l₂", "induction l₁ <;> simp_all"])
    assert check.ok, check.errors
    # exactly the stored type: the trusted statement and the type written out are one type to the kernel
    rep = await lean_pool.judge("", f"axiom burnqed_checked {ADD_COMM.statement}",
                                "theorem burnqed_checked : ∀ (n m : Nat), n + m = m + n := by\n  intro n m\n  omega",
                                ["burnqed_checked"])
    assert rep.verdicts["burnqed_checked"].status == "ok"
    rep = await lean_pool.judge("", f"axiom burnqed_checked {ADD_COMM.statement}",
                                "theorem burnqed_checked : ∀ (n m : Nat), n + m = n + m := by\n  intro n m\n  rfl",
                                ["burnqed_checked"])
    assert rep.verdicts["burnqed_checked"].status == "type_differs"


async def test_a_wrong_module_or_name_does_not_start(lean_pool: LeanPool) -> None:
    for t in (Theorem(name="x", statement=type_statement("Init.Core", "Nat.add_comm")),
              Theorem(name="y", statement=type_statement("Init.Data.Nat.Basic", "Nat.no_such_theorem"))):
        r = await lean_pool.start_proof(t)
        assert not r.ok and "burnqed_type%" in r.message


LEMMAS = Theorem(name="Nat.add_lt_iff_lt_sub_right", module="Init.Data.Nat.Lemmas",
                 statement=type_statement("Init.Data.Nat.Lemmas", "Nat.add_lt_iff_lt_sub_right"))
ADD_COMM_M = ADD_COMM.model_copy(update={"module": "Init.Data.Nat.Basic"})
IRREFL = Theorem(name="Nat.lt_irrefl", module="Init.Prelude", statement=type_statement("Init.Prelude", "Nat.lt_irrefl"))


async def test_premise_rule_refuses_the_theorem_itself_and_later_lemmas(lean_pool: LeanPool) -> None:
    # an honest proof: omega's lemmas come from modules Init.Data.Nat.Lemmas imports
    honest = await lean_pool.check_proof(LEMMAS, ["intro a b c", "omega"])
    assert honest.ok, honest.errors
    # the theorem itself
    self_ = await lean_pool.check_proof(LEMMAS, ["exact @Nat.add_lt_iff_lt_sub_right"])
    assert not self_.ok and "premise rule" in self_.errors[0]
    assert "Nat.add_lt_iff_lt_sub_right (Init.Data.Nat.Lemmas)" in self_.errors[0]
    # later lemmas: omega's (Init.Omega, after Init.Data.Nat.Basic), and one named in the proof
    later = await lean_pool.check_proof(ADD_COMM_M, ["intro n m", "omega"])
    assert not later.ok and "premise rule" in later.errors[0] and "Init.Omega" in later.errors[0]
    named = await lean_pool.check_proof(IRREFL, ["exact fun n h => Nat.lt_asymm h h"])
    assert not named.ok and "Nat.lt_asymm" in named.errors[0]
    # the same proof of a theorem without a module: no premise rule
    plain = await lean_pool.check_proof(ADD_COMM, ["intro n m", "omega"])
    assert plain.ok, plain.errors
