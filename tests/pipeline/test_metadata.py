"""The eval in the Dagster UI (issues 57, 66): headline first (the primary statistic with its interval), then the
comparison across iterations as a table and the plot, then the rest, the long tail in tables; a materialisation
shows fewer than `MAX_ENTRIES` entries, its numbers in one table when they would be more. What the UI stores is
what was computed (the figures of the summaries, to four places)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from burnqed_core.eval.summary import PRIMARY_STATISTIC, EvalSummary, SummaryOptions, summarize
from burnqed_core.loop.eval_outputs import EvalOutputs, SetSummary
from burnqed_core.loop.inputs import UsedPartitions
from burnqed_core.records import StageResult
from burnqed_pipeline.eval_metadata import comparison_table, eval_metadata, summary_table
from burnqed_pipeline.metadata import MAX_ENTRIES, stage_metadata
from tests.core.eval.test_summary import BASE, crow, results, row


def _summaries() -> tuple[EvalSummary, EvalSummary]:
    s0 = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 16, 32]))
    s1 = summarize([row("easy1", 2, iteration=1), row("easy2", 4, iteration=1), row("hard1", 6, iteration=1),
                    row("hard2", 30, iteration=1)], BASE,
                   SummaryOptions(iteration=1, benchmark="bench", budgets=[8, 16, 32]))
    return s0, s1


def _clustered(n: int) -> EvalSummary:
    """Twelve clusters of three theorems, two attempts each: every rate has its interval."""
    rows = [crow(f"t{c}_{i}", f"c{c}", 3 if (c + i + a + n) % 3 else None, attempt=a, iteration=n, hard=c % 2 == 0)
            for c in range(12) for i in range(3) for a in range(2)]
    return summarize(rows, None, SummaryOptions(iteration=n, benchmark="bench", budgets=[8, 32]))


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
    md = eval_metadata(EvalOutputs(summaries=[s0, s1], sets=[]))
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


def test_the_eval_shows_its_headline_first_and_fewer_than_30_entries() -> None:
    s0, s1 = _clustered(0), _clustered(1)
    p = s1.primary
    assert p is not None
    other = SetSummary(slug="bundled_handwritten", summary=_clustered(1))
    md = eval_metadata(EvalOutputs(summaries=[s0, s1], sets=[other]))
    assert list(md)[:6] == ["headline", "primary", "primary_low", "primary_high", "comparison", "solve_rate_plot"]
    assert md["headline"].value.splitlines()[0] == f"**{PRIMARY_STATISTIC}: {p}**"
    assert (md["primary_low"], md["primary"], md["primary_high"]) == (round(p.low, 4), round(p.value, 4),
                                                                      round(p.high, 4))
    stats = {r.data["name"]: r.data for r in md["statistics"].records}  # the long tail, each with its interval
    assert stats["per_attempt_by_cluster"]["value"] == md["primary"]
    assert stats["cumulative_rate"]["low"] <= stats["cumulative_rate"]["value"] <= stats["cumulative_rate"]["high"]
    assert any(name.startswith("change_") for name in stats)  # the paired changes from iteration 0
    (set_row,) = [r.data for r in md["sets"].records]
    assert set_row["set"] == "bundled_handwritten" and set_row["theorems"] == 36
    assert "| node budget |" in md["bundled_handwritten_report"].value

    # a merged eval's result carries ~60 numbers: they go to one table, after the eval's own view
    metrics = {f"rate_{i}": i / 100 for i in range(60)} | {"solved": 7}
    res = StageResult(stage="eval_report", iteration=1, path="/runs/iter_1/eval_report", summary="done",
                      metrics=metrics, fingerprint="f" * 64)
    full = stage_metadata(res, UsedPartitions(same_iteration=["merged_model"], earlier={}), md)
    assert len(full) < MAX_ENTRIES, list(full)
    assert list(full)[:6] == list(md)[:6] and list(full)[-1] == "metrics"
    assert {r.data["name"]: r.data["value"] for r in full["metrics"].records}["rate_59"] == "0.59"


def test_a_stage_with_few_numbers_shows_them_flat() -> None:
    res = StageResult(stage="tactic_pairs", iteration=0, path="/runs/iter_0/tactic_pairs", summary="done",
                      metrics={"train_pairs": 120, "val_pairs": 12, "split": {"theorems": 40}})
    md = stage_metadata(res, UsedPartitions(same_iteration=["base_tactic_pairs"], earlier={}))
    assert md["train_pairs"] == 120 and md["split.theorems"] == 40 and "metrics" not in md
