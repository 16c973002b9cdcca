"""Merge a LoRA adapter into its base and export a plain HF model directory.

The merge happens in float32 on the un-quantised base weights, loaded
separately, also for a QLoRA adapter (seed 003, prompt 5.3): the result is a
normal model (safetensors, sharded above ``shard_size``, + tokenizer +
config) that the local policy, an SGLang server and the next iteration load
like any other. The export is written to a temporary directory beside the
output and verified THERE: the merged model is reloaded from that directory
and its logits on fixed prompts are compared with the adapter model's (base
+ LoRA, un-merged); the report carries the max absolute difference and the
size. Only a verified export replaces the output directory (renames: the
old output is moved aside, the new one renamed in, the old one removed), so
a failed merge or verification leaves an earlier output as it was.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from burnqed_core.data.pairs.prompt import PROMPT_FILE, PromptFormat, format_prompt
from burnqed_core.errors import BurnqedError
from burnqed_core.record_io import atomic_write_text, fsync_dir

log = logging.getLogger(__name__)

MERGE_FILE = "merge.json"
VERIFY_STATES = (
    "n : Nat\n⊢ n + 0 = n",
    "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q",
    "xs : List Nat\n⊢ (xs ++ []).length = xs.length",
)
# float32 merge then reload: differences are rounding only (measured ~3e-6 on the tiny model)
DEFAULT_TOLERANCE = 1e-3


class MergeError(BurnqedError):
    """The adapter cannot be merged, or the merged model does not reproduce the adapter's outputs."""


class MergeReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    out_dir: str
    adapter: str
    base_model: str
    qlora: bool = False
    max_abs_logit_diff: float | None = None
    max_abs_logit: float | None = None
    size_bytes: int = 0
    files: list[str]
    num_shards: int = 1
    time_s: float = 0.0

    def summary(self) -> str:
        diff = "not verified" if self.max_abs_logit_diff is None else (
            f"max |logit diff| {self.max_abs_logit_diff:.2e} (logits up to {self.max_abs_logit:.2f})")
        return (f"merged {self.adapter} into {self.base_model} -> {self.out_dir}: {self.size_bytes / 1e6:.1f} MB in "
                f"{self.num_shards} shard(s), {diff}, {self.time_s:.1f} s")


def _fixed_logits(model: Any, tokenizer: Any) -> Any:
    import torch

    batch = tokenizer([format_prompt(s) for s in VERIFY_STATES], return_tensors="pt", padding=True)
    with torch.no_grad():
        return model(**batch.to(model.device)).logits.float().cpu()


def _read_qlora_flag(adapter_dir: Path) -> bool:
    import json

    run = adapter_dir / "run.json"
    if run.exists():
        try:
            return json.loads(run.read_text(encoding="utf-8")).get("kind") == "qlora"
        except ValueError:
            return False
    return False


def merge_adapter(
    adapter_dir: str | Path,
    out_dir: str | Path,
    base_model: str | Path | None = None,
    shard_size: str | int = "2GB",
    verify: bool = True,
    tolerance: float = DEFAULT_TOLERANCE,
) -> MergeReport:
    """Merge ``adapter_dir`` into its base (from adapter_config.json unless ``base_model``) and save to ``out_dir``."""
    t0 = time.perf_counter()
    adapter = Path(adapter_dir)
    out = Path(out_dir)
    base = _base_of(adapter, base_model)
    qlora = _read_qlora_flag(adapter)
    log.info("merging %s%s into %s (float32)", adapter, " (QLoRA adapter)" if qlora else "", base)
    merged, tokenizer, reference = _merge(adapter, base, verify)

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        _save_export(merged, tokenizer, adapter, base, tmp, shard_size)
        del merged
        files = sorted(p.name for p in tmp.iterdir() if p.is_file())
        report = MergeReport(
            out_dir=str(out), adapter=str(adapter), base_model=base, qlora=qlora, files=files,
            size_bytes=sum((tmp / f).stat().st_size for f in files),
            num_shards=sum(1 for f in files if f.endswith(".safetensors")),
        )
        if reference is not None:
            _verify_export(tmp, reference, report, out, tolerance)
        report.time_s = time.perf_counter() - t0
        atomic_write_text(tmp / MERGE_FILE, report.model_dump_json(indent=2))
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("%s", report.summary())
    return report


def _base_of(adapter: Path, base_model: str | Path | None) -> str:
    """The base model to merge ``adapter`` into: ``base_model``, else the one its adapter_config.json names."""
    from burnqed_core.training.base_models import adapter_base, is_adapter_dir

    if not is_adapter_dir(adapter):
        raise MergeError(f"{adapter}: not a LoRA adapter dir (no adapter_config.json)")
    base = str(base_model or adapter_base(adapter))
    if not base:
        raise MergeError(f"{adapter}: adapter_config.json names no base model; pass the base explicitly")
    if Path(base).exists() and not (Path(base) / "config.json").exists():
        raise MergeError(f"base model {base}: not a model directory (no config.json)")
    return base


def _merge(adapter: Path, base: str, verify: bool) -> tuple[Any, Any, Any]:
    """(the adapter merged into ``base`` in float32, the tokenizer (the adapter's, else the base's; padding with
    EOS when it has no pad token), the adapter model's logits on `VERIFY_STATES` when ``verify``, else None)."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    model = PeftModel.from_pretrained(model, str(adapter)).eval()
    tok_src = adapter if (adapter / "tokenizer_config.json").exists() else Path(base)
    tokenizer = AutoTokenizer.from_pretrained(tok_src)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    reference = _fixed_logits(model, tokenizer) if verify else None
    merged = model.merge_and_unload()
    merged.config.use_cache = True
    return merged, tokenizer, reference


def _save_export(merged: Any, tokenizer: Any, adapter: Path, base: str, tmp: Path, shard_size: str | int) -> None:
    """The merged model, its tokenizer, its prompt format and the adapter's training records, in ``tmp``."""
    merged.save_pretrained(tmp, max_shard_size=shard_size)
    tokenizer.save_pretrained(tmp)
    PromptFormat.of_model(adapter if (adapter / PROMPT_FILE).exists() else base).save(tmp)
    for extra in ("metrics.json", "run.json"):
        if (adapter / extra).exists():
            shutil.copy2(adapter / extra, tmp / f"training_{extra}")


def _verify_export(tmp: Path, reference: Any, report: MergeReport, out: Path, tolerance: float) -> None:
    """Reload the export in ``tmp`` and compare its logits with the adapter model's (``reference``), into
    ``report``; a difference over ``tolerance`` (relative to the logits' scale) is a `MergeError`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    reloaded = AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.float32).eval()
    got = _fixed_logits(reloaded, AutoTokenizer.from_pretrained(tmp))
    del reloaded
    report.max_abs_logit_diff = float((got - reference).abs().max())
    report.max_abs_logit = float(reference.abs().max())
    if report.max_abs_logit_diff > tolerance * max(1.0, report.max_abs_logit):
        raise MergeError(f"{out}: merged model differs from the adapter model by "
                         f"{report.max_abs_logit_diff:.3g} in logits (tolerance {tolerance:g} x scale "
                         f"{report.max_abs_logit:.3g}); the previous output, if any, is kept")


def _replace_dir(new: Path, out: Path) -> None:
    """Put directory ``new`` at ``out`` by renames: an existing ``out`` is
    moved aside first and removed only once ``new`` is in place (if the
    second rename fails, the old one is moved back)."""
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    if old.exists():
        shutil.rmtree(old)
    had_old = out.exists()
    if had_old:
        os.replace(out, old)
    try:
        os.replace(new, out)
    except BaseException:
        if had_old:
            os.replace(old, out)
        raise
    fsync_dir(out.parent)
    if had_old:
        shutil.rmtree(old, ignore_errors=True)
