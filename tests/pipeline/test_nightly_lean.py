"""The nightly eval end to end: the schedule's tick picks the newest iteration whose merged model landed, and
the ``nightly`` job evaluates it on the benchmark and an extra benchmark, into one dated folder (the eval's
plan: the benchmark at its root, the extra set under ``sets/``). Real tiny models trained here (LeanDojo-format
corpus, no Lean for training), the real embedded Lean for the eval."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import dagster as dg
import pytest

from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.eval.plan import set_out
from burnqed_core.eval.report import read_summary
from burnqed_core.eval.steps import set_slug
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.record_io import write_jsonl
from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.jobs import NIGHTLY_DATE_TAG
from burnqed_pipeline.defs.partitions import add_iteration
from tests.pipeline.helpers import lend, materialize, metadata, resources
from tests.pipeline.profiles import leandojo_corpus, slice_set, write_profile
from tests.pipeline.test_automation import tick

pytestmark = [pytest.mark.lean, pytest.mark.slow]


async def test_nightly_eval_of_the_newest_complete_iteration(tmp_path: Path, lean_pool: object) -> None:
    bench = slice_set("bundled:benchmark", 1, tmp_path / "bench" / "benchmark.jsonl")
    first = {t.name for t in load_theorems(str(bench))}
    extra = tmp_path / "extra" / "more.jsonl"  # other benchmark theorems (a corpus set would leak: refused)
    write_jsonl([t for t in load_theorems("bundled:benchmark") if t.name not in first][-2:], extra)
    work = tmp_path / "work"
    prof = write_profile(tmp_path / "profile.yaml", {
        "paths.work_dir": str(work), "data.corpus": str(leandojo_corpus(tmp_path / "dojo")),
        "data.benchmark": str(bench), "eval.max_theorems": 2, "nightly.extra_benchmarks": [str(extra)]})
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as inst:

        def run() -> tuple[dg.RunRequest, dg.ExecuteInProcessResult]:
            materialize(inst, res, ["base_tactic_pairs", "base_model", "automation_baselines", "premise_index"])
            add_iteration(inst, 0)
            materialize(inst, res, ["tactic_pairs", "lora_adapter", "merged_model"], "0")
            add_iteration(inst, 1)  # added, nothing materialised: not complete
            (req,) = tick(inst, dt.datetime(2026, 11, 23, 3, 0, tzinfo=dt.UTC))
            assert isinstance(req, dg.RunRequest)
            job = defs().resolve_job_def("nightly")
            return req, job.execute_in_process(partition_key=req.partition_key, tags=req.tags, instance=inst,
                                               resources=res)

        res = resources(prof, runtime=lend(lean_pool))
        req, result = await asyncio.to_thread(run)
    assert req.partition_key == "0" and req.tags[NIGHTLY_DATE_TAG] == "2026-11-23"
    md = metadata(result)["nightly_eval"]
    day = BaseLayout(root=work).iteration(0).stage("nightly_eval") / "2026-11-23"
    assert md["path"] == str(day) and md["partitions_used"].startswith("merged_model[0]")
    for spec in (str(bench), str(extra)):
        out = set_out(day, str(bench), spec)
        assert (out / "report.md").is_file() and (out / "results.parquet").is_file()
        s = read_summary(out)
        assert s.theorems == 2 and s.benchmark == spec and s.iteration == 0
    s = read_summary(day)
    assert md["cumulative_rate"] == round(s.cumulative.rate, 4)
    extra_rate = round(read_summary(set_out(day, str(bench), str(extra))).cumulative.rate, 4)
    (extra_row,) = [r.data for r in md["sets"].records]
    assert extra_row["set"] == set_slug(str(extra)) and extra_row["cumulative_rate"] == extra_rate
    assert "eval_table" in md and "solve_rate_plot" in md  # the summary as a table, the plot beside it
