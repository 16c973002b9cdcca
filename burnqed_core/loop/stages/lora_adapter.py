"""``lora_adapter``: iteration N's LoRA adapter, trained on its tactic pairs over the base model, warm-started
from iteration N-1's adapter (or merged model: ``training.warm_start``). With ``ebm.joint`` (from iteration 1,
which has trajectories to learn from) the energy head is trained with it in the same loop
(`burnqed_core.training.joint`) and saved beside the adapter; the ``ebm`` stage adopts it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import DataConfig, EBMConfig, EvalConfig, PolicyConfig, TrainingConfig
from burnqed_core.errors import DataError
from burnqed_core.loop import corpus
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import train_metrics, train_summary
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


class Data(Projection):
    """The theorems a pair's prompt retrieves premises for (``training.prompt_premises``), and the held-out sets."""

    SOURCE = DataConfig
    corpus: str
    benchmark: str
    search_pool: str | None


class Eval(Projection):
    SOURCE = EvalConfig
    also: list[str]


class Ebm(Projection):
    """The joint training (``ebm.joint``): its settings, the head's and the contrastive batch's."""

    SOURCE = EBMConfig
    joint: bool
    joint_lambda: float
    joint_head_lr: float
    joint_batch_size: int
    joint_monitor_every: int
    joint_probe_states: int
    joint_abort_centroid_keep: float
    joint_abort_sft_patience: int
    hidden_dims: list[int]
    dropout: float
    first_layer_scale: float
    power_iterations: int
    temperature_init: float
    temperature_min: float
    temperature_max: float
    temperature_patience: int
    weight_decay: float
    num_negatives: int
    val_fraction: float
    seed: int
    encode_batch_size: int


class Policy(Projection):
    """How the policy's encoder cuts a state's prompt (the joint training encodes as it does)."""

    SOURCE = PolicyConfig
    max_prompt_tokens: int


class Settings(StageSettings):
    """The whole training section (`burnqed_core.training.sft.train_sft` reads it), what the premise lines of
    the prompts are retrieved for, and the joint training's settings."""

    training: TrainingConfig
    data: Data
    eval: Eval
    ebm: Ebm
    policy: Policy


def joint_training(settings: Settings, iteration: int, earlier: Sequence[Path]) -> tuple[Any, str]:
    """The joint training's `ExtensionFactory` (None: plain SFT) and why not when there is none."""
    from burnqed_core.ebm.run import read_trajectory_dirs
    from burnqed_core.training.joint import JointTraining, joint_data

    if not settings.ebm.joint:
        return None, "ebm.joint is false"
    if iteration == 0 or not earlier:
        return None, "iteration 0 has no trajectories to learn from"
    cfg = EBMConfig.model_validate(settings.ebm.model_dump())
    try:
        jd = joint_data(read_trajectory_dirs(earlier), cfg)
    except DataError as e:
        log.warning("lora_adapter[%d]: plain SFT: %s", iteration, e)
        return None, str(e)
    return JointTraining(cfg=cfg, jd=jd, max_prompt_tokens=settings.policy.max_prompt_tokens), ""


def lora_adapter(settings: Settings, iteration: int, pairs_dir: Path, base_model: Path,
                 warm_from: Path | None, out_dir: Path, premises_dir: Path | None = None,
                 earlier: Sequence[Path] = ()) -> StageResult:
    """LoRA (or QLoRA) SFT on the prepared pairs of ``pairs_dir``; resumes from its last checkpoint. With
    ``training.prompt_premises`` the prompts show the premises retrieved for each pair (from ``premises_dir``).
    With ``ebm.joint``: jointly with the energy head on the trajectories of ``earlier`` iterations; a run its
    monitor aborts keeps its last good checkpoint and says so (the ``ebm`` check then fails)."""
    from burnqed_core.data.pairs.prompt import PromptFormat
    from burnqed_core.training.joint_head import read_joint_record
    from burnqed_core.training.sft import LoopAborted, load_pairs_dir, train_sft

    train, val, fingerprints = load_pairs_dir(pairs_dir)
    d = settings.data
    k = PromptFormat.of_model(base_model).premises
    shown = corpus.training_premises(k, premises_dir, corpus=d.corpus, benchmark=d.benchmark,
                                     also=settings.eval.also, search_pool=d.search_pool)
    joint, why_not = joint_training(settings, iteration, earlier)
    what = f"LoRA{' (QLoRA)' if settings.training.qlora else ''} SFT" + (" + EBM (joint)" if joint else "")
    try:
        m = train_sft(train, val, settings.training, out_dir, base_model, iteration=iteration, warm_from=warm_from,
                      data_fingerprints=fingerprints, progress=True, premises=shown.of if shown is not None else None,
                      extension=joint)
    except LoopAborted as e:
        if e.metrics is None:
            raise
        m, what = e.metrics, f"{what}, ABORTED ({e}; kept {e.best.name if e.best else 'nothing'})"
    metrics = train_metrics(m) | {"joint": joint is not None}
    if joint is None:
        metrics["joint_reason"] = why_not
    else:
        rec = read_joint_record(out_dir)
        metrics["joint_aborted"] = rec.aborted.model_dump(mode="json") if rec.aborted else None
        metrics["joint_monitors"] = len(rec.monitor)  # the series: joint.json (the run's metadata shows it)
    return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir),
                       summary=train_summary(what, m), metrics=metrics)


def _payload(settings: Settings, n: int | None) -> dict[str, Any]:
    """The fingerprint's settings: the joint training's only where it runs (``ebm.joint`` at N > 0); elsewhere
    changing them leaves the adapter as it is."""
    full = settings.payload()
    if n is not None and n > 0 and settings.ebm.joint:
        return full
    return {k: v for k, v in full.items() if k not in ("ebm", "policy")}


def _warm_start(settings: Settings) -> str:
    return "lora_adapter" if settings.training.warm_start == "adapter" else "merged_model"


def _run(ctx: StageContext[Settings]) -> StageResult:
    base = Path(corpus.base_model_path(ctx.input("base_model")))
    return lora_adapter(ctx.settings, ctx.iteration, ctx.input("tactic_pairs"), base, ctx.previous, ctx.out,
                        ctx.input("premise_index"), earlier=trajectory_dirs(ctx.earlier_outputs()))


LORA_ADAPTER = StageSpec(
    name="lora_adapter", gpu=True, settings=Settings, run=_run, previous=_warm_start, earlier="trajectories",
    payload=_payload,
    inputs=(Input("tactic_pairs"), Input("base_model"), Input("premise_index", edge=False)),
    doc="SFT of a LoRA adapter on tactic_pairs[N] over the base model, warm-started from iteration N-1's adapter "
        "(or merged model: ``training.warm_start``); resumes from its last checkpoint. With ``ebm.joint`` (N > 0) "
        "the energy head is trained with it on the trajectories of iterations < N and saved beside it.",
)
