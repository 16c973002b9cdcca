"""Compare eval outputs across iterations (``burnqed compare DIR...``).

Reads each directory's ``summary.json`` (a missing or corrupt one is an
error naming the file), prints pass@k per node budget, the hard split and
pass@1 with the change between consecutive outputs, the theorems newly
solved and newly lost, writes the comparison plot and gives the go/no-go of
the last output against the one before it.

Each change between consecutive outputs comes with a 95% interval by a
*paired cluster bootstrap* (`burnqed_core.eval.summary.paired_deltas`): on
the theorems both outputs hold, the clusters are resampled with replacement
(2000 times, seed 0 by default) and both outputs' statistic is computed on
the same resample; the interval is the 2.5/97.5 percentiles of the
difference. Shown as ``+3.6 pp [-1.2, +8.3]``.

The go/no-go (`interval_verdict`, also the pipeline's ``eval_report`` check
through `burnqed_core.loop.checks.eval_report_check`) decides on those
intervals, on the primary statistic alone (`burnqed_core.eval.summary.PRIMARY_STATISTIC`,
declared there once): pass@1 by cluster at the largest common budget, on all
theorems, and on the hard split when it has at least `MIN_CLUSTERS` (10)
clusters; every other change (pass@k per budget, per theorem) is shown, never
deciding. Then

* **improved** only when a deciding change's interval lies above zero
  (lower bound > 0); otherwise **no improvement** (blocking);
* **regression** (blocking) when some deciding change's whole interval lies
  below ``-regression_pp`` (upper bound < -regression_pp): a drop beyond the
  tolerance that the resampling cannot explain. A point drop whose interval
  reaches above ``-regression_pp`` is not a regression (it still counts
  against "improved" only by not being one);
* the EBM against its ablation, the policy alone and the automation
  baselines as in `burnqed_core.eval.gonogo.go_no_go` (point estimates);
  whether the prover beats the best of the baselines (a), (b), (c) with its
  own paired interval above zero (`EvalSummary.best_baseline`), shown and
  never blocking.

One statistic (two with a hard split of 10 clusters or more) decides, so the
chance of calling an iteration better by luck stays near the 2.5% of a
one-sided test (it was any of 2 x (budgets + 1) correlated changes before).
A set with fewer than `MIN_CLUSTERS` clusters in both outputs decides
nothing (a percentile bootstrap over a handful of clusters has too few
distinct resamples to mean anything): the verdict is no-go, saying so. A
summary written before the per-theorem outcomes were kept (no pairing
possible) is decided by `go_no_go`'s point rule on the same statistic,
saying so in its notes.

Several training seeds: `compare_seed_groups` reads several runs of each side (one eval output per training
seed) and decides on the seed-averaged paired difference of the primary statistic, with an interval that
resamples the seeds as well as the clusters (`burnqed_core.eval.seeds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.eval.gonogo import BEST_BASELINE_FIGURE, Decision, Reason, Verdict, gonogo_verdict
from burnqed_core.eval.plot import plot_summaries
from burnqed_core.eval.report import format_comparison, read_summary
from burnqed_core.eval.summary import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    MIN_CLUSTERS,
    PRIMARY_STATISTIC,
    Delta,
    EvalSummary,
    PairedChange,
    paired_deltas,
)
from burnqed_core.verdict import CheckVerdict, Figure

COMPARE_PLOT = "compare.png"
_BY_INTERVAL = ("regression", "no_improvement", "improved")


class Change(BaseModel):
    model_config = ConfigDict(frozen=True)
    before: str
    after: str
    newly_solved: list[str] = Field(default_factory=list)
    newly_lost: list[str] = Field(default_factory=list)
    paired: PairedChange | None = Field(None, description="the changes with paired cluster-bootstrap intervals "
                                                          "(None: a summary without per-theorem outcomes)")


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)
    labels: list[str]
    summaries: list[EvalSummary]
    changes: list[Change]
    verdict: Verdict
    check: CheckVerdict | None = Field(None, description="the same decision with its figures")


def _fallback_reason(paired: PairedChange | None) -> str:
    if paired is None:
        return "no per-theorem outcomes in both summaries (one was written before clusters), so no paired interval"
    return ""


def interval_verdict(
    current: EvalSummary,
    previous: EvalSummary | None = None,
    *,
    regression_pp: float = 2.0,
    ebm_min_gain_pp: float = 0.0,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
    min_clusters: int = MIN_CLUSTERS,
    paired: PairedChange | None = None,
) -> tuple[Verdict, CheckVerdict]:
    """The go/no-go of ``current`` against ``previous`` on paired cluster-bootstrap intervals of the primary
    statistic (the rule in the module docstring), as a `Verdict` and the ``eval_report`` `CheckVerdict`
    (passes exactly when the verdict is go). ``paired``: `paired_deltas` of the two when already computed.
    Falls back to `burnqed_core.eval.gonogo.gonogo_verdict` (point estimates of the same statistic) without
    previous or without per-theorem outcomes, noting why; with fewer than ``min_clusters`` clusters nothing
    decides (no-go, saying so)."""
    v, cv = gonogo_verdict(current, previous, regression_pp=regression_pp, ebm_min_gain_pp=ebm_min_gain_pp)
    if previous is None:
        return v, cv
    if paired is None:
        paired = paired_deltas(previous, current, samples=samples, seed=seed, min_clusters=min_clusters)
    why = _fallback_reason(paired)
    if why or paired is None:
        notes = [*cv.notes, f"decided on point estimates: {why}"]
        return v, cv.model_copy(update={"notes": notes})
    deciding = [d for d in paired.deltas if d.decides]
    if not deciding:
        return _too_few_clusters(current, paired, v, cv, min_clusters)
    reasons = [*_interval_reasons(deciding, previous.iteration, regression_pp),
               *(r for r in v.reasons if r.code not in (*_BY_INTERVAL, "too_few_clusters"))]
    decision: Decision = "no-go" if any(r.blocking for r in reasons) else "go"
    verdict = Verdict(decision=decision, iteration=current.iteration, reasons=reasons)
    figures = _interval_figures(deciding, previous.iteration, regression_pp / 100)
    figures += [f for f in cv.figures if f.name in _KEPT_FIGURES]
    shown = [d.describe() for d in paired.deltas if not d.decides]
    check = CheckVerdict(check=cv.check, figures=figures, failures=[r.message for r in reasons if r.blocking],
                         notes=[f"{decision.upper()} (iteration {current.iteration})",
                                *(r.message for r in reasons if not r.blocking), paired.describe(),
                                *(["shown, not deciding: " + "; ".join(shown)] if shown else [])])
    return verdict, check


_KEPT_FIGURES = ("best EBM gain", "solve rate", BEST_BASELINE_FIGURE)
"""The point-estimate verdict's figures that the interval verdict shows as well."""


def _too_few_clusters(current: EvalSummary, paired: PairedChange, v: Verdict, cv: CheckVerdict,
                      min_clusters: int) -> tuple[Verdict, CheckVerdict]:
    """No-go: no change decides, the set has fewer than ``min_clusters`` clusters in both evals."""
    shown = "; ".join(d.describe() for d in paired.deltas if d.by_cluster and d.name.startswith("pass@1"))
    reason = Reason(code="too_few_clusters", blocking=True,
                    message=f"{paired.clusters} clusters in both evals (fewer than {min_clusters}): the set "
                            f"decides nothing ({shown})")
    reasons = [reason, *(r for r in v.reasons if r.code not in (*_BY_INTERVAL, "too_few_clusters"))]
    verdict = Verdict(decision="no-go", iteration=current.iteration, reasons=reasons)
    figures = [Figure(name="clusters", value=float(paired.clusters), op=">=", threshold=float(min_clusters),
                      note="a set with fewer decides nothing")]
    figures += [f for f in cv.figures if f.name in _KEPT_FIGURES]
    return verdict, CheckVerdict(check=cv.check, figures=figures, failures=[reason.message],
                                 notes=[f"NO-GO (iteration {current.iteration})", paired.describe()])


def _interval_reasons(deciding: Sequence[Delta], prev: int, regression_pp: float) -> list[Reason]:
    """Regression (a deciding change's whole interval below ``-regression_pp``), no improvement (no interval
    above zero) or improved."""
    tol = regression_pp / 100
    drops = [d for d in deciding if d.change.high < -tol]
    ups = [d for d in deciding if d.change.low > 0]
    reasons: list[Reason] = []
    if drops:
        reasons.append(Reason(code="regression", blocking=True,
                              message=f"regression beyond {regression_pp:.1f}pp vs iteration {prev}, the whole 95% "
                                      f"interval below -{regression_pp:.1f}pp ("
                                      + "; ".join(d.describe() for d in drops) + ")"))
    if not ups:
        reasons.append(Reason(code="no_improvement", blocking=True,
                              message=f"no improvement over iteration {prev} with its 95% interval above zero ("
                                      + "; ".join(d.describe() for d in deciding) + ")"))
    elif not drops:
        reasons.append(Reason(code="improved", blocking=False,
                              message=f"improved over iteration {prev}, 95% interval above zero ("
                                      + "; ".join(d.describe() for d in ups) + ")"))
    return reasons


def _interval_figures(deciding: Sequence[Delta], prev: int, tol: float) -> list[Figure]:
    figures = [Figure(name=f"upper bound of {d.name}", value=d.change.high, op=">=", threshold=-tol,
                      note=f"{100 * d.before:.1f}% -> {100 * d.after:.1f}%, change {d.change.pp()}")
               for d in deciding]
    figures.append(Figure(name="best lower bound", value=max(d.change.low for d in deciding), op=">",
                          threshold=0.0, note=f"vs iteration {prev}: only a change whose 95% interval lies above "
                                              "zero is an improvement"))
    return figures


def compare_summaries(summaries: Sequence[EvalSummary], labels: Sequence[str], *, regression_pp: float = 2.0,
                      ebm_min_gain_pp: float = 0.0, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                      min_clusters: int = MIN_CLUSTERS) -> Comparison:
    changes = []
    for (la, a), (lz, z) in zip(zip(labels, summaries, strict=True), zip(labels[1:], summaries[1:], strict=True),
                                strict=False):
        changes.append(Change(before=la, after=lz, newly_solved=sorted(set(z.solved) - set(a.solved)),
                              newly_lost=sorted(set(a.solved) - set(z.solved)),
                              paired=paired_deltas(a, z, samples=samples, seed=seed, min_clusters=min_clusters)))
    prev = summaries[-2] if len(summaries) > 1 else None
    verdict, check = interval_verdict(summaries[-1], prev, regression_pp=regression_pp,
                                      ebm_min_gain_pp=ebm_min_gain_pp, samples=samples, seed=seed,
                                      min_clusters=min_clusters, paired=changes[-1].paired if changes else None)
    return Comparison(labels=list(labels), summaries=list(summaries), changes=changes, verdict=verdict, check=check)


def compare_dirs(dirs: Sequence[str | Path], **kw: float) -> Comparison:
    if not dirs:
        raise ValueError("compare needs at least one eval directory")
    summaries = [read_summary(d) for d in dirs]
    return compare_summaries(summaries, [str(d) for d in dirs], **kw)  # type: ignore[arg-type]


def _delta(change: Change | None, name: str) -> Delta | None:
    if change is None or change.paired is None:
        return None
    return next((d for d in change.paired.deltas if d.name == name), None)


def format_deltas(c: Comparison) -> str:
    """Per budget: pass@k of each output and the change from the one before (with its 95% paired interval
    when both outputs kept per-theorem outcomes), per theorem and per cluster; then the hard split and pass@1
    at the largest budget."""
    ss = c.summaries
    budgets = sorted({b.budget for s in ss for b in s.budgets})
    top = budgets[-1] if budgets else 0
    head = ["", *(f"iter {s.iteration}" + (" +EBM" if s.ebm else "") for s in ss)]
    table: list[list[str]] = []
    for b in budgets:
        table.append(_delta_row(c, f"pass@k, budget {b}", [s.rate_at(b) for s in ss], f"pass@k, budget {b}"))
        if any(_by_cluster(s, b) is not None for s in ss):
            table.append(_delta_row(c, f"  by cluster, {b}", [_by_cluster(s, b) for s in ss],
                                    f"pass@k by cluster, budget {b}"))
    table.append(_delta_row(c, f"hard split, {top}", [s.hard_rate_at(top) for s in ss], f"hard split, budget {top}"))
    if any(s.hard_by_cluster is not None for s in ss):
        table.append(_delta_row(c, f"  hard by cluster, {top}",
                                [s.hard_by_cluster.value if s.hard_by_cluster else None for s in ss],
                                f"hard split by cluster, budget {top}"))
    table.append(_delta_row(c, f"pass@1, budget {top}",
                            [_pass1_at(s, top) for s in ss],
                            f"pass@1 (mean per attempt), budget {top}"))
    table.append(_delta_row(c, "beyond automation", [s.beyond_count / s.theorems if s.theorems else 0.0 for s in ss]))
    table.append(["k (attempts)", *(str(s.pass_k) for s in ss)])
    table.append(["theorems / clusters", *(f"{s.theorems} / {s.clusters or '-'}" for s in ss)])
    rows = _aligned(head, table)
    if any(ch.paired is not None for ch in c.changes):
        rows.append("(changes: after - before on the theorems both hold, with a 95% paired cluster-bootstrap "
                    "interval; without an interval: a plain difference of the rates)")
    return "\n".join(rows)


def _delta_row(c: Comparison, name: str, vals: Sequence[float | None], key: str | None = None) -> list[str]:
    """A row of `format_deltas`: each output's value, after the first with its change from the value before
    (the paired change named ``key`` where there is one, else the plain difference)."""
    cells, prev = [name], None
    for i, v in enumerate(vals):
        if v is None:
            cells.append("-")
        elif prev is None or i == 0:
            cells.append(f"{100 * v:.1f}%")
        else:
            d = _delta(c.changes[i - 1], key) if key else None
            cells.append(f"{100 * v:.1f}% ({d.change.pp()})" if d is not None
                         else f"{100 * v:.1f}% ({100 * (v - prev):+.1f})")
        prev = v if v is not None else prev
    return cells


def _pass1_at(s: EvalSummary, budget: int) -> float | None:
    return next((b.pass1 for b in s.budgets if b.budget == budget), None)


def _by_cluster(s: EvalSummary, b: int) -> float | None:
    x = next((x.all_by_cluster for x in s.budgets if x.budget == b), None)
    return x.value if x is not None else None


def _aligned(head: list[str], table: list[list[str]]) -> list[str]:
    """The rows with the first column left-aligned and the others right-aligned, each to its widest cell."""
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(len(head))]
    return [f"{r[0]:<{widths[0]}}" + "".join(f"{x:>{w + 2}}" for x, w in zip(r[1:], widths[1:], strict=True))
            for r in [head, *table]]


def format_changes(c: Comparison) -> list[str]:
    """Each change between consecutive outputs with its interval, one line per statistic."""
    out = []
    for ch in c.changes:
        if ch.paired is None:
            out.append(f"{ch.before} -> {ch.after}: no per-theorem outcomes in both summaries: no intervals")
            continue
        out.append(f"{ch.before} -> {ch.after}: {ch.paired.describe()}")
        out += [f"  {d.describe()}" + ("" if d.decides else " (shown, not deciding)") for d in ch.paired.deltas]
    return out


def format_compare(c: Comparison) -> str:
    out = ["Outputs: " + ", ".join(f"[{i}] {lbl}" for i, lbl in enumerate(c.labels)), "", format_deltas(c), "",
           format_comparison(c.summaries), ""]
    if c.changes:
        out += [*format_changes(c), ""]
    for ch in c.changes:
        out.append(f"{ch.before} -> {ch.after}: newly solved {len(ch.newly_solved)}"
                   + (f" ({', '.join(ch.newly_solved[:12])}{' ...' if len(ch.newly_solved) > 12 else ''})"
                      if ch.newly_solved else "")
                   + f"; newly lost {len(ch.newly_lost)}"
                   + (f" ({', '.join(ch.newly_lost[:12])}{' ...' if len(ch.newly_lost) > 12 else ''})"
                      if ch.newly_lost else ""))
    out.append("")
    out.append(f"go/no-go (decided on {PRIMARY_STATISTIC}): {c.verdict.summary()}")
    if c.check is not None:
        out += [f"  {n}" for n in c.check.notes if n.startswith(("decided on point estimates", "95% intervals"))]
    return "\n".join(out)


def format_compare_markdown(c: Comparison) -> str:
    """The changes as a markdown table (statistic, before, after, change with its 95% interval) and the
    verdict."""
    out = []
    for ch in c.changes:
        out += [f"#### `{ch.before}` -> `{ch.after}`", ""]
        if ch.paired is None:
            out += ["No per-theorem outcomes in both summaries: no intervals.", ""]
            continue
        out += [ch.paired.describe() + ".", "", "| statistic | before | after | change [95% interval] |",
                "|---|---:|---:|---:|"]
        out += [f"| {d.name}{'' if d.decides else ' (shown)'} | {100 * d.before:.1f}% | {100 * d.after:.1f}% | "
                f"{d.change.pp()} |" for d in ch.paired.deltas]
        out.append("")
    out.append(f"**go/no-go**: {c.verdict.summary()}")
    return "\n".join(out) + "\n"


def write_compare_plot(c: Comparison, out: str | Path) -> Path:
    return plot_summaries(c.summaries, out, title="solve rate against node budget, by iteration")
