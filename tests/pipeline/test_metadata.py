"""The eval in the Dagster UI as tables (issue 57): an eval summary is a `TableMetadataValue` with one row per
node budget, the comparison across iterations one row per iteration, with the markdown report and the plot
beside them; what the UI stores is what was computed (the figures of the summary, to four places)."""

from __future__ import annotations

from pathlib import Path

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


def test_the_joint_monitor_is_a_table_and_a_plot(tmp_path: Path) -> None:
    from burnqed_core.ebm.model import EnergyHead, HeadConfig
    from burnqed_core.training.joint_head import JointRecord, save_joint_head
    from burnqed_core.training.joint_monitor import AbortRecord, MonitorPoint
    from burnqed_pipeline.metadata import joint_monitor

    assert joint_monitor(tmp_path, "LoRA iteration 1") == {}  # an adapter trained alone shows nothing
    cfg = HeadConfig(dim=8, hidden_dims=[4])
    series = [MonitorPoint(step=s, centroid_l2=c, linear_probe_acc=0.9, temperature=1.0, sft_loss=loss, infonce=0.5)
              for s, c, loss in ((0, 0.1, None), (5, 0.08, 2.0), (10, 0.02, 1.9))]
    save_joint_head(EnergyHead(cfg), JointRecord(head=cfg, pooling="last_l2", text_format="v", max_prompt_tokens=64,
                                                 joint_lambda=0.1, head_lr=1e-3, steps=10, monitor=series,
                                                 aborted=AbortRecord(condition="centroid_l2", step=10,
                                                                     message="aborted at step 10: centroid_l2")),
                    tmp_path)
    md = joint_monitor(tmp_path, "LoRA iteration 1")
    table = md["joint_monitor"]
    assert isinstance(table, dg.TableMetadataValue) and len(table.records) == 3
    assert table.records[2].data["centroid_l2"] == 0.02 and table.records[0].data["sft_loss"] is None
    assert md["joint_aborted"] == "aborted at step 10: centroid_l2"
    assert md["joint_monitor_plot"].value.startswith("![LoRA iteration 1 joint monitor](data:image/png;base64,")
