"""Eval aggregation over real rows: budgets read off one search, pass@k, both
baselines, solved beyond automation, the EBM ablation, reports, the plot,
`burnqed compare` and the go/no-go verdict. Pure functions: no Lean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.errors import DataError
from burnqed_core.eval.baselines import Baselines
from burnqed_core.eval.compare import compare_dirs, format_compare
from burnqed_core.eval.gonogo import go_no_go
from burnqed_core.eval.report import (
    PLOT_FILE,
    format_comparison,
    format_markdown,
    format_table,
    read_summary,
    write_report,
)
from burnqed_core.eval.summary import summarize, summarize_variants
from burnqed_core.records import EvalResult

# easy1: single tactic; easy2: only the definition-aware baseline; hard1/hard2: neither
BASE = Baselines(single={"easy1": "omega", "easy2": None, "hard1": None, "hard2": None},
                 defaware={"easy1": "simp", "easy2": "induction n <;> simp_all [f]", "hard1": None, "hard2": None})


def row(theorem: str, nodes_to_proof: int | None, attempt: int = 0, ebm: str = "", iteration: int = 0,
        error: str = "", timeout: bool = False, sources: tuple[str, ...] = ("policy",)) -> EvalResult:
    proved = nodes_to_proof is not None
    return EvalResult(iteration=iteration, benchmark="bench", theorem=theorem, budget=32, attempt=attempt,
                      proved=proved, nodes_to_proof=nodes_to_proof, nodes_used=nodes_to_proof or 32, time_s=1.0,
                      proof=["simp"] * len(sources) if proved else [],
                      proof_sources=list(sources) if proved else [], error=error, timeout=timeout, ebm=ebm,
                      hard=BASE.hard(theorem))


def results() -> list[EvalResult]:
    return [row("easy1", 2), row("easy2", 12), row("hard1", 20), row("hard2", None, error="infra")]


def test_budgets_are_read_off_one_search_and_the_curve_is_monotone() -> None:
    s = summarize(results(), BASE, iteration=0, benchmark="bench", budgets=[1, 8, 16, 32])
    assert [b.all.solved for b in s.budgets] == [0, 1, 2, 3]
    rates = [b.all.rate for b in s.budgets]
    assert rates == sorted(rates)
    b16 = s.budgets[2]
    assert (b16.hard.solved, b16.hard.total, b16.easy.solved, b16.easy.total) == (0, 2, 2, 2)
    assert s.budgets[-1].avg_nodes_proved == (2 + 12 + 20) / 3
    assert s.cumulative.solved == 3 and s.cumulative_hard.solved == 1 and s.infra_errors == 1


def test_pass_at_k_counts_a_theorem_once() -> None:
    rows = [row("easy1", 3, attempt=0), row("easy1", 5, attempt=1), row("easy1", 4, attempt=2),
            row("hard1", None, attempt=0), row("hard1", 7, attempt=1), row("hard1", None, attempt=2)]
    s = summarize(rows, BASE, iteration=0, benchmark="bench", budgets=[4, 8])
    assert s.pass_k == 3
    b4, b8 = s.budgets
    assert (b4.all.solved, b4.all.total) == (1, 2)  # easy1 solved by two attempts within 4 nodes: once
    assert (b8.all.solved, b8.all.total) == (2, 2)
    assert b8.pass1 == pytest.approx((2 / 2 + 1 / 2 + 1 / 2) / 3)
    assert b4.pass1 == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)


def test_both_baselines_and_solved_beyond_automation() -> None:
    s = summarize(results(), BASE, iteration=1, benchmark="bench", budgets=[8, 32], earlier_solved={"easy1"})
    assert str(s.automation_baseline) == "1/4 (25.0%)"
    assert str(s.defaware_baseline) == "2/4 (50.0%)"
    assert s.either_baseline.solved == 2 and s.hard_theorems == 2
    assert s.beyond_automation == ["hard1"] and s.beyond_count == 1
    assert s.newly_solved == ["easy2", "hard1"]
    table = format_table(s)
    assert "baseline (a) single tactic" in table and "1/4 (25.0%)" in table
    assert "baseline (b) definition-aware" in table and "2/4 (50.0%)" in table
    assert "solved beyond automation: 1 (hard1)" in table
    md = format_markdown(s)
    assert "solved beyond automation (a proof with a policy step): **1**: `hard1`" in md and "pass@1" in md


def test_beyond_automation_needs_a_policy_step() -> None:
    """A hard theorem counts beyond automation only through a proof with a
    step the policy proposed ('policy' or 'both'); proved by automation
    candidates alone (or with no recorded origins) it is listed apart, also
    when another attempt failed; any attempt with a policy step is enough."""
    rows = [row("easy1", 2, sources=("automation",)),
            row("hard1", 5, sources=("automation", "automation")),
            row("hard2", 6, sources=("automation", "both"))]
    s = summarize(rows, BASE, iteration=0, benchmark="bench", budgets=[8])
    assert s.beyond_automation == ["hard2"] and s.automation_only == ["hard1"]
    assert "hard but by automation steps alone: 1 (hard1)" in format_table(s)
    assert "automation steps alone: 1: `hard1`" in format_markdown(s)
    unknown = summarize([row("hard1", 5, sources=())], BASE, iteration=0, benchmark="bench", budgets=[8])
    assert unknown.beyond_automation == [] and unknown.automation_only == ["hard1"]
    two = summarize([row("hard1", 5, sources=("automation",)), row("hard1", 7, attempt=1)], BASE,
                    iteration=0, benchmark="bench", budgets=[8])
    assert two.beyond_automation == ["hard1"] and two.automation_only == []
    late = summarize([row("hard1", 5, sources=("automation",)), row("hard1", 30, attempt=1)], BASE,
                     iteration=0, benchmark="bench", budgets=[8])
    assert late.beyond_automation == [] and late.automation_only == ["hard1"]


def test_timeouts_are_counted_and_reported() -> None:
    rows = [*results()[:3], row("hard2", None, timeout=True)]
    s = summarize(rows, BASE, iteration=0, benchmark="bench", budgets=[32])
    assert s.timeouts == 1
    assert "1 timeouts (per-theorem cap)" in format_table(s)


def test_ebm_ablation_rows_give_a_summary_with_and_without() -> None:
    rows = [*results(), row("easy1", 1, ebm="ebm_dir"), row("easy2", 30, ebm="ebm_dir"),
            row("hard1", 5, ebm="ebm_dir"), row("hard2", 9, ebm="ebm_dir")]
    s = summarize_variants(rows, BASE, iteration=1, benchmark="bench", budgets=[8, 32])
    assert s.ebm == "ebm_dir" and s.without_ebm is not None and s.without_ebm.ebm == ""
    assert s.rate_at(8) == 0.5 and s.without_ebm.rate_at(8) == 0.25 and s.rate_at(32) == 1.0
    assert s.beyond_automation == ["hard1", "hard2"]
    assert "EBM ablation (without -> with)" in format_table(s)
    with pytest.raises(ValueError, match="several EBM"):
        summarize(rows, BASE, iteration=1, benchmark="bench")


def test_go_no_go_verdicts() -> None:
    base = summarize(results(), BASE, iteration=0, benchmark="bench", budgets=[8, 32])
    first = go_no_go(base, None)
    assert first.go and first.reasons[0].code == "first_iteration"
    same = summarize([r.model_copy(update={"iteration": 1}) for r in results()], BASE, iteration=1, benchmark="bench",
                     budgets=[8, 32])
    v = go_no_go(same, base)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["no_improvement"]
    better = summarize([*results()[:3], row("hard2", 6)], BASE, iteration=1, benchmark="bench", budgets=[8, 32])
    assert go_no_go(better, base).go
    worse = summarize([row("easy1", 2), row("easy2", None), row("hard1", None), row("hard2", 3)], BASE, iteration=1,
                      benchmark="bench", budgets=[8, 32])
    v = go_no_go(worse, base, regression_pp=2.0)
    assert not v.go and "regression" in {r.code for r in v.reasons}
    assert "budget 32: -25.0pp" in v.summary()
    # an EBM that gains nothing over its own ablation is a no-go
    flat = summarize_variants(results() + [r.model_copy(update={"ebm": "e"}) for r in results()], BASE,
                              iteration=0, benchmark="bench", budgets=[8, 32])
    v = go_no_go(flat, None)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["ebm_no_gain"]


def test_reports_plot_compare_and_errors_naming_files(tmp_path: Path) -> None:
    s0 = summarize(results(), BASE, iteration=0, benchmark="bench", budgets=[8, 32])
    s1 = summarize([row("easy1", 2, iteration=1), row("easy2", 4, iteration=1), row("hard1", None, iteration=1),
                    row("hard2", 9, iteration=1)], BASE, iteration=1, benchmark="bench", budgets=[8, 32])
    d0, d1 = tmp_path / "iter_0", tmp_path / "iter_1"
    write_report(s0, d0)
    write_report(s1, d1)
    assert read_summary(d0) == s0
    png = (d0 / PLOT_FILE).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    table = format_comparison([s0, s1])
    assert "Δ 0→1" in table and "+25.0pp" in table

    c = compare_dirs([d0, d1])
    assert c.changes[0].newly_solved == ["hard2"] and c.changes[0].newly_lost == ["hard1"]
    text = format_compare(c)
    assert "pass@k, budget 8" in text and "hard split, 32" in text and "newly lost 1 (hard1)" in text
    assert "go/no-go: GO" in text

    res = CliRunner().invoke(app, ["compare", str(d0), str(d1), "--plot", str(tmp_path / "cmp.png")])
    assert res.exit_code == 0, res.output
    assert "newly solved 1 (hard2)" in res.output and (tmp_path / "cmp.png").stat().st_size > 5000

    (d1 / "summary.json").write_text(json.dumps({"iteration": "one"}))
    with pytest.raises(DataError, match=str(d1 / "summary.json")):
        read_summary(d1)
    with pytest.raises(DataError, match=str(tmp_path / "nope" / "summary.json")):
        compare_dirs([d0, tmp_path / "nope"])
