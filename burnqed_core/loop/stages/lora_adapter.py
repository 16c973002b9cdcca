"""``lora_adapter``: iteration N's LoRA adapter, trained on its tactic pairs over the base model, warm-started
from iteration N-1's adapter (or merged model: ``training.warm_start``)."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import DataConfig, EvalConfig, TrainingConfig
from burnqed_core.loop import corpus
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import train_metrics, train_summary
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult


class Data(Projection):
    """The theorems a pair's prompt retrieves premises for (``training.prompt_premises``), and the held-out sets."""

    SOURCE = DataConfig
    corpus: str
    benchmark: str
    search_pool: str | None


class Eval(Projection):
    SOURCE = EvalConfig
    also: list[str]


class Settings(StageSettings):
    """The whole training section (`burnqed_core.training.sft.train_sft` reads it), and what the premise lines of
    the prompts are retrieved for."""

    training: TrainingConfig
    data: Data
    eval: Eval


def lora_adapter(settings: Settings, iteration: int, pairs_dir: Path, base_model: Path,
                 warm_from: Path | None, out_dir: Path, premises_dir: Path | None = None) -> StageResult:
    """LoRA (or QLoRA) SFT on the prepared pairs of ``pairs_dir``; resumes from its last checkpoint. With
    ``training.prompt_premises`` the prompts show the premises retrieved for each pair (from ``premises_dir``)."""
    from burnqed_core.data.prompt import PromptFormat
    from burnqed_core.training.sft import load_pairs_dir, train_sft

    train, val, fingerprints = load_pairs_dir(pairs_dir)
    d = settings.data
    k = PromptFormat.of_model(base_model).premises
    shown = corpus.training_premises(k, premises_dir, corpus=d.corpus, benchmark=d.benchmark,
                                     also=settings.eval.also, search_pool=d.search_pool)
    m = train_sft(train, val, settings.training, out_dir, base_model, iteration=iteration, warm_from=warm_from,
                  data_fingerprints=fingerprints, progress=True, premises=shown.of if shown is not None else None)
    return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir),
                       summary=train_summary(f"LoRA{' (QLoRA)' if settings.training.qlora else ''} SFT", m),
                       metrics=train_metrics(m))


def _warm_start(settings: Settings) -> str:
    return "lora_adapter" if settings.training.warm_start == "adapter" else "merged_model"


def _run(ctx: StageContext[Settings]) -> StageResult:
    base = Path(corpus.base_model_path(ctx.input("base_model")))
    return lora_adapter(ctx.settings, ctx.iteration, ctx.input("tactic_pairs"), base, ctx.previous, ctx.out,
                        ctx.input("premise_index"))


LORA_ADAPTER = StageSpec(
    name="lora_adapter", gpu=True, settings=Settings, run=_run, previous=_warm_start,
    inputs=(Input("tactic_pairs"), Input("base_model"), Input("premise_index", edge=False)),
    doc="SFT of a LoRA adapter on tactic_pairs[N] over the base model, warm-started from iteration N-1's adapter "
        "(or merged model: ``training.warm_start``); resumes from its last checkpoint.",
)
