"""Canonical numerals: the prompt shows the goal's numerals as k1, k2, ...; tactics come back with the
goal's own numbers, and a model trained on placeholders fills a witness for numbers it never saw."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from burnqed_core.config import SearchConfig, load_profile
from burnqed_core.data.pairs.local_names import restore
from burnqed_core.data.pairs.numerals import canonicalize_numerals, canonicalize_numerals_pair, numerals
from burnqed_core.data.pairs.prompt import PLAIN, PROMPT_FILE, PromptFormat, format_prompt
from burnqed_core.policy.local import LocalPolicy
from burnqed_core.records import Theorem
from tests.fixtures_models import fine_tune_tiny

NUMS = PromptFormat(numerals="canonical")
BOTH = PromptFormat(local_names="canonical", numerals="canonical")


def test_numerals_in_order_of_appearance_and_mapped_back() -> None:
    state = "⊢ ∃ ks, ks.length = 5 ∧ ks.sum = 20"
    shown, back = canonicalize_numerals(state)
    assert shown == "⊢ ∃ ks, ks.length = k1 ∧ ks.sum = k2"
    assert back == {"k1": "5", "k2": "20"}
    assert restore("refine ⟨k2 :: List.replicate (k1 - 1) 0, ?_, ?_⟩", back) == \
        "refine ⟨20 :: List.replicate (5 - 1) 0, ?_, ?_⟩"
    # a repeated numeral is one placeholder
    assert canonicalize_numerals("⊢ f 7 + 7 = 14") == ("⊢ f k1 + k1 = k2", {"k1": "7", "k2": "14"})


def test_what_is_not_a_numeral_stays() -> None:
    # 0 and 1 are structure; digits inside identifiers, projections, decimals, hex and subscripts are not
    # numerals of the goal
    state = "h2 : p.1 = x₂\n⊢ aff_0_2 (n + 1) = 0 ∧ 2.5 < y ∧ 0x1F = v10 ∧ a✝¹ = 3"
    assert numerals(state) == ["3"]
    shown, back = canonicalize_numerals(state)
    assert shown == state.replace("= 3", "= k1") and back == {"k1": "3"}
    assert canonicalize_numerals("⊢ n + 1 = 1 + n") == ("⊢ n + 1 = 1 + n", {})


def test_placeholders_never_collide_with_names_of_the_goal_or_the_tactic() -> None:
    # the user's own definitions are called k1 and k3: placeholders skip them
    shown, back = canonicalize_numerals("⊢ k1 5 = k3 9")
    assert shown == "⊢ k1 k2 = k3 k4" and back == {"k2": "5", "k4": "9"}
    assert restore("simp [k1, k3]; exact k2", back) == "simp [k1, k3]; exact 5"
    s, t = canonicalize_numerals_pair("⊢ f 4 = 8", "intro k1; exact h 4 8 3")
    assert (s, t) == ("⊢ f k2 = k3", "intro k1; exact h k2 k3 3")  # 3 is not the goal's: it stays


def test_same_step_with_other_numbers_is_the_same_training_example() -> None:
    a = NUMS.example("⊢ ∃ xs, xs.length = 3 ∧ xs.sum = 17", "exact ⟨17 :: List.replicate (3 - 1) 0, rfl, rfl⟩")
    b = NUMS.example("⊢ ∃ xs, xs.length = 5 ∧ xs.sum = 29", "exact ⟨29 :: List.replicate (5 - 1) 0, rfl, rfl⟩")
    assert a == b and a[1] == "exact ⟨k2 :: List.replicate (k1 - 1) 0, rfl, rfl⟩"
    assert PLAIN.example("⊢ f 3 = 3", "rfl") == (format_prompt("⊢ f 3 = 3"), "rfl")


def test_with_canonical_names_too() -> None:
    state = "xs : List Nat\nh : xs.length = 4\n⊢ xs.sum = 12"
    prompt, back = BOTH.prompt(state)
    assert prompt == format_prompt("v1 : List Nat\nv2 : v1.length = k1\n⊢ v1.sum = k2")
    assert back == {"v1": "xs", "v2": "h", "k1": "4", "k2": "12"}
    assert BOTH.restore("simp [v2] at v1; exact k2", back) == "simp [h] at xs; exact 12"
    assert BOTH.example(state, "cases xs <;> simp_all")[1] == "cases v1 <;> simp_all"


def test_the_format_is_recorded_and_versioned(tmp_path: Path) -> None:
    assert len({PLAIN.version, NUMS.version, BOTH.version, PromptFormat(local_names="canonical").version}) == 4
    assert NUMS.version.startswith(PLAIN.version) and not NUMS.plain and PLAIN.plain
    BOTH.save(tmp_path)
    assert PromptFormat.of_model(tmp_path) == BOTH
    # a record written before numerals existed still loads: numerals as printed
    (tmp_path / PROMPT_FILE).write_text('{"local_names": "canonical"}\n')
    assert PromptFormat.of_model(tmp_path) == PromptFormat(local_names="canonical")


def test_profiles_and_default() -> None:
    assert load_profile("small", environ={}).training.numerals == "canonical"
    assert load_profile("prod", environ={}).training.numerals == "as_printed"


def _witness(n: int, s: int) -> tuple[str, str]:
    return (f"⊢ ∃ xs, xs.length = {n} ∧ xs.sum = {s}", f"exact ⟨{s} :: List.replicate ({n} - 1) 0, rfl, rfl⟩")


WITNESS_PAIRS = [_witness(n, s) for n, s in ((2, 9), (4, 13), (5, 21), (6, 30), (3, 8), (2, 25))]


@pytest.fixture(scope="module")
def numerals_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fine_tune_tiny(tiny_model_dir, tmp_path_factory.mktemp("nums"), WITNESS_PAIRS, steps=40, fmt=NUMS)


def test_policy_fills_the_witness_with_numbers_it_never_saw(numerals_model: Path) -> None:
    policy = LocalPolicy(numerals_model, max_new_tokens=48)
    assert policy.prompt_format == NUMS
    state, tactic = _witness(3, 17)
    assert policy.generate_sync([state], 1, 0.0)[0][0].tactic == tactic


def test_the_same_weights_without_the_record_cannot_copy(numerals_model: Path, tmp_path: Path) -> None:
    plain = shutil.copytree(numerals_model, tmp_path / "m")
    (plain / PROMPT_FILE).unlink()
    policy = LocalPolicy(plain, max_new_tokens=48)
    state, tactic = _witness(3, 17)
    assert policy.generate_sync([state], 1, 0.0)[0][0].tactic != tactic


@pytest.mark.lean
async def test_the_restored_witness_proves_the_theorem_in_lean(lean_pool: object, numerals_model: Path) -> None:
    from burnqed_core.search.engine import SearchEngine

    policy = LocalPolicy(numerals_model, max_new_tokens=48, seed=0)
    cfg = SearchConfig(max_nodes=8, max_depth=3, num_candidates=4, timeout_s=120.0, frontier_batch=4,
                       concurrency=2)
    engine = SearchEngine(policy, lean_pool, cfg, check_invariants=True)  # type: ignore[arg-type]
    thm = Theorem(name="fill_3_17", statement=": ∃ xs : List Nat, xs.length = 3 ∧ xs.sum = 17")
    outs = [o async for o in engine.search_many([thm])]
    assert outs[0].result.proved, outs[0].result
    assert outs[0].result.proof == ["exact ⟨17 :: List.replicate (3 - 1) 0, rfl, rfl⟩"]
