"""The EBM pipeline with its encoder on each device (`tests.fixtures_devices`): encode toy trajectories with a
float32 `LocalPolicy` on the device, train the head on those embeddings (`train_ebm`, through
`run.train_from_dirs`), score with the saved head over the device's encoder.

`train_ebm` itself has no device setting: the head is small and trains on CPU from the cached embeddings; what
runs on the GPU is the encoder that makes the embeddings and, in the search, scores new states. So the ``cuda``
case (marked ``gpu``) checks that the device's
embeddings are the CPU's (to float rounding), that a head trained on them learns and trains as on the CPU's, that
the saved head gives the same energies on the device as on CPU, and that the scorer over the device's encoder
scores as over the CPU's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
import torch

from burnqed_core.config import EBMConfig
from burnqed_core.ebm.data import build_data
from burnqed_core.ebm.embeddings import EmbeddingCache, encoder_text
from burnqed_core.ebm.run import encode_trajectories, read_trajectory_dirs, train_from_dirs
from burnqed_core.ebm.scorer import load_energy_scorer
from burnqed_core.ebm.train import load_head, read_report
from burnqed_core.policy.local import LocalPolicy
from burnqed_core.record_io import write_parquet
from burnqed_core.records import TrajectoryRecord
from tests.core.ebm_toy import toy_records
from tests.fixtures_devices import DEVICES

CFG = EBMConfig(hidden_dims=[32, 16], dropout=0.0, steps=60, batch_size=16, num_negatives=4, lr=3e-3, eval_every=20,
                save_every=20, val_fraction=0.25, seed=0, encode_batch_size=32)
STATES = ["⊢ good 1 1", "⊢ good 1 2", "⊢ bad 1 1 0", "⊢ bad 1 2 1", "⊢ bad 4 3 2"]
GOAL = "n1 : Nat\n⊢ goal 1"


def _policy(model_dir: Path, device: str) -> LocalPolicy:
    return LocalPolicy(model_dir, device=device, dtype="float32", batch_size=32)


def _encode_and_train(model_dir: Path, device: str, traj: Path, root: Path) -> tuple[Path, Path]:
    """(embedding cache dir, EBM dir) of the toy trajectories encoded on ``device``."""
    report = asyncio.run(encode_trajectories(_policy(model_dir, device), [traj], root / "emb", CFG))
    assert report.encoded == report.states > 0
    train_from_dirs(root / "emb", [traj], CFG, root / "ebm")
    return root / "emb", root / "ebm"


@pytest.fixture(scope="module")
def traj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ebm_traj")
    return write_parquet(toy_records(n_theorems=16), root / "traj.parquet", TrajectoryRecord)


@pytest.fixture(scope="module")
def on_cpu(tiny_model_dir: Path, traj: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _encode_and_train(tiny_model_dir, "cpu", traj, tmp_path_factory.mktemp("ebm_cpu"))


@pytest.mark.parametrize("device", DEVICES)
def test_ebm_on_device_embeddings_learns_and_scores_as_on_cpu(device: str, tiny_model_dir: Path, traj: Path,
                                                              on_cpu: tuple[Path, Path], tmp_path: Path) -> None:
    emb, ebm = _encode_and_train(tiny_model_dir, device, traj, tmp_path)
    cpu_emb, cpu_ebm = on_cpu
    data = build_data(read_trajectory_dirs([traj]))

    # the device's embeddings are the CPU's
    z = EmbeddingCache.load(emb).matrix(data.keys)
    z_cpu = EmbeddingCache.load(cpu_emb).matrix(data.keys)
    assert z.shape == z_cpu.shape == (len(data.keys), 64)
    assert np.abs(z - z_cpu).max() < 1e-4, float(np.abs(z - z_cpu).max())

    # the head trained on them learns, and as on the CPU's
    rep, ref = read_report(ebm), read_report(cpu_ebm)
    assert rep.steps == CFG.steps and rep.train_positives > 0 and rep.val_positives > 0
    losses = [p.loss for p in rep.loss_curve]
    assert all(np.isfinite(losses))
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.1, losses
    assert rep.train is not None and rep.train.rank1.rank1 is not None
    # embeddings 1e-5 apart move this curve by ~3e-3 relative (the standardiser divides by stds down to ~5e-3):
    # the tolerance allows float rounding, not other training
    assert losses == pytest.approx([p.loss for p in ref.loss_curve], rel=2e-2, abs=1e-3)

    # the saved head gives the same energies on the device as on CPU
    head, record = load_head(ebm)
    assert record.pooling == "last_l2" and record.head.dim == 64
    zt = torch.from_numpy(z)
    goals = zt[torch.tensor([p.goal for p in data.positives])]
    states = zt[torch.tensor([p.state for p in data.positives])]
    with torch.no_grad():
        e_cpu = head(states, goals)
        e_dev = head.to(device)(states.to(device), goals.to(device)).cpu()
    assert e_dev.shape == (len(data.positives),) and torch.isfinite(e_dev).all()
    assert torch.allclose(e_dev, e_cpu, atol=1e-5, rtol=1e-5), float((e_dev - e_cpu).abs().max())

    # the scorer over the device's encoder scores as over the CPU's, and as the head on the policy's own vectors
    # (an energy moves ~70x as much as the embeddings do: 5e-3 allows embeddings ~7e-5 apart)
    got = load_energy_scorer(ebm, _policy(tiny_model_dir, device)).score_sync(STATES, GOAL)
    want = load_energy_scorer(ebm, _policy(tiny_model_dir, "cpu")).score_sync(STATES, GOAL)
    assert np.allclose(got, want, atol=5e-3), (got, want)
    head_cpu, _ = load_head(ebm)
    zz = torch.tensor(_policy(tiny_model_dir, "cpu").encode_sync([encoder_text(s) for s in [*STATES, GOAL]]))
    with torch.no_grad():
        direct = head_cpu(zz[:-1], zz[-1:]).tolist()
    assert np.allclose(got, direct, atol=5e-3)
    assert max(got) - min(got) > 0.1  # distinct states, distinct energies: the comparisons meant something
