"""Premises referred to by their place: the prompt shows ``p1 name : type``, a training tactic says ``p1``, and
a generated ``p1`` is mapped back to the premise's name, so a model trained on a few names writes ones it never
saw (issue 65: the copy the tiny policy does not learn by spelling)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.pairs.local_names import restore
from burnqed_core.data.pairs.premise_refs import premise_name, reference_premises, reference_premises_pair
from burnqed_core.data.pairs.prompt import PROMPT_FILE, PromptFormat, format_prompt
from burnqed_core.policy.local import LocalPolicy
from tests.fixtures_models import fine_tune_tiny

REFS = PromptFormat(premises=2, premise_names="canonical")
LINES = ["List.map_append : ∀ (f : α → β) (l₁ l₂ : List α), List.map f (l₁ ++ l₂) = List.map f l₁ ++ List.map f l₂",
         "Nat.add_comm : ∀ (n m : ℕ), n + m = m + n"]


def test_lines_get_references_and_tactics_come_back_with_the_names() -> None:
    shown, back = reference_premises("⊢ True", LINES)
    assert shown == [f"p1 {LINES[0]}", f"p2 {LINES[1]}"]
    assert back == {"p1": "List.map_append", "p2": "Nat.add_comm"}
    assert restore("rw [p1, ← p2]; exact p2.symm", back) == \
        "rw [List.map_append, ← Nat.add_comm]; exact Nat.add_comm.symm"
    assert premise_name("Foo.bar") == "Foo.bar" and premise_name("a.b : x : y") == "a.b"


def test_a_training_tactic_names_shown_premises_by_reference_and_leaves_the_rest() -> None:
    lines, tactic = reference_premises_pair("⊢ True", "rw [List.map_append, Foo.List.map_append]; simp [Nat.add_comm, "
                                            "Nat.mul_comm]; exact Nat.add_comm.symm", LINES)
    assert lines == [f"p1 {LINES[0]}", f"p2 {LINES[1]}"]
    assert tactic == "rw [p1, Foo.List.map_append]; simp [p2, Nat.mul_comm]; exact p2.symm"


def test_references_never_collide_with_names_of_the_goal_or_the_tactic() -> None:
    _, back = reference_premises("p1 : Prop\nh : p1\n⊢ p3 ∧ p1", LINES)
    assert back == {"p2": "List.map_append", "p4": "Nat.add_comm"}
    assert restore("exact ⟨p2, h⟩", back) == "exact ⟨List.map_append, h⟩"
    _, tactic = reference_premises_pair("⊢ True", "intro p1; exact Nat.add_comm", LINES)
    assert tactic == "intro p1; exact p3"


def test_the_format_shows_references_only_with_premises_and_is_versioned(tmp_path: Path) -> None:
    prompt, back = REFS.prompt("x : Nat\n⊢ x + 0 = x", [*LINES, "Extra.lemma : True"])
    assert prompt == format_prompt("x : Nat\n⊢ x + 0 = x", [f"p1 {LINES[0]}", f"p2 {LINES[1]}"])
    assert back == {"p1": "List.map_append", "p2": "Nat.add_comm"}
    assert REFS.example("⊢ 1 + 2 = 2 + 1", "exact Nat.add_comm 1 2", LINES)[1] == "exact p2 1 2"
    names = PromptFormat(premises=2)
    assert names.example("⊢ 1 + 2 = 2 + 1", "exact Nat.add_comm 1 2", LINES)[1] == "exact Nat.add_comm 1 2"
    assert names.plain and not REFS.plain and PromptFormat(premise_names="canonical").plain
    assert len({names.version, REFS.version, PromptFormat().version}) == 3
    assert PromptFormat(premise_names="canonical").version == PromptFormat().version  # nothing shown
    REFS.save(tmp_path)
    assert PromptFormat.of_model(tmp_path) == REFS
    (tmp_path / PROMPT_FILE).write_text('{"premises": 2}\n')  # a record from before references existed
    assert PromptFormat.of_model(tmp_path) == PromptFormat(premises=2)


def test_profiles_and_default() -> None:
    assert load_profile("tiny", environ={}).training.premise_names == "as_printed"
    assert load_profile("tiny", environ={"BURNQED__TRAINING__PREMISE_NAMES": "canonical"}
                        ).training.premise_names == "canonical"


def _example(head: str, piece: str) -> tuple[str, str, list[str]]:
    name = f"{head}.{piece}_cancel"
    return "a b : Nat\n⊢ a + b - b = a", f"rw [{name}]", [f"{name} : ∀ (n m : ℕ), n + m - m = n",
                                                             "Nat.le_refl : ∀ (n : ℕ), n ≤ n"]


TRAIN = [_example(h, p) for h in ("Nat", "Int") for p in ("add_sub", "sub_add", "plus")]


@pytest.fixture(scope="module")
def refs_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fine_tune_tiny(tiny_model_dir, tmp_path_factory.mktemp("refs"), [(s, t) for s, t, _ in TRAIN], steps=40,
                          fmt=REFS, premises=[p for _, _, p in TRAIN])


def test_policy_writes_a_premise_name_it_never_saw(refs_model: Path) -> None:
    policy = LocalPolicy(refs_model, max_new_tokens=24)
    assert policy.prompt_format == REFS
    state, tactic, lines = _example("Fin", "never_seen")
    assert policy.generate_sync([state], 1, 0.0, premises=[lines])[0][0].tactic == tactic == \
        "rw [Fin.never_seen_cancel]"


def test_the_same_weights_without_the_record_cannot_copy(refs_model: Path, tmp_path: Path) -> None:
    plain = shutil.copytree(refs_model, tmp_path / "m")
    (plain / PROMPT_FILE).unlink()
    state, tactic, lines = _example("Fin", "never_seen")
    got = LocalPolicy(plain, max_new_tokens=24).generate_sync([state], 1, 0.0, premises=[lines])[0][0].tactic
    assert got != tactic and "never_seen" not in got
