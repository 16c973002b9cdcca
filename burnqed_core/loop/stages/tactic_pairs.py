"""``tactic_pairs``: iteration N's training pairs, split by theorem as ``base_model`` drew it: the base pairs,
mixed from N > 0 with the positive steps of the trajectories of every iteration < N."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burnqed_core.config import AutomationSteps, DataConfig, EvalConfig
from burnqed_core.loop import corpus
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult, TacticPair, TrajectoryRecord

if TYPE_CHECKING:
    from burnqed_core.data.pairs.prepare import TheoremSplit

_IDENT = re.compile(r"[A-Za-z_\u00c0-\u1fff][\w.'!?\u00c0-\u1fff]*")


class Data(Projection):
    """The pairs' preparation and the mix with earlier trajectories."""

    SOURCE = DataConfig
    val_fraction: float
    max_tokens: int
    base_subsample: int
    trajectory_upsample: int
    trajectory_max_share: float
    seed: int
    automation_steps: AutomationSteps
    alpha_copies: int
    benchmark: str
    search_pool: str | None


class Eval(Projection):
    """The eval's other sets (held-out module families)."""

    SOURCE = EvalConfig
    also: list[str]


class Settings(StageSettings):
    data: Data
    eval: Eval


def held_out_names(settings: Settings, premises_dir: Path) -> frozenset[str]:
    """The library premises of the held-out module families (`burnqed_core.loop.corpus.held_out_families`): a
    found step that names one is never trained on (issue 65: nothing of core:dev/core:test reaches training)."""
    from burnqed_core.data.theorems.core_pool import module_family
    from burnqed_core.premises.library import read_library

    premises, _, _ = read_library(premises_dir)
    if not premises:
        return frozenset()
    d = settings.data
    held = corpus.held_out_families(d.benchmark, settings.eval.also, d.search_pool)
    return frozenset(p.name for p in premises if module_family(p.module) in held)


def names_any(tactic: str, names: frozenset[str]) -> bool:
    """Whether ``tactic`` names one of ``names`` (full names, as written)."""
    return any(ident in names for ident in _IDENT.findall(tactic))


def tactic_pairs(
    settings: Settings,
    iteration: int,
    base: Sequence[TacticPair],
    trajectory_dirs: Sequence[Path],
    out_dir: Path,
    tokenizer_dir: Path | None = None,
    *,
    split: TheoremSplit,
    held_out: frozenset[str] = frozenset(),
) -> StageResult:
    """Iteration 0: the prepared base pairs. N > 0: base subsample + positive
    trajectory steps of earlier iterations, upsampled up to
    ``data.trajectory_max_share`` of the mix. Train and validation follow
    ``split``, the split `base_model` drew before pre-training. A found step whose tactic names one of
    ``held_out`` (the held-out families' library premises) is left out, and counted."""
    from burnqed_core.data.pairs.mixing import mix_iteration, positive_steps
    from burnqed_core.data.pairs.prepare import hf_token_counter, prepare_pairs, write_prepared
    from burnqed_core.trajectory_io import read_trajectories

    d = settings.data
    counter = hf_token_counter(tokenizer_dir) if tokenizer_dir else None
    prepared = prepare_pairs(split.trainable(base), d.val_fraction, d.seed, d.max_tokens, counter,
                             val_theorems=split.val, alpha_copies=d.alpha_copies)
    extra: dict[str, Any] = {"iteration": iteration, "trajectories": [str(p) for p in trajectory_dirs],
                             "split": {"seed": split.seed, "val_fraction": split.val_fraction,
                                       "train_theorems": len(split.train), "val_theorems": len(split.val),
                                       "withheld_theorems": len(split.withheld)}}
    if iteration > 0:
        records: list[TrajectoryRecord] = []
        for p in trajectory_dirs:
            records.extend(read_trajectories(p))
        exclude = ("automation",) if d.automation_steps == "exclude" else ()
        steps = positive_steps(records, source="trajectory", exclude_sources=exclude)
        kept = [s for s in steps if not names_any(s.tactic, held_out)]
        extra["held_out_steps_excluded"] = len(steps) - len(kept)
        steps = kept
        extra["automation_steps"] = {"policy": d.automation_steps, "excluded": sum(
            r.label == "positive" and r.source in exclude for r in records)}
        mix = mix_iteration(prepared, steps, d.base_subsample, d.trajectory_upsample, d.seed + iteration,
                            max_share=d.trajectory_max_share, split=split)
        prepared = prepared.model_copy(update={"train": mix.train, "val": mix.val})
        extra["mix"] = mix.stats.model_dump(mode="json")
    write_prepared(prepared, out_dir, extra)
    s = prepared.stats
    summary = (f"{prepared.train.height} train / {prepared.val.height} val pairs "
               f"({s.train_theorems} / {s.val_theorems} theorems, split by name before pre-training"
               + (f"; {len(split.withheld)} withheld" if split.withheld else "") + ")")
    if iteration > 0:
        ms = extra["mix"]
        summary += (f"; mix: {json.dumps({k: v for k, v in ms.items() if type(v) is int})}, "
                    f"trajectory share {ms['trajectory_fraction']:.1%} (cap {ms['trajectory_max_share']:.0%}), "
                    f"upsample x{ms['effective_upsample']:.2f}")
        if extra["automation_steps"]["excluded"]:
            summary += f"; {extra['automation_steps']['excluded']} automation-only proof steps left out"
    return StageResult(stage="tactic_pairs", iteration=iteration, path=str(out_dir), summary=summary,
                       metrics={"train_pairs": prepared.train.height, "val_pairs": prepared.val.height})


def _run(ctx: StageContext[Settings]) -> StageResult:
    model = ctx.input("base_model")
    return tactic_pairs(ctx.settings, ctx.iteration, corpus.base_pairs(ctx.input("base_tactic_pairs")),
                        trajectory_dirs(ctx.earlier_outputs()), ctx.out, Path(corpus.base_model_path(model)),
                        split=corpus.read_base_split(model),
                        held_out=held_out_names(ctx.settings, ctx.input("premise_index")))


TACTIC_PAIRS = StageSpec(
    name="tactic_pairs", settings=Settings, run=_run,
    inputs=(Input("base_tactic_pairs"), Input("base_model"), Input("premise_index", edge=False)),
    earlier="trajectories",
    doc="Train/val pairs split by theorem (the split ``base_model`` drew before pre-training): the base pairs at "
        "iteration 0; from N > 0 a base subsample mixed with the upsampled positive steps of the trajectories of "
        "every iteration < N (read from the run directory), at most ``data.trajectory_max_share`` of the mix. "
        "Under a backfill it first waits for runs still materialising earlier iterations.",
)
