"""Completion-only masking: the loss covers exactly the tactic tokens and EOS."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoTokenizer

from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.training.collate import (
    IGNORE_INDEX,
    CompletionCollator,
    Example,
    encode_pair,
    encode_pairs,
    length_groups,
)

CASES = [
    ("n : Nat\n⊢ n + 0 = n", "simp"),
    ("p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", "exact ⟨hp, hq⟩"),
    ("n : Nat\n⊢ 0 + n = n", "induction n with\n| zero => rfl\n| succ n ih => omega"),
    ("xs : List Nat\n⊢ xs ++ [] = xs", "  simp [List.append_nil]  \n"),
]


@pytest.fixture(scope="module")
def tok(tiny_model_dir: Path):
    return AutoTokenizer.from_pretrained(tiny_model_dir)


@pytest.mark.parametrize(("state", "tactic"), CASES)
def test_labels_cover_exactly_tactic_and_eos(tok, state: str, tactic: str) -> None:
    ex = encode_pair(tok, state, tactic)
    assert len(ex.input_ids) == len(ex.labels)
    labelled = [i for i, lab in zip(ex.input_ids, ex.labels, strict=True) if lab != IGNORE_INDEX]
    assert labelled[-1] == tok.eos_token_id
    assert tok.decode(labelled) == tactic.strip() + "</s>"
    # the labels equal the inputs where they are set, and all masked positions come first (the prompt)
    first = ex.labels.index(next(lab for lab in ex.labels if lab != IGNORE_INDEX))
    assert all(lab == IGNORE_INDEX for lab in ex.labels[:first])
    assert ex.labels[first:] == ex.input_ids[first:]
    # the unlabelled prefix is exactly what the policy encodes at generation time
    assert ex.input_ids[:first] == tok(format_prompt(state))["input_ids"]


def test_full_loss_mode_labels_everything_but_bos(tok) -> None:
    ex = encode_pair(tok, *CASES[0], completion_only=False)
    assert ex.labels[0] == IGNORE_INDEX and ex.input_ids[0] == tok.bos_token_id
    assert ex.labels[1:] == ex.input_ids[1:]


def test_collator_pads_right_and_masks_padding(tok) -> None:
    exs, skipped = encode_pairs(tok, [*CASES[:2], ("⊢ True", "   ")], max_seq_len=10_000)
    assert skipped == 1 and len(exs) == 2
    batch = CompletionCollator(tok.pad_token_id)(exs)
    short = min(range(2), key=lambda i: len(exs[i].input_ids))
    n = len(exs[short].input_ids)
    assert batch["input_ids"].shape[1] == max(len(e.input_ids) for e in exs)
    assert batch["attention_mask"][short, :n].all() and not batch["attention_mask"][short, n:].any()
    assert (batch["labels"][short, n:] == IGNORE_INDEX).all()
    assert (batch["input_ids"][short, n:] == tok.pad_token_id).all()
    assert batch["input_ids"][short, 0] == tok.bos_token_id


def test_too_long_examples_are_skipped(tok) -> None:
    long_state = "n : Nat\n" + "h : n = n\n" * 200 + "⊢ n = n"
    limit = len(encode_pair(tok, *CASES[0]).input_ids)
    exs, skipped = encode_pairs(tok, [(long_state, "rfl"), CASES[0]], max_seq_len=limit)
    assert skipped == 1 and len(exs) == 1
    exs, skipped = encode_pairs(tok, [CASES[0]], max_seq_len=limit - 1)
    assert skipped == 1 and not exs


def _ex(n: int, tag: int) -> Example:
    return Example(input_ids=[tag] * n, labels=[tag] * n)


def test_length_groups_sort_by_length_and_keep_every_example_once() -> None:
    batch = [_ex(n, i) for i, n in enumerate([9, 3, 7, 3, 12, 1, 5, 8, 2, 6])]
    groups = length_groups(batch, 4)
    flat = [ex for g in groups for ex in g]
    assert sorted(id(e) for e in flat) == sorted(id(e) for e in batch)  # each example once
    assert [len(e.input_ids) for e in flat] == sorted(len(e.input_ids) for e in batch)
    assert [e.input_ids[0] for e in flat][:3] == [5, 8, 1]  # ties (the two of length 3) in batch order
    sizes = [len(g) for g in groups]
    assert len(sizes) == 4 and max(sizes) - min(sizes) <= 1
    # each run pads only to its own longest: fewer padded positions than one batch
    collate = CompletionCollator(pad_token_id=0)
    assert sum(collate(g)["input_ids"].numel() for g in groups) < collate(batch)["input_ids"].numel()


def test_length_groups_of_one_or_of_a_small_batch() -> None:
    batch = [_ex(4, 0), _ex(2, 1)]
    assert length_groups(batch, 1) == [batch]  # unchanged, in its order
    assert [[e.input_ids[0] for e in g] for g in length_groups(batch, 4)] == [[1], [0]]
    assert length_groups([], 4) == [[]]
