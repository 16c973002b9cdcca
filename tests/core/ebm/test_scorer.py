"""The scorer: one encode call per batch, save/load in a new process, refusals;
the `ebm` stage at iteration 0 trains nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from burnqed_core.config import EBMConfig, load_profile
from burnqed_core.ebm.embeddings import EmbeddingMismatchError, encoder_text
from burnqed_core.ebm.scorer import load_energy_scorer
from burnqed_core.ebm.train import has_ebm, load_head
from burnqed_core.loop.stages import ebm as ebm_stage
from burnqed_core.loop.stages import embeddings as embeddings_stage
from burnqed_core.policy.local import LocalPolicy
from burnqed_core.record_io import write_parquet
from burnqed_core.records import TrajectoryRecord
from burnqed_core.search.scoring import EnergyScorer, score_states
from tests.core.ebm_toy import toy_records


class CountingPolicy:
    """A real LocalPolicy that counts its encode calls."""

    def __init__(self, inner: LocalPolicy) -> None:
        self.inner = inner
        self.calls: list[int] = []
        self.pooling = inner.pooling
        self.model_path = inner.model_path
        self.hidden_size = inner.hidden_size
        self.name = inner.name

    async def encode(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return await self.inner.encode(texts)


@pytest.fixture(scope="module")
def trained_ebm(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Toy trajectories as a real Parquet file, encoded by the tiny model, and an EBM trained on them
    through the loop's stage functions."""
    root = tmp_path_factory.mktemp("ebm_stage")
    traj = write_parquet(toy_records(n_theorems=12), root / "traj.parquet", TrajectoryRecord)
    profile = load_profile("tiny", overrides={"ebm.steps": 30, "ebm.hidden_dims": [32, 16], "ebm.batch_size": 16,
                                              "ebm.eval_every": 10, "ebm.save_every": 10})
    policy = LocalPolicy(tiny_model_dir, batch_size=16)
    res = asyncio.run(embeddings_stage.embeddings(profile, 1, policy, [traj], root / "emb", progress=False))
    assert res.metrics["encoded"] == res.metrics["states"] > 0 and res.metrics["pooling"] == "last_l2"
    assert res.metrics["separation"]["positives"] > 0
    again = asyncio.run(embeddings_stage.embeddings(profile, 1, policy, [traj], root / "emb", progress=False))
    assert again.metrics["encoded"] == 0 and again.metrics["cached"] == res.metrics["states"]
    res = ebm_stage.ebm(profile, 1, root / "emb", [traj], root / "ebm", progress=False)
    assert res.metrics["trained"] and has_ebm(root / "ebm"), res.summary
    assert "rank-1" in res.summary
    return root / "ebm", traj


def test_iteration_zero_has_no_ebm(tmp_path: Path, tiny_model_dir: Path) -> None:
    profile = load_profile("tiny")
    res = ebm_stage.ebm(profile, 0, tmp_path / "emb", [], tmp_path / "ebm")
    assert not res.metrics["trained"] and "no EBM" in res.summary and not has_ebm(tmp_path / "ebm")
    emb = asyncio.run(embeddings_stage.embeddings(profile, 0, LocalPolicy(tiny_model_dir), [], tmp_path / "emb"))
    assert emb.metrics["states"] == 0 and not (tmp_path / "emb").exists()


def test_scorer_encodes_a_batch_in_one_call(trained_ebm: tuple[Path, Path], tiny_model_dir: Path) -> None:
    ebm_dir, _ = trained_ebm
    policy = CountingPolicy(LocalPolicy(tiny_model_dir, batch_size=64))
    scorer = load_energy_scorer(ebm_dir, policy)
    assert isinstance(scorer, EnergyScorer)
    states = [f"⊢ good 1 {i}" for i in range(5)]
    goal = "n1 : Nat\n⊢ goal 1"
    energies = asyncio.run(score_states(scorer, states, goal))
    assert len(energies) == 5 and policy.calls == [6]  # states + the goal, one call
    asyncio.run(score_states(scorer, states[:2], goal))
    assert policy.calls == [6, 2]  # the goal is cached
    # equal to the head applied to the policy's own vectors
    head, _ = load_head(ebm_dir)
    z = torch.tensor(policy.inner.encode_sync([encoder_text(s) for s in [*states, goal]]))
    with torch.no_grad():
        direct = head(z[:-1], z[-1:]).tolist()
    assert np.allclose(energies, direct, atol=1e-5)


SCORE_SCRIPT = """
import asyncio, json, sys
from burnqed_core.ebm.scorer import load_energy_scorer
from burnqed_core.policy.local import LocalPolicy
scorer = load_energy_scorer(sys.argv[1], LocalPolicy(sys.argv[2]))
print(json.dumps(asyncio.run(scorer.score(json.loads(sys.argv[3]), sys.argv[4]))))
"""


def test_scorer_round_trips_into_a_new_process(trained_ebm: tuple[Path, Path], tiny_model_dir: Path) -> None:
    ebm_dir, _ = trained_ebm
    states = ["⊢ good 3 1", "⊢ bad 3 1 0", "⊢ bad 3 2 1"]
    goal = "n3 : Nat\n⊢ goal 3"
    here = asyncio.run(load_energy_scorer(ebm_dir, LocalPolicy(tiny_model_dir)).score(states, goal))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3]), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", SCORE_SCRIPT, str(ebm_dir), str(tiny_model_dir), json.dumps(states),
                          goal], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    there = json.loads(out.stdout.strip().splitlines()[-1])
    assert np.allclose(here, there, atol=1e-5)


def test_scorer_refuses_another_pooling_or_model(trained_ebm: tuple[Path, Path], tiny_model_dir: Path,
                                                 tmp_path: Path) -> None:
    import shutil

    ebm_dir, _ = trained_ebm
    with pytest.raises(EmbeddingMismatchError, match="refusing to mix poolings"):
        load_energy_scorer(ebm_dir, LocalPolicy(tiny_model_dir, pooling="mean"))
    other = tmp_path / "other"
    shutil.copytree(tiny_model_dir, other)
    w = other / "model.safetensors"
    data = bytearray(w.read_bytes())
    data[-1] ^= 1
    w.write_bytes(bytes(data))
    with pytest.raises(EmbeddingMismatchError, match="another model"):
        load_energy_scorer(ebm_dir, LocalPolicy(other))


def test_cli_encode_train_metrics(trained_ebm: tuple[Path, Path], tiny_model_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from burnqed_core.cli import app

    _, traj = trained_ebm
    r = CliRunner()
    res = r.invoke(app, ["ebm", "encode", "-t", str(traj), "-o", str(tmp_path / "emb"), "-m", str(tiny_model_dir),
                         "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "encoded" in res.output and "last_l2" in res.output
    res = r.invoke(app, ["ebm", "train", "-t", str(traj), "-e", str(tmp_path / "emb"), "-o", str(tmp_path / "ebm"),
                         "--steps", "20", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert has_ebm(tmp_path / "ebm")
    res = r.invoke(app, ["ebm", "metrics", "--ebm", str(tmp_path / "ebm"), "-t", str(traj), "-e",
                         str(tmp_path / "emb"), "--json"])
    assert res.exit_code == 0, res.output
    m = json.loads(res.output)
    assert m["rank1"]["n"] > 0 and m["rank1"]["chance"] is not None and "separation" in m
    res = r.invoke(app, ["ebm", "train", "-t", str(tmp_path / "missing"), "-e", str(tmp_path / "emb"), "-o",
                         str(tmp_path / "x")])
    assert res.exit_code != 0 and "no such trajectory output" in str(res.exception)


def test_default_config_builds_the_seed_architecture() -> None:
    from burnqed_core.ebm.model import EnergyHead, count_params
    from burnqed_core.ebm.train import head_config

    prod = load_profile("prod").ebm
    with torch.device("meta"):
        h = EnergyHead(head_config(prod, 4096))
    assert [lin.weight.shape[1] for lin in h.linears] == [12288, 2048, 1024, 512]
    assert 25e6 < count_params(h) < 30e6  # the prod head: ~25M parameters
    assert EBMConfig().first_layer_scale == 0.1


def test_search_ebm_flag_loads_the_scorer(trained_ebm: tuple[Path, Path], tiny_model_dir: Path,
                                          tmp_path: Path) -> None:
    """What `burnqed search --ebm DIR` calls (search.job.load_scorer); the search itself is
    covered on Lean by test_ebm_search_lean."""
    from burnqed_core.ebm.scorer import EbmScorer
    from burnqed_core.search.job import EbmUnavailableError, load_scorer

    ebm_dir, _ = trained_ebm
    assert isinstance(load_scorer(ebm_dir, LocalPolicy(tiny_model_dir)), EbmScorer)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EbmUnavailableError, match="no trained EBM"):
        load_scorer(tmp_path / "empty", LocalPolicy(tiny_model_dir))


def test_no_proof_path_means_no_ebm(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Trajectories with no proved theorem: encoded, but no EBM is trained (the search runs without one)."""
    unproved = [r for r in toy_records(n_theorems=6) if not r.proved]
    traj = write_parquet(unproved, tmp_path / "traj.parquet", TrajectoryRecord)
    profile = load_profile("tiny")
    asyncio.run(embeddings_stage.embeddings(profile, 1, LocalPolicy(tiny_model_dir), [traj], tmp_path / "emb",
                                  progress=False))
    res = ebm_stage.ebm(profile, 1, tmp_path / "emb", [traj], tmp_path / "ebm", progress=False)
    assert not res.metrics["trained"] and "no positive" in res.summary and not has_ebm(tmp_path / "ebm")
