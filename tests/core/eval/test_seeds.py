"""Decisions over training seeds (`burnqed_core.eval.seeds`): the seed-averaged paired change of the primary
statistic with an interval that resamples the seeds too; per-seed work directories; `burnqed compare --seeds`.
Pure functions and files: no Lean."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.config import load_profile
from burnqed_core.errors import DataError
from burnqed_core.eval.compare import interval_verdict
from burnqed_core.eval.report import write_report
from burnqed_core.eval.seeds import seed_change, seed_profile, seed_verdict, seed_work_dir, training_seeds
from burnqed_core.eval.summary import EvalSummary, SummaryOptions, summarize
from burnqed_core.records import EvalResult

CLUSTERS = 20


def run(solved: int, iteration: int) -> EvalSummary:
    """20 clusters of two theorems; the first ``solved`` clusters proved."""
    rows = [EvalResult(iteration=iteration, benchmark="b", theorem=f"c{c:02d}_{i}", budget=16,
                       proved=c < solved, nodes_to_proof=3 if c < solved else None, nodes_used=3 if c < solved else 16,
                       time_s=1.0, proof=["simp"] if c < solved else [], cluster=f"c{c:02d}")
            for c in range(CLUSTERS) for i in range(2)]
    return summarize(rows, None, SummaryOptions(iteration=iteration, benchmark="b", budgets=[16]))


def test_a_change_every_seed_makes_is_a_go() -> None:
    before = [run(6, 0), run(7, 0), run(6, 0)]
    after = [run(14, 2), run(15, 2), run(13, 2)]
    ch = seed_change(before, after)
    assert ch.seeds == 3 and ch.clusters == CLUSTERS and ch.theorems == 2 * CLUSTERS
    assert ch.per_seed == pytest.approx([0.4, 0.4, 0.35]) and ch.change.value == pytest.approx(1.15 / 3)
    assert ch.change.low > 0 and seed_verdict(ch).go
    assert ch == seed_change(before, after)  # deterministic


def test_one_lucky_seed_is_not_a_go() -> None:
    """Seed 0 alone looks clearly better (its own paired interval lies above zero); over three seeds, the
    other two flat or worse, the interval that resamples the seeds reaches zero."""
    before = [run(6, 0), run(6, 0), run(6, 0)]
    after = [run(16, 2), run(5, 2), run(6, 2)]
    alone, _ = interval_verdict(after[0], before[0])
    assert alone.go
    ch = seed_change(before, after)
    assert ch.per_seed == pytest.approx([0.5, -0.05, 0.0]) and ch.seed_sd > 0.2
    assert ch.change.low <= 0 < ch.change.value
    v = seed_verdict(ch)
    assert not v.go and "no improvement" in v.reason
    assert "mean over 3 training seeds (per seed +50.0, -5.0, +0.0 pp" in ch.describe()


def test_one_seed_says_so_and_bad_input_is_an_error() -> None:
    v = seed_verdict(seed_change([run(6, 0)], [run(16, 1)]))
    assert v.go and "one training seed" in v.reason
    with pytest.raises(DataError, match="one eval per training seed"):
        seed_change([run(6, 0)], [run(7, 1), run(8, 1)])
    old = run(6, 0).model_copy(update={"outcomes": []})
    with pytest.raises(DataError, match="without per-theorem outcomes"):
        seed_change([old], [run(7, 1)])


def test_per_seed_runs_and_profiles() -> None:
    small, tiny = load_profile("small", environ={}), load_profile("tiny", environ={})
    assert training_seeds(small) == [0, 1, 2] and training_seeds(tiny) == [tiny.training.seed]
    p = seed_profile(small, 2)
    assert p.training.seed == 2 and p.paths.work_dir == seed_work_dir(small.paths.work_dir, 2)
    assert str(p.paths.work_dir).endswith("seed-2") and p.data == small.data and p.search == small.search


def test_compare_reads_several_runs(tmp_path: Path) -> None:
    dirs = []
    for side, counts in ((0, (6, 7, 6)), (2, (14, 15, 13))):
        for s, n in enumerate(counts):
            d = tmp_path / f"seed-{s}" / f"iter_{side}" / "eval"
            write_report(run(n, side), d, plot=False)
            dirs.append(str(d))
    res = CliRunner().invoke(app, ["compare", "--seeds", "3", *dirs, "--fail-on-no-go"])
    assert res.exit_code == 0, res.output
    assert "pass@1 by cluster, budget 16: +38.3 pp [" in res.output and "go/no-go: GO" in res.output
    res = CliRunner().invoke(app, ["compare", "--seeds", "3", *dirs[:5]])
    assert res.exit_code != 0 and "needs 6 eval directories" in res.output
