"""Tokenised training examples and the completion-only collator.

An example is the prompt of `burnqed_core.data.pairs.prompt.format_prompt`
followed by the tactic and EOS. Prompt and completion are tokenised
separately, exactly as generation sees them (the policy encodes the prompt
alone, BOS included, and the model then emits the completion tokens), so the
training input never differs from a generation prefix at the boundary. The
labels are -100 on the prompt and on padding: the loss is on the tactic tokens
and EOS only (seed 002, gotcha 13 — otherwise most capacity goes to echoing
proof states). TRL 1.16 dropped ``DataCollatorForCompletionOnlyLM``; this
is the small replacement.

Batches are padded on the right: during training the attention mask hides
the padding and position ids stay those of the unpadded sequence (left
padding is only for batched generation).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from burnqed_core.data.pairs.prompt import PLAIN, PromptFormat

log = logging.getLogger(__name__)

IGNORE_INDEX = -100


@dataclass(frozen=True)
class Example:
    """One tokenised example: ``input_ids`` and ``labels`` (same length, -100 where no loss)."""

    input_ids: list[int]
    labels: list[int]

    @property
    def num_target_tokens(self) -> int:
        return sum(1 for x in self.labels if x != IGNORE_INDEX)


def encode_pair(tokenizer: Any, state: str, tactic: str, completion_only: bool = True,
                fmt: PromptFormat = PLAIN, premises: Sequence[str] = ()) -> Example:
    """Tokenise one (state, tactic) example in the shared prompt format (with the premise lines the format
    shows, `PromptFormat.premises`).

    ``completion_only=False`` puts the loss on every token after BOS (used by
    base pre-training, which should also learn the language of goal states).
    """
    prompt, completion = fmt.example(state, tactic, premises)
    prompt_ids = tokenizer(prompt)["input_ids"]
    completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    return _example(tokenizer, list(prompt_ids), list(completion_ids), completion_only)


def _example(tokenizer: Any, prompt_ids: list[int], completion_ids: list[int], completion_only: bool) -> Example:
    completion_ids = [*completion_ids, tokenizer.eos_token_id]
    input_ids = prompt_ids + completion_ids
    if completion_only:
        labels = [IGNORE_INDEX] * len(prompt_ids) + completion_ids
    else:
        labels = list(input_ids)
        if input_ids and input_ids[0] == tokenizer.bos_token_id:
            labels[0] = IGNORE_INDEX
    return Example(input_ids=input_ids, labels=labels)


def encode_pairs(
    tokenizer: Any,
    pairs: Iterable[tuple[str, str] | tuple[str, str, Sequence[str]]],
    max_seq_len: int,
    completion_only: bool = True,
    chunk: int = 1024,
    fmt: PromptFormat = PLAIN,
) -> tuple[list[Example], int]:
    """Encode (state, tactic) pairs like `encode_pair`, tokenising in batches (prod sets hold ~250K pairs);
    an item may carry a third element, the premise lines retrieved for its state.

    Pairs longer than ``max_seq_len`` tokens or with an empty tactic are
    skipped (cutting a prompt would change what the model conditions on).
    Returns the examples and the number skipped.
    """
    items = [(it[0], it[1], it[2] if len(it) > 2 else ()) for it in pairs]  # type: ignore[misc]
    out: list[Example] = []
    skipped = 0
    for start in range(0, len(items), chunk):
        part = [(s, t, p) for s, t, p in items[start:start + chunk] if t.strip()]
        skipped += min(chunk, len(items) - start) - len(part)
        if not part:
            continue
        texts = [fmt.example(s, t, p) for s, t, p in part]
        prompts = tokenizer([p for p, _ in texts])["input_ids"]
        completions = tokenizer([c for _, c in texts], add_special_tokens=False)["input_ids"]
        for p_ids, c_ids in zip(prompts, completions, strict=True):
            ex = _example(tokenizer, list(p_ids), list(c_ids), completion_only)
            if len(ex.input_ids) > max_seq_len:
                skipped += 1
            else:
                out.append(ex)
    if skipped:
        log.info("skipped %d of %d examples (longer than %d tokens or empty tactic)",
                 skipped, skipped + len(out), max_seq_len)
    return out, skipped


def length_groups(batch: Sequence[Example], groups: int) -> list[list[Example]]:
    """``batch`` sorted by length (shortest first, ties in batch order) and cut into ``groups`` runs of about equal
    size (fewer when the batch is smaller), so that each run pads to its own longest example. The step's loss is
    the sum of the runs' token losses, so its gradient is the batch's, but for floating-point rounding (and, with
    a dropout, for the masks: drawn for the runs' shapes, another draw of the same distribution); the padding it
    saves is most of the work on the tiny profile's batches (measured: 39% of a padded batch's tokens were real;
    benchmarks/length_groups.py)."""
    if groups <= 1 or len(batch) <= 1:
        return [list(batch)]
    ordered = [batch[i] for i in sorted(range(len(batch)), key=lambda i: (len(batch[i].input_ids), i))]
    k = min(groups, len(ordered))
    bounds = [round(j * len(ordered) / k) for j in range(k + 1)]
    return [ordered[a:b] for a, b in pairwise(bounds) if b > a]


class CompletionCollator:
    """Right-pads a list of `Example` into ``input_ids`` / ``attention_mask`` / ``labels`` tensors."""

    def __init__(self, pad_token_id: int) -> None:
        self.pad_token_id = pad_token_id

    def __call__(self, batch: Sequence[Example]) -> dict[str, Any]:
        import torch

        width = max(len(ex.input_ids) for ex in batch)
        ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.long)
        labels = torch.full((len(batch), width), IGNORE_INDEX, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, ex in enumerate(batch):
            n = len(ex.input_ids)
            ids[i, :n] = torch.tensor(ex.input_ids, dtype=torch.long)
            labels[i, :n] = torch.tensor(ex.labels, dtype=torch.long)
            mask[i, :n] = 1
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}
