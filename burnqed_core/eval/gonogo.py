"""Go / no-go over eval summaries: stop the loop when an iteration does not
improve on the one before, when the EBM shows no improvement over its
ablation, or when the solve rate plateaus or decreases.

A pure function: summaries in, a typed verdict with its reasons out. The
pipeline's asset checks call it; ``burnqed compare`` prints it.

The baselines are context, never a criterion: the decision is whether the
loop should go on (this iteration against the one before, the EBM against
its ablation), and a prover still below a baseline at an early iteration is
what the loop is there to improve. So "below the better automation baseline"
and "beats the best of (a), (b), (c)" (`best_baseline_reasons`: the prover's
paired change against the best baseline, `EvalSummary.best_baseline`, beats it
only when its 95% cluster-bootstrap interval lies above zero) are reported
as informational reasons and non-blocking figures.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.eval.summary import (
    MIN_CLUSTERS,
    PRIMARY_STATISTIC,
    BaselineChoice,
    EvalSummary,
    ebm_change_line,
)
from burnqed_core.verdict import CheckVerdict, Figure

Decision = Literal["go", "no-go"]


class Reason(BaseModel):
    model_config = ConfigDict(frozen=True)
    code: Literal["no_improvement", "regression", "ebm_no_gain", "below_automation", "first_iteration", "improved",
                  "policy_only", "best_baseline", "ebm_change", "too_few_clusters"]
    blocking: bool
    message: str


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)
    decision: Decision
    iteration: int
    reasons: list[Reason] = Field(default_factory=list)

    @property
    def go(self) -> bool:
        return self.decision == "go"

    def summary(self) -> str:
        return f"{self.decision.upper()} (iteration {self.iteration}): " + "; ".join(r.message for r in self.reasons)


def _pp(x: float) -> str:
    return f"{100 * x:+.1f}pp"


BEST_BASELINE_FIGURE = "lower bound vs the best baseline"


def primary_value(s: EvalSummary) -> float:
    """The primary statistic's point value (`PRIMARY_STATISTIC`): pass@1 by cluster at the largest budget; for a
    summary written before clusters, pass@1 per theorem there."""
    if s.primary is not None:
        return s.primary.value
    top = max((b.budget for b in s.budgets), default=None)
    return next((b.pass1 for b in s.budgets if b.budget == top), 0.0)


def _versus_best(choice: BaselineChoice, split: str, clusters: int) -> str:
    v = choice.deciding
    if v is None:
        return f"{split}: best baseline {choice.label} {choice.rate} (no interval: no per-theorem pairing)"
    beats = "beats" if v.change.low > 0 else "is below" if v.change.high < 0 else "does not beat"
    why = ("95% interval above zero" if v.change.low > 0 else "95% interval below zero" if v.change.high < 0
           else "95% interval reaches zero")
    stat = PRIMARY_STATISTIC if choice.versus_primary is not None else "pass@k"
    return (f"{split}: {beats} the best baseline {choice.label} on {stat}, {100 * v.after:.1f}% vs "
            f"{100 * v.before:.1f}%, {v.change.pp()} ({why}; {clusters} clusters)")


def best_baseline_reasons(current: EvalSummary) -> list[Reason]:
    """Whether the prover beats the best of the baselines (a), (b), (c), on all theorems and on the hard split
    (`EvalSummary.best_baseline`: beaten when the paired change's 95% interval lies above zero); informational,
    never blocking. Empty for a summary without a best baseline (written before it, or without baselines)."""
    parts = []
    if current.best_baseline is not None:
        parts.append(_versus_best(current.best_baseline, "all theorems", current.clusters))
    if current.best_baseline_hard is not None:
        parts.append(_versus_best(current.best_baseline_hard, "hard split", current.hard_clusters))
    if not parts:
        return []
    return [Reason(code="best_baseline", blocking=False, message="prover vs the best of (a), (b), (c): "
                   + "; ".join(parts))]


def go_no_go(
    current: EvalSummary,
    previous: EvalSummary | None = None,
    *,
    regression_pp: float = 2.0,
    ebm_min_gain_pp: float = 0.0,
) -> Verdict:
    """The point rule, on the primary statistic (`PRIMARY_STATISTIC`, `primary_value`): no-go when, against
    ``previous`` (the iteration before), it did not improve, or fell by more than ``regression_pp`` percentage
    points, or the set has fewer than `MIN_CLUSTERS` clusters (it decides nothing); or when the EBM
    (``current.without_ebm`` is its ablation) gains no more than ``ebm_min_gain_pp`` at any budget. The other
    rates (pass@k per budget, the hard split) are shown by `burnqed compare`, never deciding. Solving less than
    the better automation baseline is reported, not blocking, as is whether the prover beats the best of (a),
    (b), (c) with its interval above zero (`best_baseline_reasons`).

    The rates compared are the main variant's: policy + automation when the
    search adds automation candidates (what the system proves). The policy
    alone (``policy_only``) is reported beside them, not blocking: its change
    is what the learning did."""
    reasons = [_primary_reason(current, previous, regression_pp / 100, regression_pp)]
    reasons += _ebm_reasons(current, ebm_min_gain_pp)
    if current.policy_only is not None:
        po = current.policy_only
        msg = f"policy alone (no automation candidates): {100 * po.cumulative.rate:.1f}%, hard split " \
              f"{100 * po.cumulative_hard.rate:.1f}%"
        if previous is not None and previous.policy_only is not None:
            msg += (f" ({_pp(po.cumulative.rate - previous.policy_only.cumulative.rate)} vs iteration "
                    f"{previous.iteration})")
        reasons.append(Reason(code="policy_only", blocking=False, message=msg))
    best_auto = max(current.automation_baseline.rate, current.defaware_baseline.rate)
    if current.cumulative.rate < best_auto:
        reasons.append(Reason(code="below_automation", blocking=False,
                              message=f"solves {100 * current.cumulative.rate:.1f}%, below the better automation "
                                      f"baseline ({100 * best_auto:.1f}%)"))
    reasons += best_baseline_reasons(current)
    decision: Decision = "no-go" if any(r.blocking for r in reasons) else "go"
    return Verdict(decision=decision, iteration=current.iteration, reasons=reasons)


def _primary_reason(current: EvalSummary, previous: EvalSummary | None, tol: float, regression_pp: float) -> Reason:
    """The primary statistic against the previous iteration: first iteration, too few clusters, regression
    beyond ``tol``, no improvement, or improved."""
    if previous is None:
        return Reason(code="first_iteration", blocking=False, message="no previous iteration to compare with")
    delta = primary_value(current) - primary_value(previous)
    clusters = min(current.clusters, previous.clusters)
    if 0 < clusters < MIN_CLUSTERS:
        return Reason(code="too_few_clusters", blocking=True,
                      message=f"{clusters} clusters (fewer than {MIN_CLUSTERS}): the set decides "
                              f"nothing ({PRIMARY_STATISTIC} {_pp(delta)} vs iteration "
                              f"{previous.iteration}, shown)")
    if delta < -tol:
        return Reason(code="regression", blocking=True,
                      message=f"regression beyond {regression_pp:.1f}pp vs iteration "
                              f"{previous.iteration} ({PRIMARY_STATISTIC}: {_pp(delta)})")
    if delta <= 0:
        return Reason(code="no_improvement", blocking=True,
                      message=f"no improvement over iteration {previous.iteration} "
                              f"({PRIMARY_STATISTIC}: {_pp(delta)})")
    return Reason(code="improved", blocking=False,
                  message=f"improved over iteration {previous.iteration} ({PRIMARY_STATISTIC}: {_pp(delta)})")


def _ebm_reasons(current: EvalSummary, ebm_min_gain_pp: float) -> list[Reason]:
    """With an EBM ablation (``without_ebm``): no-go when the EBM gains no more than ``ebm_min_gain_pp`` at any
    budget; its paired change shown."""
    w = current.without_ebm
    if w is None:
        return []
    reasons = []
    gains = {b.budget: (current.rate_at(b.budget) or 0.0) - b.all.rate for b in w.budgets}
    if not any(g > ebm_min_gain_pp / 100 for g in gains.values()):
        reasons.append(Reason(code="ebm_no_gain", blocking=True,
                              message="the EBM gains nothing over the same eval without it ("
                                      + ", ".join(f"{b}: {_pp(g)}" for b, g in gains.items()) + ")"))
    if (line := ebm_change_line(current)) is not None:
        reasons.append(Reason(code="ebm_change", blocking=False, message=line))
    return reasons


def gonogo_verdict(
    current: EvalSummary,
    previous: EvalSummary | None = None,
    *,
    regression_pp: float = 2.0,
    ebm_min_gain_pp: float = 0.0,
) -> tuple[Verdict, CheckVerdict]:
    """`go_no_go` and the same decision as a `CheckVerdict` for the ``eval_report`` check: the change of the
    primary statistic against ``previous`` (a drop beyond ``regression_pp`` fails; it must be > 0: no
    improvement is a stop), the clusters it rests on, the EBM's best gain over its ablation, and the solve rate
    beside the better automation baseline and the lower bound of the prover's change against the best of (a),
    (b), (c) (both shown, never failing); rates and changes are fractions (0.01 = 1 point). Passes exactly
    when the verdict is go."""
    v = go_no_go(current, previous, regression_pp=regression_pp, ebm_min_gain_pp=ebm_min_gain_pp)
    figures: list[Figure] = []
    if previous is not None:
        was, now = primary_value(previous), primary_value(current)
        figures.append(Figure(name=f"change in {PRIMARY_STATISTIC}", value=now - was, op=">", threshold=0.0,
                              note=f"{100 * was:.1f}% -> {100 * now:.1f}% (the primary statistic; a drop beyond "
                                   f"{regression_pp:.1f}pp is a regression, no gain a stop)"))
        if current.clusters:
            figures.append(Figure(name="clusters", value=float(min(current.clusters, previous.clusters or
                                                                   current.clusters)),
                                  op=">=", threshold=float(MIN_CLUSTERS),
                                  note="a set with fewer decides nothing"))
    if current.without_ebm is not None:
        gains = [(current.rate_at(b.budget) or 0.0) - b.all.rate for b in current.without_ebm.budgets]
        figures.append(Figure(name="best EBM gain", value=max(gains, default=0.0), op=">",
                              threshold=ebm_min_gain_pp / 100, note="with EBM minus the same eval without it"))
    best_auto = max(current.automation_baseline.rate, current.defaware_baseline.rate)
    figures.append(Figure(name="solve rate", value=current.cumulative.rate, op=">=",
                          threshold=best_auto, blocking=False, note="vs the better automation baseline"))
    b = current.best_baseline
    if b is not None and (d := b.deciding) is not None:
        figures.append(Figure(name=BEST_BASELINE_FIGURE, value=d.change.low, op=">", threshold=0.0,
                              blocking=False, note=f"prover minus {b.label} ({d.name}): {d.change.pp()} (shown, "
                                                   "never failing)"))
    failures = [r.message for r in v.reasons if r.blocking]
    notes = [r.message for r in v.reasons if not r.blocking]
    cv = CheckVerdict(check="eval_report", figures=figures, failures=failures,
                      notes=[f"{v.decision.upper()} (iteration {v.iteration})", *notes])
    return v, cv
