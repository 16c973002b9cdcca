"""A failed blocking check stops the run: the ``iteration`` job of a profile whose benchmark holds a corpus
theorem materialises tactic_pairs[0], its check finds the benchmark theorem in the training pairs, and no
later stage of the iteration runs. Real base assets (a LeanDojo-format corpus, the tiny base model pre-trained
here), a real on-disk Dagster instance; no Lean."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.record_io import write_jsonl
from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.partitions import add_iteration
from tests.pipeline.helpers import materialize, resources
from tests.pipeline.profiles import leandojo_corpus, write_profile

pytestmark = pytest.mark.slow


def test_a_failed_blocking_check_keeps_the_next_stages_from_running(tmp_path: Path) -> None:
    leaked = load_theorems("bundled:corpus")[3]  # traced into the base pairs under this very name
    bench = tmp_path / "bench" / "benchmark.jsonl"
    write_jsonl([*load_theorems("bundled:benchmark")[:4], leaked], bench)
    prof = write_profile(tmp_path / "profile.yaml", {"paths.work_dir": str(tmp_path / "work"),
                                                     "data.corpus": str(leandojo_corpus(tmp_path / "dojo")),
                                                     "data.benchmark": str(bench)})
    res = resources(prof)
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as inst:
        materialize(inst, res, ["base_tactic_pairs", "premise_index", "base_model"])
        add_iteration(inst, 0)
        job = defs().resolve_job_def("iteration")
        result = job.execute_in_process(partition_key="0", instance=inst, resources=res, raise_on_error=False)

        assert not result.success
        evals = [e.event_specific_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
        assert [(e.check_name, e.passed) for e in evals] == [("tactic_pairs_clean", False)]
        verdict = evals[0].metadata["verdict"].value
        assert f"{leaked.name} (same name)" in verdict and "benchmark_theorems_in_pairs = 1" in verdict
        done = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"}
        assert done == {"tactic_pairs"}, done
        assert {m.asset_key.to_user_string() for m in result.asset_materializations_for_node("tactic_pairs")} == \
            {"tactic_pairs"}
        assert inst.get_materialized_partitions(dg.AssetKey("tactic_pairs")) == {"0"}  # recorded, as Dagster does
        for asset in ["lora_adapter", "merged_model", "trajectories", "eval_report"]:
            assert not inst.get_materialized_partitions(dg.AssetKey(asset)), asset
        assert not BaseLayout(root=tmp_path / "work").iteration(0).stage("lora_adapter").exists()
