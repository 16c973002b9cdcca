"""(type -> name) pre-training pairs of the library (issue 65): nothing of a core:dev or core:test module family
(statement, name or step) and no search-pool theorem reaches pre-training; shortest statements first."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.core_pool import module_family
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.install import lean_identity
from burnqed_core.loop.corpus import held_out_families
from burnqed_core.loop.stages.base_model import Settings, library_training_pairs
from burnqed_core.premises.library import LIBRARY_RULES, LibraryBuild, write_library
from burnqed_core.premises.pretraining import library_pairs
from burnqed_core.premises.records import Premise


def test_library_pairs_keep_out_held_out_families_and_the_pool_itself(tmp_path: Path) -> None:
    prof = load_profile("core", environ={}, overrides={"data.library_pairs": 10})
    test_thm, dev_thm, pool_thm = (load_theorems(s)[0] for s in ("core:test", "core:dev", "core:pool"))
    premises = [
        Premise(name="List.short_one", type="[] = []", module="Init.Data.List.Basic"),
        Premise(name="List.longer_one", type="∀ (l : List Nat), l ++ [] = l", module="Init.Data.List.Basic"),
        Premise(name="Nat.«weird name»", type="0 = 0", module="Init.Data.Nat.Basic"),
        Premise(name=test_thm.name, type="True", module=test_thm.module),
        Premise(name="Other.in_a_test_family", type="1 = 1", module=test_thm.module),
        Premise(name="Other.in_a_dev_family", type="2 = 2", module=dev_thm.module),
        Premise(name=pool_thm.name, type="3 = 3", module=pool_thm.module),
    ]
    graph = {m: [] for m in {p.module for p in premises}}
    folder = write_library(tmp_path / "premise_index", premises, graph,
                           LibraryBuild(key="k", lean=lean_identity(), rules=LIBRARY_RULES.model_dump(mode="json"),
                                        premises=len(premises), modules=len(graph), modules_read=len(graph)))
    pairs = library_training_pairs(Settings.of(prof), folder)
    held = held_out_families(prof.data.benchmark, prof.eval.also, prof.data.search_pool)
    assert [p.theorem for p in pairs] == ["Nat.«weird name»", "List.short_one", "List.longer_one"]  # shortest first
    by = {p.theorem: p for p in pairs}
    assert by["List.short_one"].state_before == "⊢ [] = []" and by["List.short_one"].tactic == "exact List.short_one"
    assert by["Nat.«weird name»"].tactic == "exact Nat.«weird name»"
    for p in pairs:
        assert module_family(next(x.module for x in premises if x.name == p.theorem)) not in held
    assert not {test_thm.name, dev_thm.name, pool_thm.name} & set(by)
    # off by default (tiny): none, and no premise index needed
    assert library_training_pairs(Settings.of(load_profile("tiny", environ={})), None) == []
    assert library_pairs(premises, 0, held_out_families=(), exclude_names=()) == []
