"""Automation on a real (on-disk) Dagster instance: eval_report's declarative automation condition requests
eval_report[N] once merged_model[N] lands and not while a blocking check upstream failed; the nightly schedule's
tick asks for the newest complete iteration; the next_iteration sensor adds N+1 only on a passing go/no-go.
Materialisations and check results are recorded on the instance as Dagster records them (runless events)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)

from burnqed_core.config import NightlyConfig, load_profile
from burnqed_core.eval.plan import on_set, set_specs
from burnqed_core.eval.report import write_report
from burnqed_core.eval.summary import SummaryOptions, summarize
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.stages import BY_NAME
from burnqed_core.loop.stages.nightly_eval import Settings as NightlySettings
from burnqed_core.loop.stages.nightly_eval import newest_complete, report_day
from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.automation import EVAL_REPORT_CONDITION, next_iteration
from burnqed_pipeline.defs.jobs import NIGHTLY_DATE_TAG
from burnqed_pipeline.defs.partitions import add_iteration, iteration_keys
from burnqed_pipeline.defs.schedules import nightly_schedule, nightly_settings
from burnqed_pipeline.resources import ProfileResource
from tests.core.eval.test_summary import BASE, WIDE, WIDE_BASE, results, twelve
from tests.pipeline.profiles import write_profile

EVAL = dg.AssetKey("eval_report")


@pytest.fixture
def inst(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        yield instance


def landed(inst: dg.DagsterInstance, asset: str, partition: str | None = None) -> None:
    inst.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset, partition=partition))


def checked(inst: dg.DagsterInstance, asset: str, check: str, partition: str, passed: bool) -> None:
    """A check result on the partition's latest materialisation (as a run records it)."""
    rec = inst.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]),
                                      limit=1).records[0]
    target = AssetCheckEvaluationTargetMaterializationData(storage_id=rec.storage_id, run_id=rec.run_id,
                                                           timestamp=rec.timestamp)
    inst.report_runless_asset_event(dg.AssetCheckEvaluation(asset_key=dg.AssetKey(asset), check_name=check,
                                                            passed=passed, partition=partition, blocking=True,
                                                            target_materialization_data=target))


def test_eval_report_carries_the_condition() -> None:
    d = defs()
    spec = d.resolve_assets_def("eval_report").get_asset_spec(EVAL)
    assert spec.automation_condition == EVAL_REPORT_CONDITION
    assert "eager" in str(EVAL_REPORT_CONDITION.get_label()) and "blocking" in str(EVAL_REPORT_CONDITION.get_label())


def test_eval_report_is_requested_when_merged_model_lands_unless_a_blocking_check_failed(
        inst: dg.DagsterInstance) -> None:
    d = defs()
    add_iteration(inst, 0)
    add_iteration(inst, 1)
    landed(inst, "automation_baselines")
    landed(inst, "premise_index")
    first = dg.evaluate_automation_conditions(defs=d, instance=inst)
    assert first.get_requested_partitions(EVAL) == set()  # nothing of iteration 0 has landed

    for asset in ["merged_model", "ebm", "premise_reranker"]:
        landed(inst, asset, "0")
    checked(inst, "ebm", "ebm_healthy", "0", passed=True)
    r = dg.evaluate_automation_conditions(defs=d, instance=inst, cursor=first.cursor)
    assert r.get_requested_partitions(EVAL) == {"0"}
    r = dg.evaluate_automation_conditions(defs=d, instance=inst, cursor=r.cursor)
    assert r.get_requested_partitions(EVAL) == set()  # requested once, not on every tick

    # iteration 1: the merged model lands but the EBM's blocking check failed: no eval on top of it
    landed(inst, "merged_model", "1")
    landed(inst, "ebm", "1")
    landed(inst, "premise_reranker", "1")
    checked(inst, "ebm", "ebm_healthy", "1", passed=False)
    r = dg.evaluate_automation_conditions(defs=d, instance=inst, cursor=r.cursor)
    assert r.get_requested_partitions(EVAL) == set()
    r = dg.evaluate_automation_conditions(defs=d, instance=inst, cursor=r.cursor)
    assert r.get_requested_partitions(EVAL) == set()  # nor on a later tick


nightly_eval_schedule = nightly_schedule(nightly_settings())  # the code location's, for BURNQED_PROFILE (tiny)


def tick(inst: dg.DagsterInstance, when: dt.datetime) -> list[dg.RunRequest | dg.SkipReason]:
    with dg.partition_loading_context(dynamic_partitions_store=inst):
        ctx = dg.build_schedule_context(instance=inst, scheduled_execution_time=when,
                                        repository_def=defs().get_repository_def())
        data = nightly_eval_schedule.evaluate_tick(ctx)
    return [*(data.run_requests or []), *([data.skip_message] if data.skip_message else [])]


def test_the_nightly_tick_asks_for_the_newest_complete_iteration(inst: dg.DagsterInstance) -> None:
    assert nightly_eval_schedule.cron_schedule == NightlyConfig().cron  # tiny's nightly.cron
    assert nightly_eval_schedule.execution_timezone == "UTC"
    assert nightly_eval_schedule.default_status == dg.DefaultScheduleStatus.STOPPED
    when = dt.datetime(2026, 11, 23, 3, 0, tzinfo=dt.UTC)
    (skip,) = tick(inst, when)
    assert isinstance(skip, str) and "no iteration" in skip
    for n in range(3):
        add_iteration(inst, n)
    landed(inst, "merged_model", "0")
    landed(inst, "merged_model", "1")  # iteration 2 exists but its merged model has not landed
    (req,) = tick(inst, when)
    assert isinstance(req, dg.RunRequest)
    assert req.partition_key == "1" and req.tags[NIGHTLY_DATE_TAG] == "2026-11-23" and req.job_name in (None, "nightly")
    assert req.run_key == "nightly-2026-11-23-1"


def test_nightly_layout_and_benchmarks(tmp_path: Path) -> None:
    prof = load_profile(str(write_profile(tmp_path / "p.yaml", {
        "nightly.extra_benchmarks": ["bundled:corpus", "bundled:test"], "nightly.timezone": "Asia/Tokyo",
        "eval.also": ["bundled:handwritten"]})))
    ns = NightlySettings.of(prof)
    assert set_specs(ns, ns.nightly.extra_benchmarks) == ["bundled:test", "bundled:handwritten", "bundled:corpus"]
    assert report_day("Asia/Tokyo", dt.datetime(2026, 11, 23, 20, 0, tzinfo=dt.UTC)) == "2026-11-24"
    assert BY_NAME["nightly_eval"].out_dir(BaseLayout(root=tmp_path), 3, "2026-11-24") == \
        tmp_path / "iter_3" / "nightly_eval" / "2026-11-24"
    assert newest_complete(["0", "1", "2", "10"], {"0", "10", "7"}) == 10
    assert newest_complete(["0"], set()) is None
    assert on_set(ns, "bundled:corpus").data.benchmark == "bundled:corpus"
    with pytest.raises(Exception, match="not an IANA time zone"):
        write_profile(tmp_path / "bad.yaml", {"nightly.timezone": "Mars/Olympus"})
        load_profile(str(tmp_path / "bad.yaml"))
    with pytest.raises(Exception, match="five fields"):
        write_profile(tmp_path / "bad.yaml", {"nightly.cron": "every night"})
        load_profile(str(tmp_path / "bad.yaml"))


def sense(inst: dg.DagsterInstance, profile: Path) -> dg.SensorResult | dg.SkipReason:
    ctx = dg.build_sensor_context(instance=inst, resources={"profile": ProfileResource(profile=str(profile))})
    return next_iteration(ctx)


def test_next_iteration_is_added_only_on_a_passing_report(inst: dg.DagsterInstance, tmp_path: Path) -> None:
    assert next_iteration.default_status == dg.DefaultSensorStatus.STOPPED
    work = tmp_path / "work"
    profile = write_profile(tmp_path / "p.yaml", {"paths.work_dir": str(work)})
    layout = BaseLayout(root=work)
    assert "no iteration partition" in str(sense(inst, profile))
    add_iteration(inst, 0)
    assert "eval_report[0] is not materialised" in str(sense(inst, profile))

    write_report(summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32])),
                 layout.iteration(0).stage("eval_report"), plot=False)
    landed(inst, "eval_report", "0")
    res = sense(inst, profile)  # iteration 0 passes (nothing to regress from)
    assert isinstance(res, dg.SensorResult)
    (add,) = res.dynamic_partitions_requests or []
    assert add.partitions_def_name == "iteration" and list(add.partition_keys) == ["1"]
    assert [r.partition_key for r in res.run_requests or []] == ["1"]
    inst.add_dynamic_partitions("iteration", ["1"])  # what the daemon does with the request

    # twelve clusters (enough to decide: a set of fewer decides nothing), the same theorems solved at 0 and 1
    def wide(iteration: int) -> object:
        return summarize(twelve(dict.fromkeys(WIDE[:6], 3), iteration), WIDE_BASE, SummaryOptions(iteration=iteration,
                         benchmark="bench", budgets=[8, 32]))

    write_report(wide(0), layout.iteration(0).stage("eval_report"), plot=False)  # type: ignore[arg-type]
    write_report(wide(1), layout.iteration(1).stage("eval_report"), plot=False)  # type: ignore[arg-type]
    landed(inst, "eval_report", "1")
    skip = sense(inst, profile)  # no improvement over iteration 0: the loop stops here
    assert isinstance(skip, dg.SkipReason) and "does not pass the go/no-go" in str(skip.skip_message)
    assert "no improvement" in str(skip.skip_message)
    assert iteration_keys(inst) == ["0", "1"]
