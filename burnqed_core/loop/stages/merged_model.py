"""Iteration N's adapter merged into the base weights."""

from __future__ import annotations

import logging
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


def merged_model(profile: Profile, iteration: int, adapter_dir: Path, out_dir: Path) -> StageResult:
    from burnqed_core.training.merge import merge_adapter

    r = merge_adapter(adapter_dir, out_dir, shard_size=profile.training.shard_size)
    return StageResult(stage="merged_model", iteration=iteration, path=str(out_dir), summary=r.summary(),
                       metrics=r.model_dump(mode="json"))


def _merged_model(ctx: StageContext) -> StageResult:
    return merged_model(ctx.settings, ctx.iteration, ctx.input("lora_adapter"), ctx.out)


MERGED_MODEL = StageSpec(
    name="merged_model", out="merged", gpu=True, kinds=frozenset({"safetensors"}),
    doc="lora_adapter[N] merged into the base weights (safetensors + tokenizer), checked against the adapter.",
    inputs=(Input("lora_adapter"),), settings=("training.shard_size",), run=_merged_model,
    extras=("model_fingerprint",),
)
