"""The model a LoRA adapter trains on: the base loaded in full precision or, with QLoRA, in 4-bit NF4 with double
quantisation and bf16 compute (bitsandbytes; ``prepare_model_for_kbit_training``), the same code on CPU and GPU
(bitsandbytes 0.50 runs 4-bit on this CPU); a fresh or warm adapter on top (`lora_model`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import TrainingConfig
from burnqed_core.errors import ProfileError, TrainingError

log = logging.getLogger(__name__)

QUANT_WIDTH_MULTIPLE = 32


# ----------------------------------------------------------------------------- model loading


def check_quantizable(base: str | Path, target_modules: Sequence[str] = ()) -> None:
    """Raise `TrainingError` naming the first linear layer a 4-bit load could not pack.

    bitsandbytes repacks 4-bit weights for CPU inference in blocks of 32 output
    features (notes/stack-ml.md); checked on a meta-device copy before any
    weight is loaded. The output head stays unquantised and is skipped.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(base)
    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(config)
    head = skeleton.get_output_embeddings()
    for name, mod in skeleton.named_modules():
        if isinstance(mod, torch.nn.Linear) and mod is not head and mod.out_features % QUANT_WIDTH_MULTIPLE:
            raise TrainingError(
                f"cannot load {base} in 4-bit: layer {name} has out_features {mod.out_features}, not a multiple of "
                f"{QUANT_WIDTH_MULTIPLE} (bitsandbytes packs 4-bit weights in blocks of {QUANT_WIDTH_MULTIPLE}); "
                "train with qlora: false or change the model's widths")
    if target_modules:
        names = {n.rsplit(".", 1)[-1] for n, m in skeleton.named_modules() if isinstance(m, torch.nn.Linear)}
        if not set(target_modules) & names:
            raise ProfileError(f"training.lora.target_modules {list(target_modules)} match no linear layer of {base} "
                               f"(it has {sorted(names)})")


def bnb_config(compute_dtype: str = "bfloat16") -> Any:
    """NF4 + double quantisation + bf16 compute (the seeds' QLoRA)."""
    import torch
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                              bnb_4bit_compute_dtype=getattr(torch, compute_dtype))


def load_base(base: str | Path, qlora: bool, device: str, gradient_checkpointing: bool = False,
              target_modules: Sequence[str] = (), compute_dtype: str = "bfloat16") -> Any:
    """The base causal LM ready for LoRA: float32 (bf16 on CUDA), or 4-bit NF4 when ``qlora``."""
    import torch
    from transformers import AutoModelForCausalLM

    base = str(base)
    if not (Path(base) / "config.json").exists() and Path(base).exists():
        raise TrainingError(f"{base}: not a model directory (no config.json)")
    gc_kwargs = {"use_reentrant": False}
    if qlora:
        from peft import prepare_model_for_kbit_training

        check_quantizable(base, target_modules)
        kwargs: dict[str, Any] = {"quantization_config": bnb_config(compute_dtype),
                                  "dtype": getattr(torch, compute_dtype),
                                  # always named: without a device map, a 4-bit load goes to the GPU whenever
                                  # there is one, also for training.device: cpu (seen on an H100 box)
                                  "device_map": {"": device}}
        model = AutoModelForCausalLM.from_pretrained(base, **kwargs)
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gradient_checkpointing,
                                                gradient_checkpointing_kwargs=gc_kwargs)
    else:
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype).to(device)
        if gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=gc_kwargs)
            model.enable_input_require_grads()
    model.config.use_cache = False
    return model


def lora_model(model: Any, cfg: TrainingConfig, warm_adapter: Path | None) -> Any:
    from peft import LoraConfig as PeftLoraConfig
    from peft import PeftModel, get_peft_model

    if warm_adapter is not None:
        return PeftModel.from_pretrained(model, str(warm_adapter), is_trainable=True)
    lc = PeftLoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                        target_modules=list(cfg.lora.target_modules), bias="none", task_type="CAUSAL_LM")
    try:
        return get_peft_model(model, lc)
    except ValueError as e:
        raise ProfileError(f"training.lora: {e}") from None


def is_adapter_dir(path: str | Path) -> bool:
    return (Path(path) / "adapter_config.json").exists()


def adapter_base(adapter_dir: str | Path) -> str:
    """The base model an adapter dir was trained on (from adapter_config.json)."""
    cfg = json.loads((Path(adapter_dir) / "adapter_config.json").read_text(encoding="utf-8"))
    return str(cfg.get("base_model_name_or_path") or "")


def count_params(model: Any) -> tuple[int, int]:
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = 0
    for p in model.parameters():
        # bitsandbytes Params4bit store two 4-bit values per element
        total += p.numel() * (2 if p.__class__.__name__ == "Params4bit" else 1)
    return trainable, total
