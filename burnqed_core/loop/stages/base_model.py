"""``base_model``: the shared base's theorem split, drawn once, and the model pre-trained on its training side
(tiny), or the profile's Hugging Face model named (prod)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from burnqed_core.config import DataConfig, LrSchedule, NameFormat, TinyModelConfig, TrainingConfig
from burnqed_core.loop.corpus import (
    BASE_MODEL_FILE,
    SPLIT_FILE,
    base_pairs,
    base_split,
    frame_pairs,
)
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import train_metrics, train_summary
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import StageResult, TacticPair

if TYPE_CHECKING:
    from burnqed_core.data.pairs import TheoremSplit


class Training(Projection):
    """What pre-training reads (`burnqed_core.training.tiny_model.pretrain_base`); ``device``, ``save_every``,
    ``keep_checkpoints`` are the machine's."""

    SOURCE = TrainingConfig
    base_model: str
    tiny_model: TinyModelConfig
    local_names: NameFormat
    numerals: NameFormat
    seed: int
    warmup_steps: int
    lr_schedule: LrSchedule
    min_lr_ratio: float
    max_seq_len: int
    max_grad_norm: float
    eval_every: int
    device: str
    save_every: int
    keep_checkpoints: int


class Data(Projection):
    """The corpus (its theorem split: `burnqed_core.loop.corpus.base_split`) and the pairs' preparation."""

    SOURCE = DataConfig
    corpus: str
    exclude_families: list[str]
    withhold_fraction: float
    withhold_families: list[str]
    val_fraction: float
    max_tokens: int
    seed: int
    alpha_copies: int


class Settings(StageSettings):
    training: Training
    data: Data


def pretrain(settings: Settings, pairs: Sequence[TacticPair], out_dir: Path,
             split: TheoremSplit | None = None) -> StageResult:
    """Pre-train the tiny base on the training side of ``split`` (default: `base_split` of ``pairs``), with the
    validation side as its eval set: validation theorems are never seen by the base (issue 21)."""
    from burnqed_core.data.pairs import prepare_pairs
    from burnqed_core.training.tiny_model import pretrain_base

    d = settings.data
    split = split or base_split(settings, pairs)
    prepared = prepare_pairs(split.trainable(pairs), d.val_fraction, d.seed, d.max_tokens, val_theorems=split.val,
                             alpha_copies=d.alpha_copies)
    train, val = frame_pairs(prepared.train), frame_pairs(prepared.val)
    m = pretrain_base(train, settings.training, out_dir, val=val, progress=True)
    summary = train_summary("pre-trained tiny base", m) + (f"; on {prepared.stats.train_pairs} pairs of "
                                                           f"{prepared.stats.train_theorems} theorems, "
                                                           f"{prepared.stats.val_theorems} held out")
    if split.withheld:
        summary += f", {len(split.withheld)} withheld (search-only exercises)"
    return StageResult(stage="base_model", path=str(out_dir), summary=summary,
                       metrics=train_metrics(m) | {"train_theorems": prepared.stats.train_theorems,
                                                   "val_theorems": prepared.stats.val_theorems})


def base_model(settings: Settings, pairs_dir: Path, out_dir: Path) -> StageResult:
    """Draw the theorem split of the base pairs once (``split.json`` in ``out_dir``, `base_split`); then, with
    ``training.base_model: tiny``, pre-train the tiny model on its training side into ``out_dir``; else name the
    profile's Hugging Face model (a hub name or a local dir, loaded by the training stage) in ``base_model.json``."""
    from burnqed_core.data.pairs import write_split

    name = settings.training.base_model
    pairs = base_pairs(pairs_dir)
    split = base_split(settings, pairs)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_split(split, out_dir / SPLIT_FILE)
    if name == "tiny":
        return pretrain(settings, pairs, out_dir, split)
    atomic_write_text(out_dir / BASE_MODEL_FILE, json.dumps({"model": name}))
    return StageResult(stage="base_model", path=str(out_dir), summary=f"base model {name} (trained elsewhere)",
                       metrics={"model": name, "train_theorems": len(split.train), "val_theorems": len(split.val)})


def _run(ctx: StageContext[Settings]) -> StageResult:
    return base_model(ctx.settings, ctx.input("base_tactic_pairs"), ctx.out)


BASE_MODEL = StageSpec(
    name="base_model", partitioned=False, settings=Settings, run=_run, inputs=(Input("base_tactic_pairs"),),
    doc="The tiny model pre-trained here on the training side of the base pairs' theorem split (drawn here "
        "once, ``split.json``: its validation theorems are never trained on, and every iteration's pairs reuse "
        "it), or the profile's Hugging Face model (``training.base_model``) in prod.",
)
