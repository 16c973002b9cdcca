"""Byte-level BPE tokenizer for the tiny model, trained on Lean text.

Byte-level so that every Unicode goal (``⊢``, ``ℕ``, ``→``, ``∀``) round-trips
with no unknown token. Three special tokens: ``<pad>`` (id 0), ``<s>`` (BOS,
added in front of every encoded text by the post-processor, as Llama/DeepSeek
tokenizers do) and ``</s>`` (EOS, appended by training after the completion,
and the stop token of generation). ``padding_side="left"`` is saved in the
tokenizer config because the policy batches prompts for a decoder-only model.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from burnqed_core.errors import DataError

log = logging.getLogger(__name__)

PAD_TOKEN = "<pad>"
BOS_TOKEN = "<s>"
EOS_TOKEN = "</s>"
SPECIAL_TOKENS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN)


def train_tokenizer(
    texts: Iterable[str],
    vocab_size: int,
    out_dir: str | Path | None = None,
    seed: int = 0,
    split_digits: bool = False,
):  # -> transformers.PreTrainedTokenizerFast (imported lazily: keeps `burnqed --help` fast)
    """Train a byte-level BPE tokenizer on ``texts``; save it to ``out_dir`` if given.

    The vocabulary may come out smaller than ``vocab_size`` when the corpus has
    fewer merges to learn. BPE training is deterministic for a given text
    order; ``seed`` is kept in the saved config (``burnqed_seed``) so that a
    model directory records how it was built. ``split_digits``: every digit is
    a token of its own (`TinyModelConfig.split_digits`), so numbers are copied
    digit by digit.
    """
    from transformers import PreTrainedTokenizerFast

    texts = [t for t in texts if t]
    if not texts:
        raise DataError("cannot train a tokenizer on an empty corpus")
    if vocab_size < 256 + len(SPECIAL_TOKENS):
        raise DataError(f"vocab_size {vocab_size} is below the 256 bytes + {len(SPECIAL_TOKENS)} special tokens")

    tok = _train_bpe(texts, vocab_size, split_digits)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS_TOKEN,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        padding_side="left",
        model_max_length=1_000_000,
        clean_up_tokenization_spaces=False,
    )
    fast.init_kwargs["burnqed_seed"] = seed
    log.info("trained byte-level BPE tokenizer: %d tokens (asked %d) on %d texts", len(fast), vocab_size, len(texts))
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        fast.save_pretrained(out)
    return fast


def _train_bpe(texts: list[str], vocab_size: int, split_digits: bool) -> Any:  # -> tokenizers.Tokenizer
    """The byte-level BPE model trained on ``texts`` (digits split first with ``split_digits``), with the
    post-processor that puts BOS in front of every encoded text."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.pre_tokenizer = (pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
                         if split_digits else byte_level)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    bos_id = tok.token_to_id(BOS_TOKEN)
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single=f"{BOS_TOKEN} $A", pair=f"{BOS_TOKEN} $A {BOS_TOKEN} $B", special_tokens=[(BOS_TOKEN, bos_id)]
        ),
    ])
    return tok
