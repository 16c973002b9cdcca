"""The eval in the Dagster UI (`eval_metadata`), headline first: the primary statistic with its interval, the
comparison across iterations, the plot, then the rest.

1. ``headline``: the primary statistic (`burnqed_core.eval.summary.PRIMARY_STATISTIC`) with its interval, then
   the report's headline lines; ``primary``, ``primary_low``, ``primary_high``: the same as numbers (the UI plots
   a number across partitions);
2. ``comparison``: one row per iteration (rates per budget, hard split, baselines, the policy alone);
3. ``solve_rate_plot``: the report's plot (a PNG inlined in markdown: `MetadataValue` has no image type);
4. ``change`` (from iteration N-1, with paired intervals), ``eval_table`` (one row per node budget),
   ``eval_report`` (the full markdown report), ``cumulative_rate`` and ``theorems``;
5. the long tail in tables: ``statistics`` (every rate, baseline and change with its interval) and ``sets`` (each
   further set of the eval, one row; its report as ``<slug>_report``).

What the UI stores is what was computed: the figures of the summaries, to four places.
"""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_core.eval.summary import Estimate, EvalSummary
from burnqed_core.loop.eval_outputs import EvalOutputs, SetSummary

STAT_COLUMNS = (("name", "string"), ("value", "float"), ("low", "float"), ("high", "float"))


def _r(x: float | None) -> float | None:
    return round(x, 4) if x is not None else None


def _est(e: Estimate | None) -> tuple[float | None, float | None, float | None]:
    return (_r(e.value), _r(e.low), _r(e.high)) if e is not None else (None, None, None)


def _table(cols: Sequence[tuple[str, str]], rows: list[dict[str, Any]]) -> dg.TableMetadataValue:
    return dg.MetadataValue.table(records=[dg.TableRecord(r) for r in rows], schema=dg.TableSchema(
        columns=[dg.TableColumn(name, kind) for name, kind in cols]))


def summary_table(s: EvalSummary) -> dg.TableMetadataValue:
    """An eval summary as a table: one row per node budget, rates with their 95% cluster-bootstrap intervals."""
    cols = [("budget", "int"), ("solved", "string"), ("rate", "float"), ("rate_low", "float"), ("rate_high", "float"),
            ("by_cluster", "float"), ("pass1", "float"), ("hard", "string"), ("hard_rate", "float"),
            ("avg_nodes_to_proof", "float"), ("baseline_c", "string")]
    rows = []
    for b in s.budgets:
        rate, low, high = _est(b.all_ci)
        rows.append({"budget": b.budget, "solved": f"{b.all.solved}/{b.all.total}",
                     "rate": rate if rate is not None else _r(b.all.rate), "rate_low": low, "rate_high": high,
                     "by_cluster": _est(b.all_by_cluster)[0], "pass1": _r(b.pass1),
                     "hard": f"{b.hard.solved}/{b.hard.total}", "hard_rate": _r(b.hard.rate),
                     "avg_nodes_to_proof": round(b.avg_nodes_proved, 2),
                     "baseline_c": f"{b.structural.solved}/{b.structural.total}" if b.structural is not None else None})
    return _table(cols, rows)


def comparison_table(summaries: Sequence[EvalSummary]) -> dg.TableMetadataValue:
    """Evals across iterations as a table: one row per iteration, the rate at each budget, the hard split, the
    baselines (a), (b), (c), the policy alone and what was solved beyond automation."""
    budgets = sorted({b.budget for s in summaries for b in s.budgets})
    cols = [("iteration", "int"), *((f"rate_at_{b}", "float") for b in budgets), ("by_cluster", "float"),
            ("hard_rate", "float"), ("beyond_automation", "int"), ("baseline_a", "float"), ("baseline_b", "float"),
            ("baseline_c", "float"), ("policy_alone", "float")]
    rows = []
    for s in summaries:
        rec: dict[str, Any] = {"iteration": s.iteration} | {f"rate_at_{b}": _r(s.rate_at(b)) for b in budgets}
        rec |= {"by_cluster": _est(s.cumulative_by_cluster)[0], "hard_rate": _r(s.cumulative_hard.rate),
                "beyond_automation": s.beyond_count, "baseline_a": _r(s.automation_baseline.rate),
                "baseline_b": _r(s.defaware_baseline.rate),
                "baseline_c": _r(s.structural_baseline.rate) if s.structural_baseline is not None else None,
                "policy_alone": _r(s.policy_only.cumulative.rate) if s.policy_only is not None else None}
        rows.append(rec)
    return _table(cols, rows)


def _stat(name: str, value: float | None, est: Estimate | None = None) -> dict[str, Any]:
    v, low, high = _est(est)
    return {"name": name, "value": v if v is not None else _r(value), "low": low, "high": high}


def _key(name: str) -> str:
    return "_".join("".join(ch if ch.isalnum() else " " for ch in name.lower()).split())


def statistic_rows(s: EvalSummary, before: EvalSummary | None) -> list[dict[str, Any]]:
    """Every figure of ``s`` with its interval (where it has one), the baselines, the prover against the best
    baseline, and the paired changes from ``before``."""
    rows = [_stat(k, None, e) for k, e in (
        ("cumulative_rate", s.cumulative_ci), ("cumulative_by_cluster", s.cumulative_by_cluster),
        ("hard_rate", s.hard_ci), ("hard_by_cluster", s.hard_by_cluster), ("per_attempt_rate", s.per_attempt),
        ("per_attempt_by_cluster", s.per_attempt_by_cluster)) if e is not None]
    rows += [_stat("automation_baseline", s.automation_baseline.rate), _stat("clusters", s.clusters),
             _stat("newly_solved", len(s.newly_solved))]
    if s.structural_baseline is not None:
        rows.append(_stat("structural_baseline", s.structural_baseline.rate, s.structural_ci))
    for key, best in (("best_baseline", s.best_baseline), ("best_baseline_hard", s.best_baseline_hard)):
        if best is not None and best.versus is not None:
            rows.append(_stat(f"vs_{key}", None, best.versus.change))
    if before is not None:
        from burnqed_core.eval.compare import compare_summaries

        paired = compare_summaries([before, s], [f"iteration {x.iteration}" for x in (before, s)]).changes[-1].paired
        rows += [_stat("change_" + _key(d.name), None, d.change) for d in (paired.deltas if paired else [])]
    return rows


def sets_table(sets: Sequence[SetSummary]) -> dg.TableMetadataValue:
    """The eval's further sets, one row each: theorems, the rate with its interval, by cluster, the hard split."""
    cols = [("set", "string"), ("theorems", "int"), ("cumulative_rate", "float"), ("low", "float"),
            ("high", "float"), ("by_cluster", "float"), ("hard_rate", "float")]
    rows = []
    for es in sets:
        s = es.summary
        _v, low, high = _est(s.cumulative_ci)
        rows.append({"set": es.slug, "theorems": s.theorems, "cumulative_rate": _r(s.cumulative.rate), "low": low,
                     "high": high, "by_cluster": _est(s.cumulative_by_cluster)[0],
                     "hard_rate": _r(s.cumulative_hard.rate)})
    return _table(cols, rows)


def headline_metadata(s: EvalSummary) -> dict[str, Any]:
    """The primary statistic with its interval, first as the headline (markdown), then as numbers."""
    from burnqed_core.eval.report import headline
    from burnqed_core.eval.summary import PRIMARY_STATISTIC

    p = s.primary
    first = f"**{PRIMARY_STATISTIC}: {p}**" if p is not None else f"**solved: {s.cumulative}** (no intervals)"
    lines = [first, *(f"- {line}" for line in headline(s))]
    out: dict[str, Any] = {"headline": dg.MetadataValue.md("\n".join(lines))}
    if p is not None:
        out |= {"primary": _r(p.value), "primary_low": _r(p.low), "primary_high": _r(p.high)}
    return out


def _plot(summaries: Sequence[EvalSummary]) -> dg.MetadataValue:
    from burnqed_core.eval.plot import plot_summaries

    with tempfile.TemporaryDirectory() as tmp:  # the report's own plot: hard split, both baselines, EBM ablation
        png = plot_summaries(summaries, Path(tmp) / "solve_rate.png", title=f"Solve rate on {summaries[-1].benchmark}")
        data = base64.b64encode(png.read_bytes()).decode()
    return dg.MetadataValue.md(f"![solve rate per budget](data:image/png;base64,{data})")


def eval_metadata(outputs: EvalOutputs) -> dict[str, Any]:
    """The eval's metadata, headline first (module docstring)."""
    from burnqed_core.eval.report import format_markdown

    summaries, s = outputs.summaries, outputs.current
    before = summaries[-2] if len(summaries) > 1 else None
    out = headline_metadata(s) | {"comparison": comparison_table(summaries), "solve_rate_plot": _plot(summaries)}
    if before is not None:
        from burnqed_core.eval.compare import compare_summaries, format_compare_markdown

        c = compare_summaries([before, s], [f"iteration {x.iteration}" for x in (before, s)])
        out["change"] = dg.MetadataValue.md(format_compare_markdown(c))
    out |= {"eval_table": summary_table(s), "eval_report": dg.MetadataValue.md(format_markdown(s)),
            "cumulative_rate": _r(s.cumulative.rate), "theorems": s.theorems,
            "statistics": _table(STAT_COLUMNS, statistic_rows(s, before))}
    if s.best_baseline is not None:
        out["best_baseline"] = s.best_baseline.describe()
    if outputs.sets:
        out["sets"] = sets_table(outputs.sets)
        out |= {f"{es.slug}_report": dg.MetadataValue.md(format_markdown(es.summary)) for es in outputs.sets}
    return out
