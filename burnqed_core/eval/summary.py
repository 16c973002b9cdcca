"""Aggregate per-theorem `EvalResult` rows into solve rates (seed 003, 5.4/5.8).

Pure functions over records: no Lean, no model. ``automation`` maps a theorem
name to the single automation tactic that closes it alone (rfl, trivial,
decide, omega, simp, simp_all, grind), or None when none does (a "hard"
theorem); theorems absent from the map are "unmeasured".
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.records import EvalResult


class Rate(BaseModel):
    model_config = ConfigDict(frozen=True)
    solved: int
    total: int

    @property
    def rate(self) -> float:
        return self.solved / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.solved}/{self.total} ({100 * self.rate:.1f}%)"


class BudgetSummary(BaseModel):
    model_config = ConfigDict(frozen=True)
    budget: int
    all: Rate
    hard: Rate
    easy: Rate
    avg_nodes_proved: float = Field(0.0, description="mean nodes used by proved theorems")
    avg_time_s: float = 0.0
    median_time_s: float = 0.0
    start_errors: int = 0
    infra_errors: int = 0


class EvalSummary(BaseModel):
    """Solve rates of one iteration on one benchmark."""

    model_config = ConfigDict(frozen=True)
    iteration: int
    benchmark: str
    model: str = ""
    ebm: str = ""
    theorems: int
    budgets: list[BudgetSummary]
    cumulative: Rate = Field(description="proved at any budget")
    cumulative_hard: Rate
    automation_baseline: Rate = Field(description="closed by a single automation tactic alone")
    hard_theorems: int
    unmeasured: int = Field(0, description="theorems with no automation measurement")
    beyond_automation: list[str] = Field(default_factory=list,
                                         description="hard theorems the prover solved (automation cannot)")
    newly_solved: list[str] = Field(default_factory=list, description="solved now, by no earlier iteration")


def _is_hard(name: str, automation: Mapping[str, str | None] | None) -> bool | None:
    if automation is None or name not in automation:
        return None
    return automation[name] is None


def summarize(
    results: Sequence[EvalResult],
    automation: Mapping[str, str | None] | None,
    *,
    iteration: int,
    benchmark: str,
    earlier_solved: set[str] | None = None,
) -> EvalSummary:
    """Per-budget and cumulative rates; pass@k over attempts (a theorem counts
    as solved at a budget if any attempt proved it)."""
    names = sorted({r.theorem for r in results})
    hard_names = {n for n in names if _is_hard(n, automation)}
    easy_names = {n for n in names if _is_hard(n, automation) is False}
    budgets = []
    solved_any: set[str] = set()
    for budget in sorted({r.budget for r in results}):
        rows = [r for r in results if r.budget == budget]
        solved = {r.theorem for r in rows if r.proved}
        solved_any |= solved
        proved_rows = [r for r in rows if r.proved]
        times = [r.time_s for r in rows]
        total = len({r.theorem for r in rows})
        budgets.append(BudgetSummary(
            budget=budget,
            all=Rate(solved=len(solved), total=total),
            hard=Rate(solved=len(solved & hard_names), total=len(hard_names)),
            easy=Rate(solved=len(solved & easy_names), total=len(easy_names)),
            avg_nodes_proved=statistics.fmean(r.nodes_used for r in proved_rows) if proved_rows else 0.0,
            avg_time_s=statistics.fmean(times) if times else 0.0,
            median_time_s=statistics.median(times) if times else 0.0,
            start_errors=len({r.theorem for r in rows if r.error == "start"}),
            infra_errors=len({r.theorem for r in rows if r.error == "infra"}),
        ))
    auto_closed = sum(1 for n in names if _is_hard(n, automation) is False)
    measured = len(hard_names) + len(easy_names)
    first = results[0] if results else None
    return EvalSummary(
        iteration=iteration,
        benchmark=benchmark,
        model=first.model if first else "",
        ebm=first.ebm if first else "",
        theorems=len(names),
        budgets=budgets,
        cumulative=Rate(solved=len(solved_any), total=len(names)),
        cumulative_hard=Rate(solved=len(solved_any & hard_names), total=len(hard_names)),
        automation_baseline=Rate(solved=auto_closed, total=len(names)),
        hard_theorems=len(hard_names),
        unmeasured=len(names) - measured,
        beyond_automation=sorted(solved_any & hard_names),
        newly_solved=sorted(solved_any - earlier_solved) if earlier_solved is not None else [],
    )
