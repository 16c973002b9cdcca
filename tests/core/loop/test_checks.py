"""The go/no-go the pipeline's ``eval_report`` check and the N+1 sensor read: the same interval verdict as
``burnqed compare``, on the summaries in the run layout. No Lean, no Dagster."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.eval.compare import compare_summaries
from burnqed_core.eval.report import write_report
from burnqed_core.loop.checks import eval_report_check, report_passes
from burnqed_core.loop.layout import BaseLayout
from tests.core.eval.test_compare import bench, names


def test_eval_report_check_decides_on_the_paired_intervals(tmp_path: Path) -> None:
    profile = load_profile("tiny", environ={})
    layout = BaseLayout(root=tmp_path)
    write_report(bench(names("c", 10), 0), layout.iteration(0).stage("eval_report"), plot=False)
    verdict, cv = eval_report_check(profile, layout, 0)
    assert verdict is not None and verdict.go and cv.passed and report_passes(profile, tmp_path, 0)

    noise = bench(names("c", 11), 1)  # one more cluster of 30: +3.3pp, its interval reaches zero
    write_report(noise, layout.iteration(1).stage("eval_report"), plot=False)
    verdict, cv = eval_report_check(profile, layout, 1)
    assert verdict is not None and not verdict.go and not cv.passed and not report_passes(profile, tmp_path, 1)
    assert "no_improvement" in {r.code for r in verdict.reasons}
    assert any(f.name == "best lower bound" and f.failed for f in cv.figures)
    assert verdict == compare_summaries([bench(names("c", 10), 0), noise], ["0", "1"]).verdict

    write_report(bench(names("c", 25), 1), layout.iteration(1).stage("eval_report"), plot=False)
    verdict, cv = eval_report_check(profile, layout, 1)
    assert verdict is not None and verdict.go and cv.passed and report_passes(profile, tmp_path, 1)
    assert any(n.startswith("95% intervals: paired cluster bootstrap") for n in cv.notes)


def test_a_missing_summary_fails_naming_it(tmp_path: Path) -> None:
    verdict, cv = eval_report_check(load_profile("tiny", environ={}), BaseLayout(root=tmp_path), 1)
    assert verdict is None and not cv.passed and "summary.json" in cv.summary()
