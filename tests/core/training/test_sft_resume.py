"""Kill-and-resume: a real `burnqed train sft` process is SIGKILLed after a checkpoint, then resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from burnqed_core.config import load_profile
from burnqed_core.record_io import write_parquet
from burnqed_core.training.checkpoints import list_checkpoints
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.sft import load_pairs_dir, train_sft
from tests.fixtures_models import TRAIN_NAMES, VAL_NAMES, make_pairs

PROFILE = """
name: resume-test
training:
  lr: 1.0e-2
  max_steps: 14
  warmup_steps: 2
  batch_size: 8
  eval_every: 4
  save_every: 2
  max_seq_len: 256
  device: cpu
  lora: {r: 8, alpha: 16, dropout: 0.1}
"""


@pytest.mark.slow
def test_sigkill_then_resume_matches_uninterrupted_run(tmp_path: Path, tiny_model_dir: Path) -> None:
    pairs = tmp_path / "pairs"
    write_parquet(make_pairs(TRAIN_NAMES), pairs / "train.parquet")
    write_parquet(make_pairs(VAL_NAMES, "val"), pairs / "val.parquet")
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    cfg = load_profile(profile).training
    killed_dir = tmp_path / "killed"

    cmd = [sys.executable, "-c", "from burnqed_core.cli import main; main()", "train", "sft", "--pairs", str(pairs),
           "--out", str(killed_dir), "--base", str(tiny_model_dir), "--profile", str(profile)]
    log_path = tmp_path / "train.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ | {"BURNQED_LOG": "INFO"})
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if list_checkpoints(killed_dir):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL, log_path.read_text(errors="replace")[-2000:]
    done = list_checkpoints(killed_dir)
    killed_at = int(done[-1].name.split("-")[1])
    assert 2 <= killed_at < cfg.max_steps
    assert not (killed_dir / "metrics.json").exists()

    train, val, prints = load_pairs_dir(pairs)
    resumed = train_sft(train, val, cfg, killed_dir, str(tiny_model_dir), data_fingerprints=prints, progress=False)
    straight = train_sft(train, val, cfg, tmp_path / "straight", str(tiny_model_dir), data_fingerprints=prints,
                         progress=False)

    assert resumed.resumed_from_step == killed_at and straight.resumed_from_step is None
    assert resumed.steps == straight.steps == cfg.max_steps
    assert [p.step for p in resumed.loss_curve] == list(range(1, cfg.max_steps + 1))
    assert TrainingMetrics.load(killed_dir).steps == cfg.max_steps
    # same sample order, RNG (LoRA dropout) and optimiser state: the same run
    for a, b in zip(resumed.loss_curve, straight.loss_curve, strict=True):
        assert a.loss == pytest.approx(b.loss, rel=1e-5, abs=1e-6), a.step
    assert resumed.best_step == straight.best_step
    wa = load_file(killed_dir / "adapter_model.safetensors")
    wb = load_file(tmp_path / "straight" / "adapter_model.safetensors")
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=1e-5, atol=1e-6)
