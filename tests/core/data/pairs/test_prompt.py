"""The one prompt format: DeepSeek-native, state as a Lean comment in a lean4
fence, the tactic as the completion right after the closing fence."""

from __future__ import annotations

import pytest

from burnqed_core.data.pairs.prompt import (
    FENCE_CLOSE,
    FENCE_OPEN,
    INSTRUCTION,
    RESPONSE_TEMPLATE,
    format_completion,
    format_example,
    format_prompt,
    normalize_tactic,
    parse_completion,
    split_point,
)

STATES = [
    "n : Nat\n⊢ n + 0 = n",
    "case succ\nn : Nat\nih : 0 + n = n\n⊢ 0 + (n + 1) = n + 1\n\ncase zero\n⊢ 0 + 0 = 0",
    "α : Type u_1\nl : List α\n⊢ l ++ [] = l",
    "",
]


@pytest.mark.parametrize("state", STATES)
def test_prompt_layout(state: str) -> None:
    prompt = format_prompt(state)
    assert prompt.startswith(INSTRUCTION + FENCE_OPEN + "/- tactic state:\n")
    assert prompt.endswith("\n" + RESPONSE_TEMPLATE)
    assert RESPONSE_TEMPLATE == "-/\n" + FENCE_CLOSE == "-/\n```\n"
    assert state.strip("\n") in prompt
    assert prompt.count(RESPONSE_TEMPLATE) == 1


@pytest.mark.parametrize("state", STATES)
def test_completion_starts_right_after_the_template(state: str) -> None:
    tactic = "induction n with\n| zero => rfl\n| succ n ih => simp"
    prompt, completion = format_example(state, tactic)
    full = prompt + completion
    assert split_point(full) == len(prompt)
    assert full[split_point(full):] == completion == tactic
    assert full[: split_point(full)].endswith("```\n")


def test_state_cannot_close_the_comment_early() -> None:
    state = "h : a -/ b\n⊢ c -/"
    prompt, completion = format_example(state, "simp")
    assert prompt.count("-/") == 1  # only the real closing one
    assert split_point(prompt + completion) == len(prompt)


def test_split_point_needs_the_template() -> None:
    with pytest.raises(ValueError):
        split_point("no template here")


def test_normalize_and_completion() -> None:
    assert normalize_tactic("  simp [h]  \n\n") == "simp [h]"
    assert normalize_tactic("cases h with  \n\n  | inl h => exact h\n  | inr h => simp\n") == \
        "cases h with\n  | inl h => exact h\n  | inr h => simp"
    assert format_completion(" omega\n") == "omega"


def test_parse_completion() -> None:
    assert parse_completion("simp [Nat.add_comm]\n```\nmore text") == "simp [Nat.add_comm]"
    assert parse_completion("omega\nComplete the following Lean 4 code:\n\n```lean4") == "omega"
    assert parse_completion("  intro h\n  exact h  ") == "intro h\n  exact h"
    assert parse_completion("```") == ""
    # a round trip through the format: the generated text after the prompt parses to the tactic
    prompt = format_prompt(STATES[0])
    generated = format_completion("exact Nat.add_zero n") + "\n```\n"
    assert parse_completion((prompt + generated)[len(prompt):]) == "exact Nat.add_zero n"
