"""Solve rate against node budget (matplotlib, Agg backend, PNG).

One solid line per iteration (pass@k), its hard split dashed in the same
colour, the policy alone (no automation candidates) dash-dotted, an EBM
ablation dotted, and the two automation baselines of the
benchmark as horizontal lines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from burnqed_core.eval.summary import EvalSummary


def plot_summaries(summaries: Sequence[EvalSummary], out: str | Path, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = Path(out)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, s in enumerate(summaries):
            c = colors[i % len(colors)]
            xs = [b.budget for b in s.budgets]
            label = f"iteration {s.iteration}" + (" + automation" if s.automation else "") + (" + EBM" if s.ebm else "")
            ax.plot(xs, [100 * b.all.rate for b in s.budgets], "-o", color=c, label=f"{label} (pass@{s.pass_k})")
            if s.hard_theorems:
                ax.plot(xs, [100 * b.hard.rate for b in s.budgets], "--s", color=c, alpha=0.8,
                        label=f"{label}, hard split")
            if s.policy_only is not None:
                po = s.policy_only
                ax.plot([b.budget for b in po.budgets], [100 * b.all.rate for b in po.budgets], "-.x", color=c,
                        label=f"iteration {s.iteration}, policy alone (no automation candidates)")
            if s.without_ebm is not None:
                w = s.without_ebm
                ax.plot([b.budget for b in w.budgets], [100 * b.all.rate for b in w.budgets], ":^", color=c,
                        label=f"iteration {s.iteration} without EBM")
        if summaries:
            ref = summaries[-1]
            ax.axhline(100 * ref.automation_baseline.rate, color="gray", linestyle="-.", linewidth=1,
                       label=f"baseline (a) single tactic {100 * ref.automation_baseline.rate:.1f}%")
            ax.axhline(100 * ref.defaware_baseline.rate, color="black", linestyle=(0, (5, 2)), linewidth=1,
                       label=f"baseline (b) definition-aware {100 * ref.defaware_baseline.rate:.1f}%")
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
