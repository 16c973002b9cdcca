"""Iteration N's LoRA adapter, trained on its tactic pairs."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.loop import corpus
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import train_metrics, train_summary
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


def lora_adapter(profile: Profile, iteration: int, pairs_dir: Path, base_model: Path,
                 warm_from: Path | None, out_dir: Path, trajectory_dirs: Sequence[Path] = ()) -> StageResult:
    """LoRA SFT; with ``ebm.joint.enabled`` at iteration N > 0 (given the
    trajectories of iterations < N), the adapter and the energy head are
    trained together (`training.joint`; the `ebm` stage then adopts the head)."""
    from burnqed_core.training.sft import load_pairs_dir, train_sft

    train, val, fingerprints = load_pairs_dir(pairs_dir)
    if profile.ebm.joint.enabled and iteration > 0 and trajectory_dirs:
        from burnqed_core.ebm.run import read_trajectory_dirs
        from burnqed_core.training.joint import train_joint

        rep = train_joint(train, val, read_trajectory_dirs(trajectory_dirs), profile.training, profile.ebm, out_dir,
                          base_model, iteration=iteration, warm_from=warm_from, progress=True)
        return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir), summary=rep.summary(),
                           metrics=rep.model_dump(mode="json") | {"joint": True})
    m = train_sft(train, val, profile.training, out_dir, base_model, iteration=iteration, warm_from=warm_from,
                  data_fingerprints=fingerprints, progress=True)
    return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir),
                       summary=train_summary(f"LoRA{' (QLoRA)' if profile.training.qlora else ''} SFT", m),
                       metrics=train_metrics(m))


def _warm_start(profile: Profile) -> str:
    return "lora_adapter" if profile.training.warm_start == "adapter" else "merged_model"


def _lora_settings(profile: Profile) -> tuple[str, ...]:
    # joint training reads the whole EBM section; separate training only whether joint is on
    return ("training", "ebm" if profile.ebm.joint.enabled else "ebm.joint.enabled")


def _lora_adapter(ctx: StageContext) -> StageResult:
    base = Path(corpus.base_model_path(ctx.input("base_model")))
    return lora_adapter(ctx.settings, ctx.iteration, ctx.input("tactic_pairs"), base, ctx.previous, ctx.out)


LORA_ADAPTER = StageSpec(
    name="lora_adapter", out="adapter", gpu=True, kinds=frozenset({"pytorch"}),
    doc="SFT of a LoRA adapter on tactic_pairs[N] over the base model, warm-started from iteration N-1's adapter "
        "(or merged model: ``training.warm_start``); resumes from its last checkpoint.",
    inputs=(Input("tactic_pairs"), Input("base_model")), previous=_warm_start, settings=_lora_settings,
    run=_lora_adapter, progress="training", extras=("loss_curve",), label="LoRA",
)
