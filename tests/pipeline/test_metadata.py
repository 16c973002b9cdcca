"""The eval in the Dagster UI as tables (issue 57): an eval summary is a `TableMetadataValue` with one row per
node budget, the comparison across iterations one row per iteration, with the markdown report and the plot
beside them; what the UI stores is what was computed (the figures of the summary, to four places)."""

from __future__ import annotations

import dagster as dg

from burnqed_core.eval.summary import SummaryOptions, summarize
from burnqed_pipeline.metadata import comparison_table, eval_metadata, summary_table
from tests.core.eval.test_summary import BASE, results, row


def _summaries():
    s0 = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 16, 32]))
    s1 = summarize([row("easy1", 2, iteration=1), row("easy2", 4, iteration=1), row("hard1", 6, iteration=1),
                    row("hard2", 30, iteration=1)], BASE,
                   SummaryOptions(iteration=1, benchmark="bench", budgets=[8, 16, 32]))
    return s0, s1


def test_the_summary_is_a_table_of_budgets() -> None:
    s0, _ = _summaries()
    table = summary_table(s0)
    assert isinstance(table, dg.TableMetadataValue)
    assert [c.name for c in table.schema.columns][:3] == ["budget", "solved", "rate"]
    rows = [r.data for r in table.records]
    assert [r["budget"] for r in rows] == [8, 16, 32]
    assert [r["solved"] for r in rows] == [f"{b.all.solved}/{b.all.total}" for b in s0.budgets]
    assert rows[-1]["hard"] == f"{s0.budgets[-1].hard.solved}/{s0.budgets[-1].hard.total}"


def test_the_comparison_is_a_table_of_iterations_and_the_plot_is_beside_it() -> None:
    s0, s1 = _summaries()
    comp = comparison_table([s0, s1])
    rows = [r.data for r in comp.records]
    assert [r["iteration"] for r in rows] == [0, 1]
    assert rows[1]["rate_at_32"] == round(s1.cumulative.rate, 4) and rows[0]["rate_at_8"] == round(s0.rate_at(8), 4)
    md = eval_metadata([s0, s1])
    assert isinstance(md["eval_table"], dg.TableMetadataValue) and isinstance(md["comparison"], dg.TableMetadataValue)
    assert "| node budget |" in md["eval_report"].value and md["solve_rate_plot"].value.startswith("![")
    assert md["cumulative_rate"] == round(s1.cumulative.rate, 4)
