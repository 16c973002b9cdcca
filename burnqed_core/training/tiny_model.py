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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from burnqed_core.config import TinyModelConfig, TrainingConfig
from burnqed_core.errors import DataError, ProfileError
from burnqed_core.records import TacticPair
from burnqed_core.training.metrics import TrainingMetrics

if TYPE_CHECKING:
    from burnqed_core.data.pairs.prompt import PromptFormat
    from burnqed_core.training.loop import LoopSettings

log = logging.getLogger(__name__)

WIDTH_MULTIPLE = 32

#: Named tiny model shapes (`TinyModelConfig` fields) for profiles and
#: benchmarks (``benchmarks/generate_batching.py --preset``,
#: ``benchmarks/model_size.py``). Every width is a multiple of 32, head_dim 32
#: or 64. ``tiny-1m``: configs/tiny.yaml's model; ``tiny-3m``: the
#: `TinyModelConfig` defaults; ``small-5m`` / ``small-7m``: candidates for the
#: ``small`` CPU profile (deeper / wider).
TINY_PRESETS: Mapping[str, Mapping[str, int]] = MappingProxyType({name: MappingProxyType(shape) for name, shape in {
    "tiny-1m": {"vocab_size": 1024, "hidden_size": 128, "num_layers": 4, "num_heads": 4, "num_kv_heads": 2,
                "intermediate_size": 352},
    "tiny-3m": {"vocab_size": 1024, "hidden_size": 256, "num_layers": 4, "num_heads": 4, "num_kv_heads": 2,
                "intermediate_size": 704},
    "small-5m": {"vocab_size": 1024, "hidden_size": 256, "num_layers": 6, "num_heads": 4, "num_kv_heads": 2,
                 "intermediate_size": 704},
    "small-7m": {"vocab_size": 1024, "hidden_size": 384, "num_layers": 4, "num_heads": 6, "num_kv_heads": 2,
                 "intermediate_size": 1024},
    # issue 65: the 5-20 M range, for a policy that reads premises (measured by benchmarks/model_size.py)
    "mid-13m": {"vocab_size": 2048, "hidden_size": 384, "num_layers": 8, "num_heads": 6, "num_kv_heads": 2,
                "intermediate_size": 1024},
    "mid-19m": {"vocab_size": 2048, "hidden_size": 512, "num_layers": 6, "num_heads": 8, "num_kv_heads": 4,
                "intermediate_size": 1408},
}.items()})


def tiny_preset(name: str) -> TinyModelConfig:
    """The `TinyModelConfig` of a named shape in `TINY_PRESETS` (other fields at their defaults)."""
    if name not in TINY_PRESETS:
        raise ProfileError(f"unknown tiny model preset {name!r}: one of {', '.join(sorted(TINY_PRESETS))}")
    return TinyModelConfig(**TINY_PRESETS[name])


def default_base_dir(home: Path) -> Path:
    """Where the tiny profile keeps its pre-trained base model (``<paths.home>/models/tiny-base``)."""
    return Path(home) / "models" / "tiny-base"


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


def resolve_base_model(cfg: TrainingConfig, home: Path) -> str:
    """The base model SFT starts from: ``training.base_model``, where ``tiny`` means the pre-trained tiny model
    in `default_base_dir` (which must exist: `pretrain_base` / ``burnqed train base`` makes it)."""
    if cfg.base_model != "tiny":
        return cfg.base_model
    base = default_base_dir(home)
    if not (base / "config.json").exists():
        raise DataError(f"no tiny base model at {base}: run `burnqed train base --pairs ...` first "
                        "(or pass --base DIR)")
    return str(base)


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


def pretrain_base(
    pairs: Sequence[TacticPair],
    cfg: TrainingConfig,
    out_dir: str | Path,
    *,
    val: Sequence[TacticPair] = (),
    data_fingerprints: dict[str, str] | None = None,
    resume: bool = True,
    progress: bool = True,
    premises: Callable[[TacticPair], Sequence[str]] | None = None,
) -> TrainingMetrics:
    """Build the tiny base model: tokenizer + model trained from scratch on ``pairs``, saved as a HF model dir.
    With ``cfg.prompt_premises`` > 0 the model's prompts show that many premise lines (``premises`` gives a
    pair's: `burnqed_core.premises.prompting.PromptPremises.of`), and its tokenizer learns them too.

    The loss covers the whole prompt-format example (goal state and tactic),
    not only the tactic: the base model plays the part of a pretrained LM, so
    it should model the language of goal states too (its hidden states feed the
    EBM, and tactics copy hypothesis names from the state). SFT afterwards
    trains completion-only. Full fine-tune (every weight trains), AdamW,
    warm-up then ``training.lr_schedule`` decay to ``training.min_lr_ratio``; resumable like SFT; deterministic for a
    given ``cfg.seed`` and data.
    """
    import torch

    from burnqed_core.data.pairs.prompt import PromptFormat
    from burnqed_core.training.checkpoints import load_trainable, settings_signature
    from burnqed_core.training.loop import resolve_device, run_loop
    from burnqed_core.training.run_record import fingerprint_pairs

    t0 = time.perf_counter()
    tiny = cfg.tiny_model
    if not pairs:
        raise DataError("no tactic pairs to pre-train the base model on")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = resolve_device(cfg.device)
    fmt = PromptFormat(local_names=cfg.local_names, numerals=cfg.numerals, premises=cfg.prompt_premises,
                       premise_names=cfg.premise_names)
    tokenizer, max_len, train_ex, skipped, val_ex = _pretrain_examples(pairs, val, cfg, fmt, premises)
    model = build_tiny_model(tiny, tokenizer, seed=cfg.seed).to(device)
    settings = _pretrain_settings(cfg)
    prints = dict(data_fingerprints or {"pairs": fingerprint_pairs(pairs), "val": fingerprint_pairs(val)})
    n_params = sum(p.numel() for p in model.parameters())
    metrics = TrainingMetrics(kind="pretrain", train_examples=len(train_ex), val_examples=len(val_ex),
                              skipped_examples=skipped, trainable_params=n_params, total_params=n_params,
                              device=device)
    signature = settings_signature({"settings": asdict(settings), "data": prints, "tiny": tiny.model_dump(),
                                    "vocab": len(tokenizer), "max_len": max_len, "prompt": fmt.version})
    torch.manual_seed(cfg.seed)
    metrics, best = run_loop(model, train_ex, val_ex, settings, out, tokenizer.pad_token_id, metrics, device,
                             signature, resume=resume, progress=progress, started=t0)
    if best is not None:
        load_trainable(model, best)
    _save_base(model, tokenizer, fmt, metrics, out, cfg, prints, device)
    log.info("%s", metrics.summary())
    return metrics


def _pretrain_examples(pairs: Sequence[TacticPair], val: Sequence[TacticPair], cfg: TrainingConfig,
                       fmt: PromptFormat, premises: Callable[[TacticPair], Sequence[str]] | None
                       ) -> tuple[Any, int, list[Any], int, list[Any]]:
    """(the tokenizer trained on the whole prompt-format examples of ``pairs``, the longest example kept, the
    training examples, how many were too long, the validation examples)."""
    from burnqed_core.training.collate import encode_pairs
    from burnqed_core.training.sft import with_premises
    from burnqed_core.training.tokenizer import train_tokenizer

    tiny = cfg.tiny_model
    items = with_premises(pairs, fmt, premises)
    texts = ["".join(fmt.example(s, t, p)) for s, t, p in items]
    tokenizer = train_tokenizer(texts, tiny.vocab_size, seed=cfg.seed, split_digits=tiny.split_digits)
    max_len = min(cfg.max_seq_len, tiny.max_position_embeddings)
    train_ex, skipped = encode_pairs(tokenizer, items, max_len, completion_only=False, fmt=fmt)
    val_ex, _ = encode_pairs(tokenizer, with_premises(val, fmt, premises), max_len, completion_only=False,
                             fmt=fmt)
    if not train_ex:
        raise DataError(f"no pre-training example fits {max_len} tokens")
    return tokenizer, max_len, train_ex, skipped, val_ex


def _pretrain_settings(cfg: TrainingConfig) -> LoopSettings:
    """The training loop's settings for pre-training the tiny model (``training.tiny_model``'s steps, batch
    size and learning rate; the rest from ``training``)."""
    from burnqed_core.training.loop import LoopSettings

    tiny = cfg.tiny_model
    return LoopSettings(kind="pretrain", lr=tiny.pretrain_lr, max_steps=tiny.pretrain_steps,
                        warmup_steps=min(cfg.warmup_steps, tiny.pretrain_steps),
                        batch_size=tiny.pretrain_batch_size, grad_accum=1, eval_every=cfg.eval_every,
                        save_every=cfg.save_every, seed=cfg.seed, max_grad_norm=cfg.max_grad_norm,
                        keep_checkpoints=cfg.keep_checkpoints, lr_schedule=cfg.lr_schedule,
                        min_lr_ratio=cfg.min_lr_ratio, length_groups=cfg.length_groups)


def _save_base(model: Any, tokenizer: Any, fmt: PromptFormat, metrics: TrainingMetrics, out: Path,
               cfg: TrainingConfig, prints: dict[str, str], device: str) -> None:
    """The base model as a HF model directory in ``out``: weights, tokenizer, prompt format, metrics and run
    record."""
    from burnqed_core.training.run_record import RunRecord

    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    fmt.save(out)
    metrics.save(out)
    RunRecord(kind="pretrain", prompt_version=fmt.version, base_model="tiny", config=cfg.model_dump(mode="json"),
              data=prints,
              seeds={"training": cfg.seed, "tokenizer": cfg.seed, "init": cfg.seed}, device=device).save(out)
