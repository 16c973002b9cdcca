"""Premise retrieval on the real embedded Lean (the session `lean_pool`): the library's premises and import
graph read by Lean obey the premise rule for library theorems, and a premise step found by retrieval proves a
user-file theorem that neither the policy nor the automation proves alone, accepted by the trusted checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import AutomationConfig, PremiseStepsConfig, SearchConfig
from burnqed_core.data.theorems.core_pool import PoolRules
from burnqed_core.lean.install import lean_identity
from burnqed_core.lean.library import type_statement
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.library import cached_library, load_index, read_library_with_lean, write_library
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine

pytestmark = pytest.mark.lean

# three modules of the library: Lemmas imports Basic (List), Nat.Basic stands beside them
RULES = PoolRules(max_size=400, roots=["Init.Data.List.Basic", "Init.Data.List.Lemmas", "Init.Data.Nat.Basic"],
                  exclude_modules=[])


@pytest.fixture(scope="module")
async def library(lean_pool: ProofEnv, tmp_path_factory: pytest.TempPathFactory) -> tuple[PremiseIndex, Path]:
    premises, graph, build = await read_library_with_lean(lean_pool, lean_identity(), RULES)  # type: ignore[arg-type]
    assert build.modules_read == 3 and not build.modules_unread and build.premises == len(premises) > 500
    out = write_library(tmp_path_factory.mktemp("premises"), premises, graph, build)
    return load_index(out), out


def library_theorem(name: str, module: str) -> Theorem:
    return Theorem(name=name, statement=type_statement(module, name), module=module)


async def test_library_retrieval_follows_the_import_graph(library: tuple[PremiseIndex, Path]) -> None:
    index, _ = library
    modules = {p.module for p in index.premises}
    assert modules == {"Init.Data.List.Basic", "Init.Data.List.Lemmas", "Init.Data.Nat.Basic"}
    closure = index.accessible_modules(library_theorem("List.map_append", "Init.Data.List.Lemmas"))
    assert closure is not None and "Init.Data.List.Basic" in closure and "Init.Data.List.Lemmas" not in closure
    goal = "⊢ ∀ {α : Type u_1} {β : Type u_2} (f : α → β) (l₁ l₂ : List α), List.map f (l₁ ++ l₂) = " \
           "List.map f l₁ ++ List.map f l₂"
    for name, module in (("List.map_append", "Init.Data.List.Lemmas"), ("List.length_append", "Init.Data.List.Basic")):
        thm = library_theorem(name, module)
        allowed = index.accessible_modules(thm)
        assert allowed is not None
        got = index.retrieve(thm, goal, 16)
        assert got, name
        for r in got:
            assert r.premise.module in allowed and r.premise.module != module and r.premise.name != name, r
    # a theorem of List.Basic never sees List.Lemmas, which comes after it
    got = index.retrieve(library_theorem("List.length_append", "Init.Data.List.Basic"), goal, 16)
    assert not any(r.premise.module == "Init.Data.List.Lemmas" for r in got)
    # a user's file sees the whole library
    assert any(r.premise.module == "Init.Data.List.Lemmas"
               for r in index.retrieve(Theorem(name="mine", statement=": True"), goal, 16))


async def test_the_cache_is_reused(lean_pool: ProofEnv, library: tuple[PremiseIndex, Path], tmp_path: Path) -> None:
    _, folder = library
    from burnqed_core.premises.library import library_key

    key = library_key(lean_identity(), RULES)
    (tmp_path / key).symlink_to(folder, target_is_directory=True)
    premises, _, build, fresh = await cached_library(tmp_path, None, lean_identity(), RULES)
    assert not fresh and len(premises) == build.premises


PREAMBLE = """def wobble (n : Nat) : Nat := n + n

theorem wobble_eq (n : Nat) : wobble n = 2 * n := by
  unfold wobble
  omega
"""
WOBBLE = Theorem(name="wobble_sum", statement="(a b : Nat) : wobble (a + b) = 2 * a + 2 * b", preamble=PREAMBLE)


def search_config(premises: bool) -> SearchConfig:
    return SearchConfig(max_nodes=8, max_depth=4, frontier_batch=2, concurrency=1, timeout_s=300,
                        automation=AutomationConfig(enabled=True, tactics=["omega"], defaware=[]),
                        premises=PremiseStepsConfig(enabled=premises, k=2, joint=[]))


async def test_a_retrieved_premise_proves_what_policy_and_automation_cannot(
        lean_pool: ProofEnv, library: tuple[PremiseIndex, Path]) -> None:
    index, _ = library
    policy = FixedTacticsPolicy(["rfl"])
    without = await SearchEngine(policy, lean_pool, search_config(False)).search(WOBBLE)
    assert not without.result.proved
    out = await SearchEngine(policy, lean_pool, search_config(True), premises=index,
                             check_invariants=True).search(WOBBLE)
    r = out.result
    assert r.proved, r
    assert r.proof_sources[0] == "premise" and "wobble_eq" in r.proof[0], r.proof
    assert (await lean_pool.check_proof(WOBBLE, r.proof)).ok  # type: ignore[attr-defined]
