"""The loop's train/validation split is drawn once, before the tiny base is pre-trained: pre-training sees only
the training side, and every iteration's pairs reuse that split (issue 21). Real tiny pre-training, no Lean:
the base pairs are built directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.pairs import prepare_pairs
from burnqed_core.errors import DataError
from burnqed_core.loop import stages
from burnqed_core.record_io import read_records, write_parquet
from burnqed_core.records import TacticPair
from burnqed_core.training.run_record import fingerprint_pairs
from tests.core.test_data_pairs import make_pairs

TINY = {"vocab_size": 320, "hidden_size": 32, "num_layers": 1, "num_heads": 1, "num_kv_heads": 1,
        "intermediate_size": 64, "max_position_embeddings": 256, "pretrain_steps": 4, "pretrain_lr": 1e-3,
        "pretrain_batch_size": 4}


def test_validation_theorems_are_never_seen_in_pretraining(tmp_path: Path) -> None:
    pairs = make_pairs(40, seed=1)
    traced = tmp_path / "traced"
    traced.mkdir()
    write_parquet(pairs, traced / stages.PAIRS_FILE, TacticPair)
    profile = load_profile("tiny", environ={}, overrides={
        "paths.work_dir": str(tmp_path / "work"), "training.tiny_model": TINY, "training.eval_every": 2,
        "training.save_every": 2, "training.warmup_steps": 1, "data.val_fraction": 0.2, "data.seed": 5})
    model = tmp_path / "model"
    res = stages.base_model(profile, traced, model)

    split = stages.read_base_split(model)
    names = {p.theorem for p in pairs}
    assert set(split.train) | set(split.val) == names and not set(split.train) & set(split.val)
    assert len(split.val) >= 2 and (split.seed, split.val_fraction) == (5, 0.2)
    assert res.metrics["val_theorems"] == len(split.val) and res.metrics["train_theorems"] == len(split.train)

    # what pre-training trained on: run.json fingerprints exactly the training side's pairs, and its eval set is
    # the validation side
    run = json.loads((model / "run.json").read_text(encoding="utf-8"))
    prepared = prepare_pairs(pairs, 0.2, 5, profile.data.max_tokens, val_theorems=split.val)
    train_side = stages.frame_pairs(prepared.train)
    assert {p.theorem for p in train_side}.isdisjoint(split.val)
    assert run["data"]["pairs"] == fingerprint_pairs(train_side)
    assert run["data"]["pairs"] != fingerprint_pairs(pairs)  # not every traced pair, as before the fix
    assert run["data"]["val"] == fingerprint_pairs(stages.frame_pairs(prepared.val))
    metrics = json.loads((model / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["train_examples"] == len(train_side) and metrics["val_examples"] == prepared.val.height > 0

    # the iteration's SFT pairs reuse the split: validation = the theorems pre-training never saw
    out = tmp_path / "iter_0_pairs"
    stages.tactic_pairs(profile, 0, pairs, [], out, tokenizer_dir=model, split=split)
    val = read_records(out / "val.parquet", TacticPair)
    train = read_records(out / "train.parquet", TacticPair)
    assert {p.theorem for p in val} == set(split.val)
    assert {p.theorem for p in train}.isdisjoint(split.val)
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["split"]["val_theorems"] == len(split.val)


def test_a_base_without_its_split_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="re-materialise base_model"):
        stages.read_base_split(tmp_path)
