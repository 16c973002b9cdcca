"""EBM-guided search on the embedded Lean with a tiny model, through the loop's
stage functions: search (iteration 0) -> embeddings -> EBM -> search with the
EBM (iteration 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.ebm.train import has_ebm
from burnqed_core.loop.stages import ebm as ebm_stage
from burnqed_core.loop.stages import embeddings as embeddings_stage
from burnqed_core.loop.stages import trajectories as trajectories_stage
from burnqed_core.record_io import write_parquet
from burnqed_core.records import Theorem, TrajectoryRecord
from burnqed_core.search.trajectories import read_run_record
from burnqed_core.trajectory_io import read_trajectories
from tests.core.ebm_toy import toy_records

pytestmark = pytest.mark.lean

THEOREMS = [
    Theorem(name="add_zero", statement="(n : Nat) : n + 0 = n"),
    Theorem(name="two_two", statement=": 2 + 2 = 4"),
    Theorem(name="imp_self", statement="(p : Prop) : p → p"),
    Theorem(name="false_succ", statement="(n : Nat) : n + 1 = n"),
]


async def test_ebm_guided_search_on_lean(lean_pool: object, search_model: Path, tmp_path: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy

    model = search_model
    profile = load_profile("tiny", overrides={
        "search.max_nodes": 12, "search.max_depth": 4, "search.collect_candidates": 4, "search.concurrency": 4,
        "search.timeout_s": 120, "ebm.steps": 40, "ebm.hidden_dims": [32, 16], "ebm.batch_size": 16,
        "ebm.eval_every": 20, "ebm.save_every": 20, "policy.max_new_tokens": 12,
        "search.automation.enabled": False, "search.temperature": 0.8, "search.ebm_temperature": 1.0,
        "search.noisy_pass": True})
    policy = LocalPolicy(model, batch_size=64, max_new_tokens=12, seed=0)
    it0 = tmp_path / "iter_0"
    res0 = await trajectories_stage.trajectories(profile, 0, policy, lean_pool, THEOREMS, it0 / "trajectories", model)  # type: ignore[arg-type]
    assert "EBM" not in res0.summary
    dirs = trajectories_stage.trajectory_outputs(it0 / "trajectories")
    assert [d.name for d in dirs] == ["noisy.traj", "search.traj"]
    # real search nodes plus toy ones (so that the split always has held-out positives)
    toy = write_parquet(toy_records(n_theorems=9), tmp_path / "toy.parquet", TrajectoryRecord)
    emb = await embeddings_stage.embeddings(profile, 1, policy, [*dirs, toy], tmp_path / "iter_1" / "embeddings",
                                  progress=False)
    assert emb.metrics["encoded"] > 0
    ebm = ebm_stage.ebm(profile, 1, tmp_path / "iter_1" / "embeddings", [*dirs, toy], tmp_path / "iter_1" / "ebm",
                     progress=False)
    assert ebm.metrics["trained"] and has_ebm(tmp_path / "iter_1" / "ebm"), ebm.summary

    res1 = await trajectories_stage.trajectories(profile, 1, policy, lean_pool, THEOREMS,
                                                 tmp_path / "iter_1" / "trajectories",  # type: ignore[arg-type]
                                     model, ebm_dir=tmp_path / "iter_1" / "ebm")
    assert "EBM" in res1.summary and "T=1.0" in res1.summary  # the EBM's sampling temperature
    out = tmp_path / "iter_1" / "trajectories" / "search.traj"
    record = read_run_record(out)
    assert record is not None and record.ebm is not None and record.sampling.temperature == 1.0
    recs = read_trajectories(out)
    assert recs and all(r.energy is not None for r in recs if r.state)
    proved = {r.theorem for r in recs if r.proved}
    assert {"add_zero", "two_two"} <= proved, res1.summary
    assert "false_succ" not in proved
