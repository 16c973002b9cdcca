"""``merged_model``: iteration N's adapter merged into the base weights (safetensors and tokenizer), checked
against the adapter."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import TrainingConfig
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult


class Training(Projection):
    SOURCE = TrainingConfig
    shard_size: str


class Settings(StageSettings):
    training: Training


def merged_model(settings: Settings, iteration: int, adapter_dir: Path, out_dir: Path) -> StageResult:
    from burnqed_core.training.merge import merge_adapter

    r = merge_adapter(adapter_dir, out_dir, shard_size=settings.training.shard_size)
    return StageResult(stage="merged_model", iteration=iteration, path=str(out_dir), summary=r.summary(),
                       metrics=r.model_dump(mode="json"))


def _run(ctx: StageContext[Settings]) -> StageResult:
    return merged_model(ctx.settings, ctx.iteration, ctx.input("lora_adapter"), ctx.out)


MERGED_MODEL = StageSpec(
    name="merged_model", gpu=True, settings=Settings, run=_run, inputs=(Input("lora_adapter"),),
    doc="lora_adapter[N] merged into the base weights (safetensors + tokenizer), checked against the adapter.",
)
