"""Eval aggregation: per-budget rates, hard split, automation baseline, pass@k."""

from burnqed_core.eval.report import format_comparison, format_markdown, format_table, read_summary, write_report
from burnqed_core.eval.summary import summarize
from burnqed_core.records import EvalResult

AUTO = {"easy1": "omega", "easy2": "simp", "hard1": None, "hard2": None}


def row(theorem: str, budget: int, proved: bool, attempt: int = 0, nodes: int = 3, error: str = "") -> EvalResult:
    return EvalResult(iteration=0, benchmark="bench", theorem=theorem, budget=budget, attempt=attempt,
                      proved=proved, nodes_used=nodes, time_s=1.0 + nodes, error=error)


def results() -> list[EvalResult]:
    return [
        row("easy1", 8, True), row("easy2", 8, False), row("hard1", 8, False), row("hard2", 8, False),
        row("easy1", 32, True), row("easy2", 32, True), row("hard1", 32, True, nodes=20),
        row("hard2", 32, False, error="infra"),
    ]


def test_rates_per_budget_and_split() -> None:
    s = summarize(results(), AUTO, iteration=0, benchmark="bench")
    b8, b32 = s.budgets
    assert (b8.budget, b8.all.solved, b8.all.total) == (8, 1, 4)
    assert (b32.all.solved, b32.hard.solved, b32.hard.total, b32.easy.solved) == (3, 1, 2, 2)
    assert b32.avg_nodes_proved == (3 + 3 + 20) / 3
    assert b32.infra_errors == 1 and b8.infra_errors == 0
    assert s.cumulative.solved == 3 and s.cumulative_hard.solved == 1
    assert s.automation_baseline.solved == 2 and s.automation_baseline.total == 4
    assert s.beyond_automation == ["hard1"]


def test_pass_at_k_counts_any_attempt() -> None:
    rows = [row("hard1", 8, False, attempt=0), row("hard1", 8, True, attempt=1), row("hard2", 8, False, attempt=0),
            row("hard2", 8, False, attempt=1)]
    s = summarize(rows, AUTO, iteration=1, benchmark="bench")
    assert s.budgets[0].all.solved == 1 and s.budgets[0].all.total == 2


def test_unmeasured_and_newly_solved() -> None:
    rows = [row("mystery", 8, True), row("easy1", 8, True)]
    s = summarize(rows, AUTO, iteration=1, benchmark="bench", earlier_solved={"easy1"})
    assert s.unmeasured == 1 and s.hard_theorems == 0
    assert s.newly_solved == ["mystery"]
    assert "no automation measurement" in format_table(s)


def test_reports_round_trip_and_compare(tmp_path) -> None:
    s0 = summarize(results()[:4], AUTO, iteration=0, benchmark="bench")
    s1 = summarize(results(), AUTO, iteration=1, benchmark="bench")
    write_report(s1, tmp_path)
    assert read_summary(tmp_path) == s1
    md = format_markdown(s1)
    assert "| 32 | 3/4 (75.0%) | 1/2 (50.0%) |" in md and "`hard1`" in md
    table = format_comparison([s0, s1])
    assert "Δ 0→1" in table and "+50.0pp" in table
