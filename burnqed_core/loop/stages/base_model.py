"""``base_model``: the shared base's theorem split, drawn once, and the model pre-trained on its training side
(tiny), or the profile's Hugging Face model named (prod)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burnqed_core.config import DataConfig, EvalConfig, LrSchedule, NameFormat, TinyModelConfig, TrainingConfig
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
    from burnqed_core.data.pairs.prepare import TheoremSplit
    from burnqed_core.premises.records import Premise


class Training(Projection):
    """What pre-training reads (`burnqed_core.training.tiny_model.pretrain_base`); ``device``, ``save_every``,
    ``keep_checkpoints`` are the machine's."""

    SOURCE = TrainingConfig
    base_model: str
    tiny_model: TinyModelConfig
    local_names: NameFormat
    numerals: NameFormat
    prompt_premises: int
    premise_names: NameFormat
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
    length_groups: int


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
    library_pairs: int
    benchmark: str
    search_pool: str | None


class Eval(Projection):
    """The eval's other sets: their module families stay out of the library pairs."""

    SOURCE = EvalConfig
    also: list[str]


class Settings(StageSettings):
    training: Training
    data: Data
    eval: Eval


def library_training_pairs(settings: Settings, premises_dir: Path | None) -> list[TacticPair]:
    """``data.library_pairs`` (type -> name) pairs of the premise library (`burnqed_core.premises.pretraining`):
    none of a held-out module family, none of a search-pool theorem or eval-set theorem."""
    from burnqed_core.premises.pretraining import type_name_pairs

    return type_name_pairs(library_premises(settings, premises_dir))


def library_premises(settings: Settings, premises_dir: Path | None) -> list[Premise]:
    """The premises of the (type -> name) pairs (`library_training_pairs`)."""
    d = settings.data
    if d.library_pairs <= 0:
        return []
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.errors import DataError
    from burnqed_core.loop.corpus import held_out_families
    from burnqed_core.premises.library import read_library
    from burnqed_core.premises.pretraining import choose_library_premises

    if premises_dir is None:
        raise DataError("data.library_pairs needs the premise index (premises.library)")
    premises, _, _ = read_library(premises_dir)
    if not premises:
        raise DataError("data.library_pairs: the premise index holds no library premise (premises.library: true)")
    specs = [d.benchmark, *settings.eval.also] + ([d.search_pool] if d.search_pool else [])
    names = {t.name for spec in dict.fromkeys(specs) for t in load_theorems(spec)}
    return choose_library_premises(premises, d.library_pairs, exclude_names=names,
                                   held_out_families=held_out_families(d.benchmark, settings.eval.also,
                                                                       d.search_pool))


def pretrain(settings: Settings, pairs: Sequence[TacticPair], out_dir: Path,
             split: TheoremSplit | None = None, library: Sequence[TacticPair] = (), premises: Any = None
             ) -> StageResult:
    """Pre-train the tiny base on the training side of ``split`` (default: `base_split` of ``pairs``), with the
    validation side as its eval set: validation theorems are never seen by the base (issue 21). ``library``:
    (type -> name) pairs of the library, added to the training side only; ``premises``: the premise lines of a
    pair's prompt (`burnqed_core.loop.corpus.training_premises`), when the model's prompt shows them."""
    from burnqed_core.data.pairs.prepare import prepare_pairs
    from burnqed_core.training.tiny_model import pretrain_base

    d = settings.data
    split = split or base_split(settings, pairs)
    prepared = prepare_pairs(split.trainable(pairs), d.val_fraction, d.seed, d.max_tokens, val_theorems=split.val,
                             alpha_copies=d.alpha_copies)
    train, val = frame_pairs(prepared.train) + list(library), frame_pairs(prepared.val)
    m = pretrain_base(train, settings.training, out_dir, val=val, progress=True,
                      premises=premises.of if premises is not None else None)
    summary = train_summary("pre-trained tiny base", m) + (f"; on {prepared.stats.train_pairs} pairs of "
                                                           f"{prepared.stats.train_theorems} theorems, "
                                                           f"{prepared.stats.val_theorems} held out")
    if library:
        summary += f", and {len(library)} (type -> name) pairs of the library"
    if split.withheld:
        summary += f", {len(split.withheld)} withheld (search-only exercises)"
    return StageResult(stage="base_model", path=str(out_dir), summary=summary,
                       metrics=train_metrics(m) | {"train_theorems": prepared.stats.train_theorems,
                                                   "val_theorems": prepared.stats.val_theorems,
                                                   "library_pairs": len(library)})


def base_model(settings: Settings, pairs_dir: Path, out_dir: Path, premises_dir: Path | None = None) -> StageResult:
    """Draw the theorem split of the base pairs once (``split.json`` in ``out_dir``, `base_split`); then, with
    ``training.base_model: tiny``, pre-train the tiny model on its training side into ``out_dir``; else name the
    profile's Hugging Face model (a hub name or a local dir, loaded by the training stage) in ``base_model.json``."""
    from burnqed_core.data.pairs.prepare import write_split

    name = settings.training.base_model
    pairs = base_pairs(pairs_dir)
    split = base_split(settings, pairs)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_split(split, out_dir / SPLIT_FILE)
    if name == "tiny":
        from burnqed_core.loop.corpus import training_premises
        from burnqed_core.premises.pretraining import type_name_pairs

        chosen = library_premises(settings, premises_dir)
        d = settings.data
        shown = training_premises(settings.training.prompt_premises, premises_dir, corpus=d.corpus,
                                  benchmark=d.benchmark, also=settings.eval.also, search_pool=d.search_pool,
                                  library=chosen)
        return pretrain(settings, pairs, out_dir, split, type_name_pairs(chosen), shown)
    atomic_write_text(out_dir / BASE_MODEL_FILE, json.dumps({"model": name}))
    return StageResult(stage="base_model", path=str(out_dir), summary=f"base model {name} (trained elsewhere)",
                       metrics={"model": name, "train_theorems": len(split.train), "val_theorems": len(split.val)})


def _run(ctx: StageContext[Settings]) -> StageResult:
    return base_model(ctx.settings, ctx.input("base_tactic_pairs"), ctx.out, ctx.input("premise_index"))


BASE_MODEL = StageSpec(
    name="base_model", partitioned=False, settings=Settings, run=_run,
    inputs=(Input("base_tactic_pairs"), Input("premise_index")),
    doc="The tiny model pre-trained here on the training side of the base pairs' theorem split (drawn here "
        "once, ``split.json``: its validation theorems are never trained on, and every iteration's pairs reuse "
        "it), or the profile's Hugging Face model (``training.base_model``) in prod.",
)
