"""The tiny Llama-style causal LM of the tiny profile, built from a config.

Every linear layer's width is checked to be a multiple of 32: bitsandbytes
repacks 4-bit weights for CPU inference in blocks of 32 output features
(``N must be divisible by block_n``, notes/stack-ml.md), so the same model
also loads and generates in QLoRA form. The embedding / lm_head width
(vocabulary) is padded up to a multiple of 32 for the same reason; padded ids
are never produced by the tokenizer and learn low logits in pre-training.
"""

from __future__ import annotations

import logging
from typing import Any

from burnqed_core.config import TinyModelConfig
from burnqed_core.errors import ProfileError

log = logging.getLogger(__name__)

WIDTH_MULTIPLE = 32


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


def check_tiny_config(cfg: TinyModelConfig) -> None:
    """Raise `ProfileError` naming the field when the shapes cannot work (4-bit packing, attention heads)."""
    if cfg.hidden_size % cfg.num_heads:
        raise ProfileError(f"tiny_model.hidden_size {cfg.hidden_size} is not divisible by num_heads {cfg.num_heads}")
    if cfg.num_heads % cfg.num_kv_heads:
        raise ProfileError(f"tiny_model.num_heads {cfg.num_heads} is not divisible by num_kv_heads {cfg.num_kv_heads}")
    head_dim = cfg.hidden_size // cfg.num_heads
    widths = {
        "hidden_size (q_proj/o_proj width)": cfg.hidden_size,
        "intermediate_size (gate_proj/up_proj width)": cfg.intermediate_size,
        "num_kv_heads * head_dim (k_proj/v_proj width)": cfg.num_kv_heads * head_dim,
    }
    for what, w in widths.items():
        if w % WIDTH_MULTIPLE:
            raise ProfileError(
                f"tiny_model.{what} = {w} is not a multiple of {WIDTH_MULTIPLE}: a 4-bit (QLoRA) copy of the "
                f"model could not run on CPU; try {_round_up(w, WIDTH_MULTIPLE)}"
            )


def llama_config(cfg: TinyModelConfig, tokenizer: Any) -> Any:
    """The `LlamaConfig` of a tiny model for ``tokenizer``."""
    from transformers import LlamaConfig

    check_tiny_config(cfg)
    return LlamaConfig(
        vocab_size=_round_up(len(tokenizer), WIDTH_MULTIPLE),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_kv_heads,
        max_position_embeddings=cfg.max_position_embeddings,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def build_tiny_model(cfg: TinyModelConfig, tokenizer: Any, seed: int = 0) -> Any:
    """A freshly initialised (untrained) `LlamaForCausalLM` in float32, same weights for the same seed."""
    import torch
    from transformers import GenerationConfig, LlamaForCausalLM

    config = llama_config(cfg, tokenizer)
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(state)
    model = model.to(torch.float32)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    n = sum(p.numel() for p in model.parameters())
    log.info("built tiny Llama: %d layers, hidden %d, vocab %d, %.2f M parameters",
             cfg.num_layers, cfg.hidden_size, config.vocab_size, n / 1e6)
    return model
