"""`burnqed train base / sft / merge` end to end on a tiny profile, and pre-training determinism."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.config import load_profile
from burnqed_core.errors import DataError
from burnqed_core.record_io import write_parquet
from burnqed_core.training.merge import MergeReport
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.tiny_model import pretrain_base
from tests.fixtures_models import TRAIN_NAMES, VAL_NAMES, make_pairs

PROFILE = """
name: cli-test
paths: {{home: {home}}}
training:
  tiny_model: {{vocab_size: 512, hidden_size: 64, num_layers: 2, num_heads: 2, num_kv_heads: 1,
               intermediate_size: 128, pretrain_steps: 50, pretrain_batch_size: 8, pretrain_lr: 3.0e-3}}
  lr: 1.0e-2
  max_steps: 50
  warmup_steps: 1
  batch_size: 8
  eval_every: 2
  save_every: 2
  max_seq_len: 256
  device: cpu
  shard_size: 300KB
  lora: {{r: 4, alpha: 8, dropout: 0.0}}
"""


@pytest.fixture()
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    # the profile's home, whatever the environment says (`BURNQED_HOME` would take the models elsewhere)
    monkeypatch.delenv("BURNQED_HOME", raising=False)
    monkeypatch.delenv("BURNQED__PATHS__HOME", raising=False)
    pairs = tmp_path / "pairs"
    write_parquet(make_pairs(TRAIN_NAMES), pairs / "train.parquet")
    write_parquet(make_pairs(VAL_NAMES, "val"), pairs / "val.parquet")
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.format(home=tmp_path / "home"))
    return pairs, profile


def test_help_lists_the_three_commands() -> None:
    result = CliRunner().invoke(app, ["train", "--help"])
    assert result.exit_code == 0
    for cmd in ("base", "sft", "merge"):
        assert cmd in result.output
    result = CliRunner().invoke(app, ["train", "sft", "--help"])
    assert result.exit_code == 0 and "--qlora" in result.output and "--from" in result.output


def test_sft_without_a_base_model_is_a_clear_error(setup: tuple[Path, Path], tmp_path: Path) -> None:
    pairs, profile = setup
    result = CliRunner().invoke(app, ["train", "sft", "--pairs", str(pairs), "--out", str(tmp_path / "o"),
                                      "--profile", str(profile)])
    assert isinstance(result.exception, DataError) and "burnqed train base" in str(result.exception)


@pytest.mark.slow
def test_base_then_sft_then_merge(setup: tuple[Path, Path], tmp_path: Path) -> None:
    pairs, profile = setup
    runner = CliRunner()
    r = runner.invoke(app, ["train", "base", "--pairs", str(pairs), "--profile", str(profile), "--max-steps", "6"])
    assert r.exit_code == 0, r.output
    base = tmp_path / "home" / "models" / "tiny-base"
    m = TrainingMetrics.load(base)
    assert m.kind == "pretrain" and m.steps == 6 and m.best_eval_loss < m.initial_eval_loss
    AutoModelForCausalLM.from_pretrained(base)
    assert AutoTokenizer.from_pretrained(base).padding_side == "left"

    # deterministic by seed: the same data and settings give the same weights
    cfg = load_profile(profile).training
    cfg = cfg.model_copy(update={"tiny_model": cfg.tiny_model.model_copy(update={"pretrain_steps": 6})})
    from burnqed_core.training.sft import load_pairs_dir

    train, val, prints = load_pairs_dir(pairs)
    pretrain_base(train, cfg, tmp_path / "again", val=val, data_fingerprints=prints, progress=False)
    a, b = load_file(base / "model.safetensors"), load_file(tmp_path / "again" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    adapter = tmp_path / "adapter"
    r = runner.invoke(app, ["train", "sft", "--pairs", str(pairs), "--out", str(adapter), "--profile", str(profile),
                            "--max-steps", "4"])
    assert r.exit_code == 0, r.output
    assert "lora: 4/4 steps" in r.output and (adapter / "adapter_config.json").exists()

    merged = tmp_path / "merged"
    r = runner.invoke(app, ["train", "merge", "--adapter", str(adapter), "--out", str(merged), "--profile",
                            str(profile)])
    assert r.exit_code == 0, r.output
    report = MergeReport.model_validate_json((merged / "merge.json").read_text())
    assert report.max_abs_logit_diff < 1e-4 and report.num_shards >= 2  # shard_size 300KB in the profile
    AutoModelForCausalLM.from_pretrained(merged)
