"""Canonical local names: the prompt shows v1, v2, ...; tactics come back in the goal's own names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from burnqed_core.data.pairs.local_names import canonicalize, canonicalize_pair, restore
from burnqed_core.data.pairs.prompt import PLAIN, PROMPT_FILE, PromptFormat, format_prompt
from burnqed_core.errors import PolicyError
from burnqed_core.policy.local import LocalPolicy
from tests.fixtures_models import fine_tune_tiny

CANON = PromptFormat(local_names="canonical")


def test_hypotheses_renamed_in_order_of_appearance_and_mapped_back() -> None:
    state = "L₂ xs' : List Nat\nh : L₂.length = 3\n⊢ (negate L₂ xs').length = L₂.length + xs'.length"
    shown, back = canonicalize(state)
    assert shown == "v1 v2 : List Nat\nv3 : v1.length = 3\n⊢ (negate v1 v2).length = v1.length + v2.length"
    assert back == {"v1": "L₂", "v2": "xs'", "v3": "h"}
    assert restore("induction v1 generalizing v2", back) == "induction L₂ generalizing xs'"
    assert restore("simp [negate, v3]", back) == "simp [negate, h]"


def test_names_not_bound_by_a_hypothesis_line_are_left_alone() -> None:
    state = "case cons\nhead : Nat\na✝ : List Nat\n⊢ ∀ (z : Nat), List.length (head :: a✝) = z"
    shown, back = canonicalize(state)
    assert shown == "case cons\nv1 : Nat\na✝ : List Nat\n⊢ ∀ (z : Nat), List.length (v1 :: a✝) = z"
    assert back == {"v1": "head"}
    # a name the model introduces (not a canonical one in use) passes through unchanged
    assert restore("intro z", back) == "intro z"
    assert restore("exact v7", back) == "exact v7"


def test_canonical_names_never_collide_with_names_of_the_goal() -> None:
    # the user's own definition is called v1, and a bound variable v2: canonical names skip both,
    # so mapping back is a bijection and never touches them
    state = "n m : Nat\n⊢ v1 n = fun v2 => v2 + m"
    shown, back = canonicalize(state)
    assert shown == "v3 v4 : Nat\n⊢ v1 v3 = fun v2 => v2 + v4"
    assert restore("simp [v1, v3]", back) == "simp [v1, n]"
    # a training pair: the tactic's own identifiers are avoided too
    s, t = canonicalize_pair("x : Nat\n⊢ x = x", "intro v1; exact x")
    assert (s, t) == ("v2 : Nat\n⊢ v2 = v2", "intro v1; exact v2")


def test_a_state_without_hypotheses_is_unchanged() -> None:
    assert canonicalize("⊢ 2 + 2 = 4") == ("⊢ 2 + 2 = 4", {})
    assert CANON.prompt("⊢ 2 + 2 = 4") == (format_prompt("⊢ 2 + 2 = 4"), {})
    assert CANON.example("⊢ True", "trivial") == PLAIN.example("⊢ True", "trivial")


def test_same_step_under_other_names_is_the_same_training_example() -> None:
    a = CANON.example("xs : List Nat\n⊢ mirror (mirror xs) = xs", "induction xs")
    b = CANON.example("lst : List Nat\n⊢ mirror (mirror lst) = lst", "induction lst")
    assert a == b
    assert a[1] == "induction v1"
    assert PLAIN.example("xs : List Nat\n⊢ f xs = xs", "induction xs")[1] == "induction xs"


def test_prompt_format_is_recorded_in_the_model_dir(tmp_path: Path) -> None:
    assert PromptFormat.of_model(tmp_path) == PLAIN  # nothing recorded: names as printed
    assert PromptFormat.of_model(None) == PLAIN
    CANON.save(tmp_path)
    assert PromptFormat.of_model(tmp_path) == CANON
    assert CANON.version != PLAIN.version and CANON.version.startswith(PLAIN.version)
    (tmp_path / PROMPT_FILE).write_text(json.dumps({"local_names": "mangled"}))
    with pytest.raises(ValueError, match=PROMPT_FILE):
        PromptFormat.of_model(tmp_path)


INDUCTION_PAIRS = [(f"{v} : List Nat\n⊢ mirror (mirror {v}) = {v}", f"induction {v}")
                   for v in ("xs", "ys", "l", "acc", "t", "zs")]


@pytest.fixture(scope="module")
def canonical_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fine_tune_tiny(tiny_model_dir, tmp_path_factory.mktemp("canon"), INDUCTION_PAIRS, steps=40, fmt=CANON)


def test_policy_prompts_canonically_and_answers_in_the_goals_names(canonical_model: Path) -> None:
    policy = LocalPolicy(canonical_model, max_new_tokens=8)
    assert policy.prompt_format == CANON
    # a name never seen in training: the model only learned "induction v1"
    out = policy.generate_sync(["qq₇ : List Nat\n⊢ mirror (mirror qq₇) = qq₇"], 1, 0.0)
    assert out[0][0].tactic == "induction qq₇"
    seeded = policy.generate_sync(["lst : List Nat\n⊢ mirror (mirror lst) = lst"], 4, 0.7, seeds=[3])
    assert "induction lst" in {c.tactic for c in seeded[0]}
    assert not any("v1" in c.tactic for c in seeded[0])


def test_the_same_weights_without_the_record_answer_in_canonical_names(canonical_model: Path,
                                                                       tmp_path: Path) -> None:
    # what the record changes: the same weights prompted with names as printed
    plain = shutil.copytree(canonical_model, tmp_path / "m")
    (plain / PROMPT_FILE).unlink()
    policy = LocalPolicy(plain, max_new_tokens=8)
    assert policy.prompt_format == PLAIN
    out = policy.generate_sync(["qq₇ : List Nat\n⊢ mirror (mirror qq₇) = qq₇"], 1, 0.0)
    assert out[0][0].tactic != "induction qq₇"


def test_a_corrupt_record_is_a_policy_error(canonical_model: Path, tmp_path: Path) -> None:
    bad = shutil.copytree(canonical_model, tmp_path / "bad")
    (bad / PROMPT_FILE).write_text("{")
    with pytest.raises(PolicyError, match=PROMPT_FILE):
        LocalPolicy(bad)
