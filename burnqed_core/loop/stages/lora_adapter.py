"""``lora_adapter``: iteration N's LoRA adapter, trained on its tactic pairs over the base model, warm-started
from iteration N-1's adapter (or merged model: ``training.warm_start``)."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import TrainingConfig
from burnqed_core.loop import corpus
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import train_metrics, train_summary
from burnqed_core.projection import StageSettings
from burnqed_core.records import StageResult


class Settings(StageSettings):
    """The whole training section (`burnqed_core.training.sft.train_sft` reads it)."""

    training: TrainingConfig


def lora_adapter(settings: Settings, iteration: int, pairs_dir: Path, base_model: Path,
                 warm_from: Path | None, out_dir: Path) -> StageResult:
    """LoRA (or QLoRA) SFT on the prepared pairs of ``pairs_dir``; resumes from its last checkpoint."""
    from burnqed_core.training.sft import load_pairs_dir, train_sft

    train, val, fingerprints = load_pairs_dir(pairs_dir)
    m = train_sft(train, val, settings.training, out_dir, base_model, iteration=iteration, warm_from=warm_from,
                  data_fingerprints=fingerprints, progress=True)
    return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir),
                       summary=train_summary(f"LoRA{' (QLoRA)' if settings.training.qlora else ''} SFT", m),
                       metrics=train_metrics(m))


def _warm_start(settings: Settings) -> str:
    return "lora_adapter" if settings.training.warm_start == "adapter" else "merged_model"


def _run(ctx: StageContext[Settings]) -> StageResult:
    base = Path(corpus.base_model_path(ctx.input("base_model")))
    return lora_adapter(ctx.settings, ctx.iteration, ctx.input("tactic_pairs"), base, ctx.previous, ctx.out)


LORA_ADAPTER = StageSpec(
    name="lora_adapter", gpu=True, settings=Settings, run=_run, previous=_warm_start,
    inputs=(Input("tactic_pairs"), Input("base_model")),
    doc="SFT of a LoRA adapter on tactic_pairs[N] over the base model, warm-started from iteration N-1's adapter "
        "(or merged model: ``training.warm_start``); resumes from its last checkpoint.",
)
