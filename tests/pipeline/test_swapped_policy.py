"""A test swaps the policy alone (issue 66): iteration 0 of the tiny profile materialised through Dagster with
real Lean (the session's embedded worker, through the run's `LeanPoolResource`) and real tiny models, the
``policy`` resource bound to a `PolicyResource` that serves a fixed list of tactics. The search and the eval ask
the run's policy resource, not the profile's backend: every tactic the policy proposed in the trajectories is
one of the list, and both stages record that they were served the fixed policy."""

import asyncio
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from pydantic import Field

from burnqed_core.config import Profile
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.policy.base import Policy
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.trajectory_io import read_trajectories
from burnqed_pipeline.defs.partitions import add_iteration
from burnqed_pipeline.resources import PolicyResource
from tests.pipeline.helpers import lend, materialize, metadata, resources
from tests.pipeline.profiles import slice_set, write_profile

pytestmark = [pytest.mark.lean, pytest.mark.slow]

#: tactics no tiny model writes and no automation candidate is: proposed by this policy only
FIXED = ["first | omega | simp", "first | decide | rfl", "constructor <;> simp_all"]


class FixedPolicyResource(PolicyResource):
    """The run's policy: `FixedTacticsPolicy` on ``tactics``, whatever the iteration's model."""

    tactics: list[str] = Field(default_factory=lambda: list(FIXED))

    async def policy(self, profile: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        pol = FixedTacticsPolicy(self.tactics)
        return pol, {"backend": "fixed (test)", "name": pol.name, "model_path": str(model_path)}


async def test_an_iteration_with_a_swapped_policy_and_real_lean(tmp_path: Path, lean_pool: object) -> None:
    corpus = slice_set("bundled:corpus", 1, tmp_path / "corpus" / "corpus.jsonl")
    bench = slice_set("bundled:benchmark", 1, tmp_path / "bench" / "benchmark.jsonl")
    prof = write_profile(tmp_path / "profile.yaml", {
        "paths.work_dir": str(tmp_path / "work"), "data.corpus": str(corpus), "data.benchmark": str(bench),
        "data.search_theorems": 4, "pipeline.shard_size": 50, "pipeline.eval_shard_size": 50})
    res = resources(prof, runtime=lend(lean_pool))  # the session's loop and Lean
    res["policy"] = FixedPolicyResource(event_loop=res["event_loop"])  # the policy alone swapped

    (tmp_path / "dagster").mkdir()

    def run() -> dict[str, dict[str, Any]]:
        with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as inst:
            materialize(inst, res, ["base_tactic_pairs", "base_model", "automation_baselines", "premise_index"])
            add_iteration(inst, 0)
            stages = ["tactic_pairs", "lora_adapter", "merged_model", "trajectories", "eval_report"]
            return metadata(materialize(inst, res, stages, "0"))

    md = await asyncio.to_thread(run)
    for stage in ("trajectories", "eval_report"):
        served = md[stage]["served_model"]
        assert served["backend"] == "fixed (test)" and served["name"] == "fixed:" + ",".join(FIXED), stage
        assert served["model_path"].endswith("merged_model")  # asked for the iteration's model, served the list
    nodes = read_trajectories(BaseLayout(root=tmp_path / "work").iteration(0).stage("trajectories") / "search.traj")
    proposed = {r.tactic for r in nodes if r.source in ("policy", "both")}
    assert proposed and proposed <= set(FIXED), proposed - set(FIXED)
