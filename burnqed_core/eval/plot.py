"""Solve rate against node budget (matplotlib, Agg backend, PNG).

One solid line per iteration (pass@k), its hard split dashed in the same
colour, the policy alone (no automation candidates) dash-dotted, an EBM
ablation dotted, the two automation baselines (a) and (b) of the
benchmark as horizontal lines and baseline (c) (the search with no learned
policy) against the node budget up to its own (a horizontal line where no
per-budget figure is known); 95% cluster-bootstrap intervals as error bars
on pass@k and the hard split, and the per-cluster pass@k as a thin line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.eval.summary import Estimate, EvalSummary


def _yerr(values: Sequence[float], ests: Sequence[Estimate | None]) -> list[list[float]] | None:
    """Error bars (in points) below and above each value, from its interval; None when any is missing."""
    if not ests or any(e is None for e in ests):
        return None
    return [[max(0.0, 100 * (v - e.low)) for v, e in zip(values, ests, strict=True) if e is not None],
            [max(0.0, 100 * (e.high - v)) for v, e in zip(values, ests, strict=True) if e is not None]]


def plot_summaries(summaries: Sequence[EvalSummary], out: str | Path, title: str = "") -> Path:
    """Solve rate against node budget (matplotlib, Agg, PNG): pass@k solid, hard split dashed, the policy
    alone dash-dotted, the EBM ablation dotted, baselines (a) and (b) as horizontal lines and baseline (c)
    (the last summary's, when measured) in gray against the budget, with the 95%
    cluster-bootstrap intervals as error bars on pass@k and the hard split, and the per-cluster pass@k as a
    thin line of diamonds. A summary without intervals is drawn without bars."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = Path(out)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, s in enumerate(summaries):
            _plot_iteration(ax, s, colors[i % len(colors)])
        if summaries:
            _plot_baselines(ax, summaries[-1])
        ax.set_xlabel("node budget")
        ax.set_ylabel("theorems solved (%)")
        ax.set_ylim(0, 100)
        budgets = sorted({b.budget for s in summaries for b in s.budgets})
        if budgets:
            ax.set_xticks(budgets)
        ax.grid(True, alpha=0.3)
        ax.set_title(title or "solve rate against node budget")
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        fig.savefig(tmp, format="png")
        tmp.replace(out)
    finally:
        plt.close(fig)
    return out


def _plot_iteration(ax: Any, s: EvalSummary, c: str) -> None:
    """One iteration's lines in colour ``c``: pass@k with its intervals, pass@k by cluster (when every budget
    has it), the hard split, the policy alone and the EBM ablation (when the summary has them)."""
    xs = [b.budget for b in s.budgets]
    label = f"iteration {s.iteration}" + (" + automation" if s.automation else "") + (" + EBM" if s.ebm else "")
    ys = [100 * b.all.rate for b in s.budgets]
    ax.errorbar(xs, ys, yerr=_yerr([b.all.rate for b in s.budgets], [b.all_ci for b in s.budgets]),
                fmt="-o", color=c, capsize=3, label=f"{label} (pass@{s.pass_k}, 95% interval)")
    if all(b.all_by_cluster is not None for b in s.budgets) and s.budgets:
        ax.plot(xs, [100 * b.all_by_cluster.value for b in s.budgets if b.all_by_cluster is not None],
                "-D", color=c, alpha=0.6, linewidth=1, markersize=3,
                label=f"{label}, by cluster ({s.clusters} clusters)")
    if s.hard_theorems:
        ax.errorbar(xs, [100 * b.hard.rate for b in s.budgets],
                    yerr=_yerr([b.hard.rate for b in s.budgets], [b.hard_ci for b in s.budgets]),
                    fmt="--s", color=c, alpha=0.8, capsize=2, label=f"{label}, hard split")
    if s.policy_only is not None:
        po = s.policy_only
        ax.plot([b.budget for b in po.budgets], [100 * b.all.rate for b in po.budgets], "-.x", color=c,
                label=f"iteration {s.iteration}, policy alone (no automation candidates)")
    if s.without_ebm is not None:
        w = s.without_ebm
        ax.plot([b.budget for b in w.budgets], [100 * b.all.rate for b in w.budgets], ":^", color=c,
                label=f"iteration {s.iteration} without EBM")


def _plot_baselines(ax: Any, ref: EvalSummary) -> None:
    """The baselines of ``ref`` (the last summary): (a) and (b) as horizontal lines, (c) against the budget
    up to its own (a horizontal line where no per-budget figure is known), when measured."""
    ax.axhline(100 * ref.automation_baseline.rate, color="gray", linestyle="-.", linewidth=1,
               label=f"baseline (a) single tactic {100 * ref.automation_baseline.rate:.1f}%")
    ax.axhline(100 * ref.defaware_baseline.rate, color="black", linestyle=(0, (5, 2)), linewidth=1,
               label=f"baseline (b) definition-aware {100 * ref.defaware_baseline.rate:.1f}%")
    if ref.structural_baseline is not None:
        label = f"baseline (c) no learned policy {100 * ref.structural_baseline.rate:.1f}%"
        at = [b for b in ref.budgets if b.structural is not None]
        if at:
            ax.plot([b.budget for b in at], [100 * b.structural.rate for b in at if b.structural is not None],
                    ":P", color="dimgray", linewidth=1.2, label=label)
        else:
            ax.axhline(100 * ref.structural_baseline.rate, color="dimgray", linestyle=":", linewidth=1.2,
                       label=label)
