"""Eval reports: a text table for the terminal, markdown for the UI and files,
JSON for machines, and the comparison across iterations (seed 003, 5.8)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.eval.summary import EvalSummary

SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.md"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_table(s: EvalSummary) -> str:
    """The terminal table: one row per budget, then cumulative and baseline."""
    head = f"{'budget':>7} | {'solved':>14} | {'hard (no automation)':>20} | {'avg nodes':>9} | {'avg time':>8}"
    lines = [f"Eval: iteration {s.iteration} on {s.benchmark} ({s.theorems} theorems, {s.hard_theorems} hard)",
             head, "-" * len(head)]
    for b in s.budgets:
        lines.append(f"{b.budget:>7} | {b.all!s:>14} | {b.hard!s:>20} | {b.avg_nodes_proved:>9.1f} | "
                     f"{b.avg_time_s:>7.2f}s")
    lines.append("-" * len(head))
    lines.append(f"{'any':>7} | {s.cumulative!s:>14} | {s.cumulative_hard!s:>20} |")
    lines.append(f"automation-only baseline (one of rfl/trivial/decide/omega/simp/simp_all/grind): "
                 f"{s.automation_baseline}")
    if s.unmeasured:
        lines.append(f"({s.unmeasured} theorems have no automation measurement: run `burnqed lean baseline`)")
    errors = [(b.budget, b.start_errors, b.infra_errors) for b in s.budgets if b.start_errors or b.infra_errors]
    for budget, se, ie in errors:
        lines.append(f"budget {budget}: {se} start errors, {ie} infra errors (not counted as failures of the prover)")
    if s.beyond_automation:
        lines.append(f"proved beyond automation: {', '.join(s.beyond_automation[:10])}"
                     + (" ..." if len(s.beyond_automation) > 10 else ""))
    return "\n".join(lines)


def format_markdown(s: EvalSummary) -> str:
    out = [f"### Iteration {s.iteration} on `{s.benchmark}`", "",
           f"{s.theorems} theorems, {s.hard_theorems} automation-resistant. "
           f"Automation-only baseline: **{s.automation_baseline}**.", "",
           "| budget | solved | hard split | easy split | avg nodes (proved) | avg time |",
           "|---:|---:|---:|---:|---:|---:|"]
    for b in s.budgets:
        out.append(f"| {b.budget} | {b.all} | {b.hard} | {b.easy} | {b.avg_nodes_proved:.1f} | {b.avg_time_s:.2f} s |")
    out.append(f"| any | {s.cumulative} | {s.cumulative_hard} | | | |")
    if s.beyond_automation:
        out += ["", "Proved beyond automation: " + ", ".join(f"`{n}`" for n in s.beyond_automation)]
    if s.newly_solved:
        out += ["", "Newly solved (no earlier iteration): " + ", ".join(f"`{n}`" for n in s.newly_solved)]
    return "\n".join(out) + "\n"


def format_comparison(summaries: Sequence[EvalSummary]) -> str:
    """Rates per budget for each iteration, and the change first -> last."""
    if not summaries:
        return "no eval results"
    budgets = sorted({b.budget for s in summaries for b in s.budgets})
    head = "iteration | " + " | ".join(f"budget {b:>4}" for b in budgets) + " | cumulative | hard (cum.) | automation"
    lines = [head, "-" * len(head)]

    def rate(s: EvalSummary, budget: int) -> float | None:
        return next((b.all.rate for b in s.budgets if b.budget == budget), None)

    for s in summaries:
        cells = [_pct(r) if (r := rate(s, b)) is not None else "-" for b in budgets]
        lines.append(f"{s.iteration:>9} | " + " | ".join(f"{c:>11}" for c in cells)
                     + f" | {_pct(s.cumulative.rate):>10} | {_pct(s.cumulative_hard.rate):>11} | "
                     + f"{_pct(s.automation_baseline.rate):>10}")
    if len(summaries) > 1:
        a, z = summaries[0], summaries[-1]
        deltas = []
        for b in budgets:
            ra, rz = rate(a, b), rate(z, b)
            deltas.append(f"{100 * (rz - ra):+.1f}pp" if ra is not None and rz is not None else "-")
        lines.append("-" * len(head))
        lines.append(f"{f'Δ {a.iteration}→{z.iteration}':>9} | " + " | ".join(f"{d:>11}" for d in deltas)
                     + f" | {100 * (z.cumulative.rate - a.cumulative.rate):>+9.1f}pp"
                     + f" | {100 * (z.cumulative_hard.rate - a.cumulative_hard.rate):>+10.1f}pp |")
    return "\n".join(lines)


def write_report(s: EvalSummary, out_dir: str | Path) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    js = out_dir / SUMMARY_FILE
    md = out_dir / REPORT_FILE
    js.write_text(json.dumps(s.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    md.write_text(format_markdown(s), encoding="utf-8")
    return js, md


def read_summary(out_dir: str | Path) -> EvalSummary:
    return EvalSummary.model_validate_json((Path(out_dir) / SUMMARY_FILE).read_text(encoding="utf-8"))
