"""Backfills of several iterations (in-process, real on-disk Dagster instance, real tiny model, no Lean): a
finished stage with unchanged inputs is not recomputed; iteration N waits for a run still materialising an
earlier iteration, and fails naming the partition when none is."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import dagster as dg
import pytest

from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.markers import run_stage
from burnqed_core.records import StageResult
from burnqed_pipeline import ordering
from burnqed_pipeline.defs.partitions import add_iteration
from tests.pipeline.helpers import failure_message, materialize, metadata, resources
from tests.pipeline.profiles import leandojo_corpus, slice_set, write_profile

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dg.DagsterInstance, BaseLayout]:
    tmp = tmp_path_factory.mktemp("pipeline_backfill")
    bench = slice_set("bundled:benchmark", 1, tmp / "bench" / "benchmark.jsonl")
    prof = write_profile(tmp / "profile.yaml", {"paths.work_dir": str(tmp / "work"),
                                                "data.corpus": str(leandojo_corpus(tmp / "dojo")),
                                                "data.benchmark": str(bench)})
    (tmp / "dagster").mkdir()
    inst = dg.DagsterInstance.local_temp(tempdir=str(tmp / "dagster"))
    materialize(inst, resources(prof), ["base_tactic_pairs", "premise_index", "base_model"])
    add_iteration(inst, 0)
    add_iteration(inst, 1)
    return prof, inst, BaseLayout(root=tmp / "work")


def _in_flight_run(inst: dg.DagsterInstance, asset: str, partition: str, status: dg.DagsterRunStatus,
                   tags: dict[str, str] | None = None) -> dg.DagsterRun:
    """The record of another run materialising ``asset[partition]`` (a backfill's run of an earlier partition)."""
    run = dg.DagsterRun(job_name="__ASSET_JOB", run_id=str(uuid.uuid4()), status=status,
                        tags={"dagster/partition": partition, **(tags or {})},
                        asset_selection=frozenset({dg.AssetKey(asset)}))
    return inst.add_run(run)


def test_a_finished_stage_with_unchanged_inputs_is_not_recomputed(setup: tuple[Path, dg.DagsterInstance,
                                                                                BaseLayout]) -> None:
    prof, inst, layout = setup
    first = metadata(materialize(inst, resources(prof), ["tactic_pairs"], "0"))["tactic_pairs"]
    out = layout.iteration(0).stage("tactic_pairs")
    stamps = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    again = metadata(materialize(inst, resources(prof), ["tactic_pairs"], "0"))["tactic_pairs"]
    assert first["skipped"] is False and again["skipped"] is True
    assert again["inputs_fingerprint"] == first["inputs_fingerprint"]
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamps  # not one file rewritten
    assert len(inst.fetch_materializations(dg.AssetKey("tactic_pairs"), limit=10).records) == 2


def test_without_a_run_for_the_earlier_iteration_the_stage_fails_naming_it(
        setup: tuple[Path, dg.DagsterInstance, BaseLayout]) -> None:
    prof, inst, _ = setup
    _in_flight_run(inst, "trajectories", "0", dg.DagsterRunStatus.FAILURE)  # failed for good: no retry to come
    result = materialize(inst, resources(prof), ["tactic_pairs"], "1", raise_on_error=False)
    assert not result.success
    msg = failure_message(result)
    assert "tactic_pairs[1] needs trajectories[0]" in msg and "materialise trajectories[0] first" in msg


def test_runs_that_will_still_materialise_a_partition(setup: tuple[Path, dg.DagsterInstance, BaseLayout]) -> None:
    _, inst, _ = setup
    queued = _in_flight_run(inst, "eval_report", "7", dg.DagsterRunStatus.NOT_STARTED)
    retry = _in_flight_run(inst, "eval_report", "7", dg.DagsterRunStatus.FAILURE, {"dagster/will_retry": "true"})
    _in_flight_run(inst, "eval_report", "7", dg.DagsterRunStatus.FAILURE,
                   {"dagster/will_retry": "true", "dagster/auto_retry_run_id": "x"})  # its retry is a run already
    _in_flight_run(inst, "eval_report", "7", dg.DagsterRunStatus.SUCCESS)
    _in_flight_run(inst, "lora_adapter", "7", dg.DagsterRunStatus.STARTED)  # another asset
    found = {r.run_id for r in ordering.runs_materialising(inst, "eval_report", "7")}
    assert found == {queued.run_id, retry.run_id}
    assert ordering.runs_materialising(inst, "eval_report", "7", exclude=queued.run_id)[0].run_id == retry.run_id


def test_a_later_iteration_waits_for_the_run_of_an_earlier_one(
        setup: tuple[Path, dg.DagsterInstance, BaseLayout], monkeypatch: pytest.MonkeyPatch) -> None:
    prof, inst, layout = setup
    monkeypatch.setattr(ordering, "POLL_S", 0.2)
    _in_flight_run(inst, "trajectories", "0", dg.DagsterRunStatus.STARTED)
    _in_flight_run(inst, "eval_report", "0", dg.DagsterRunStatus.NOT_STARTED)
    finished = threading.Event()

    def earlier_run_finishes() -> None:  # what the other run writes when its stages end
        for d in (layout.iteration(0).stage("trajectories"), layout.iteration(0).stage("eval_report")):
            run_stage(d, "fp-" + d.name, lambda d=d: StageResult(stage=d.name, iteration=0, path=str(d),
                                                                 summary="finished by the earlier run"))
        finished.set()

    timer = threading.Timer(3.0, earlier_run_finishes)
    timer.start()
    try:
        result = materialize(inst, resources(prof), ["tactic_pairs"], "1")
    finally:
        timer.cancel()
    assert finished.is_set()  # the stage could only have run after the earlier iteration finished
    md = metadata(result)["tactic_pairs"]
    assert md["skipped"] is False and md["partitions_used"] == \
        "base_tactic_pairs, base_model, premise_index, trajectories[0]"
    logs = [e.message for e in inst.all_logs(result.run_id) if e.message]
    assert any("tactic_pairs[1] waits for trajectories[0] (run" in m and "eval_report[0] (run" in m for m in logs)
    assert any("earlier iterations done after" in m for m in logs)


def test_a_waiting_run_gives_way_when_the_earlier_one_stays_queued(
        setup: tuple[Path, dg.DagsterInstance, BaseLayout], monkeypatch: pytest.MonkeyPatch) -> None:
    prof, inst, _ = setup  # iteration 0 is complete now (previous test), iteration 1 is not
    monkeypatch.setattr(ordering, "POLL_S", 0.1)
    monkeypatch.setattr(ordering, "QUEUED_TIMEOUT_S", 1.0)
    add_iteration(inst, 2)
    queued = _in_flight_run(inst, "trajectories", "1", dg.DagsterRunStatus.NOT_STARTED)
    result = materialize(inst, resources(prof), ["tactic_pairs"], "2", raise_on_error=False)
    assert not result.success
    msg = failure_message(result)
    assert "tactic_pairs[2] waited" in msg and f"trajectories[1] (run {queued.run_id[:8]}, NOT_STARTED)" in msg
    assert "which stayed queued" in msg and "run_queue.max_concurrent_runs" in msg
