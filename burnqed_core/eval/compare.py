"""Compare eval outputs across iterations (``burnqed compare DIR...``).

Reads each directory's ``summary.json`` (a missing or corrupt one is an
error naming the file), prints pass@k per node budget, the hard split and
pass@1 with the change between consecutive outputs, the theorems newly
solved and newly lost, writes the comparison plot and gives the go/no-go of
the last output against the one before it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.eval.gonogo import Verdict, go_no_go
from burnqed_core.eval.report import format_comparison, read_summary
from burnqed_core.eval.summary import EvalSummary

COMPARE_PLOT = "compare.png"


class Change(BaseModel):
    model_config = ConfigDict(frozen=True)
    before: str
    after: str
    newly_solved: list[str] = Field(default_factory=list)
    newly_lost: list[str] = Field(default_factory=list)


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)
    labels: list[str]
    summaries: list[EvalSummary]
    changes: list[Change]
    verdict: Verdict


def compare_summaries(summaries: Sequence[EvalSummary], labels: Sequence[str], *, regression_pp: float = 2.0,
                      ebm_min_gain_pp: float = 0.0) -> Comparison:
    changes = []
    for (la, a), (lz, z) in zip(zip(labels, summaries, strict=True), zip(labels[1:], summaries[1:], strict=True),
                                strict=False):
        changes.append(Change(before=la, after=lz, newly_solved=sorted(set(z.solved) - set(a.solved)),
                              newly_lost=sorted(set(a.solved) - set(z.solved))))
    prev = summaries[-2] if len(summaries) > 1 else None
    verdict = go_no_go(summaries[-1], prev, regression_pp=regression_pp, ebm_min_gain_pp=ebm_min_gain_pp)
    return Comparison(labels=list(labels), summaries=list(summaries), changes=changes, verdict=verdict)


def compare_dirs(dirs: Sequence[str | Path], **kw: float) -> Comparison:
    if not dirs:
        raise ValueError("compare needs at least one eval directory")
    summaries = [read_summary(d) for d in dirs]
    return compare_summaries(summaries, [str(d) for d in dirs], **kw)


def format_deltas(c: Comparison) -> str:
    """Per budget: pass@k of each output and the change from the one before;
    then the hard split and pass@1 at the largest budget."""
    ss = c.summaries
    budgets = sorted({b.budget for s in ss for b in s.budgets})
    width = max(12, *(len(lbl) for lbl in c.labels[-4:])) if c.labels else 12
    rows = [f"{'':<22}" + "".join(f"{f'iter {s.iteration}' + (' +EBM' if s.ebm else ''):>{width + 2}}" for s in ss)]

    def line(name: str, vals: Sequence[float | None]) -> str:
        cells, prev = [], None
        for v in vals:
            if v is None:
                cells.append("-")
            elif prev is None:
                cells.append(f"{100 * v:.1f}%")
            else:
                cells.append(f"{100 * v:.1f}% ({100 * (v - prev):+.1f})")
            prev = v if v is not None else prev
        return f"{name:<22}" + "".join(f"{x:>{width + 2}}" for x in cells)

    for b in budgets:
        rows.append(line(f"pass@k, budget {b}", [s.rate_at(b) for s in ss]))
    top = budgets[-1] if budgets else 0
    rows.append(line(f"hard split, {top}", [s.hard_rate_at(top) for s in ss]))
    rows.append(line(f"pass@1, budget {top}", [next((b.pass1 for b in s.budgets if b.budget == top), None)
                                               for s in ss]))
    rows.append(line("beyond automation", [s.beyond_count / s.theorems if s.theorems else 0.0 for s in ss]))
    rows.append(f"{'k (attempts)':<22}" + "".join(f"{s.pass_k:>{width + 2}}" for s in ss))
    return "\n".join(rows)


def format_compare(c: Comparison) -> str:
    out = ["Outputs: " + ", ".join(f"[{i}] {lbl}" for i, lbl in enumerate(c.labels)), "", format_deltas(c), "",
           format_comparison(c.summaries), ""]
    for ch in c.changes:
        out.append(f"{ch.before} -> {ch.after}: newly solved {len(ch.newly_solved)}"
                   + (f" ({', '.join(ch.newly_solved[:12])}{' ...' if len(ch.newly_solved) > 12 else ''})"
                      if ch.newly_solved else "")
                   + f"; newly lost {len(ch.newly_lost)}"
                   + (f" ({', '.join(ch.newly_lost[:12])}{' ...' if len(ch.newly_lost) > 12 else ''})"
                      if ch.newly_lost else ""))
    out.append("")
    out.append(f"go/no-go: {c.verdict.summary()}")
    return "\n".join(out)


def write_compare_plot(c: Comparison, out: str | Path) -> Path:
    from burnqed_core.eval.plot import plot_summaries

    return plot_summaries(c.summaries, out, title="solve rate against node budget, by iteration")
