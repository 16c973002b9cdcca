"""Aggregate per-search `EvalResult` rows into solve rates (seed 003, 5.4/5.8).

Pure functions over records: no Lean, no model. A theorem is solved at node
budget B with pass@k when any of its k attempts found a proof with
``nodes_to_proof <= B`` (one search per attempt at the largest budget, so the
curve is monotone in B by construction). ``pass@1`` is the mean over the
attempts of the single-attempt solve rate. Hard theorems are those neither
automation baseline closes (`burnqed_core.eval.baselines`); "beyond
automation" lists the hard theorems the prover solved with at least one step
the policy proposed (`EvalResult.proof_sources`: ``policy`` or ``both``); a
hard theorem whose every proof is automation candidates alone is listed apart
(``automation_only``), as is one whose proof's origins were not recorded.

An eval output holds up to three variants (`burnqed_core.eval.run.variants`):
the main one (policy + automation when the search adds automation
candidates, with the EBM when there is one), its EBM ablation
(``without_ebm``) and the policy alone (``policy_only``: no automation
candidates). The main figures (cumulative rate, go/no-go) are the main
variant's; the policy-only ones are reported beside them so that what the
automation closes is never mistaken for learning.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.eval.baselines import Baselines
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
    all: Rate = Field(description="pass@k: solved by any attempt within the budget")
    hard: Rate
    easy: Rate
    pass1: float = Field(0.0, description="mean over attempts of the single-attempt solve rate")
    avg_nodes_proved: float = Field(0.0, description="mean nodes to proof of the proofs within the budget")


class EvalSummary(BaseModel):
    """Solve rates of one iteration (one EBM setting) on one benchmark."""

    model_config = ConfigDict(frozen=True)
    iteration: int
    benchmark: str
    model: str = ""
    ebm: str = ""
    automation: bool = Field(False, description="the search added automation candidates to the policy's samples")
    theorems: int
    pass_k: int = 1
    budgets: list[BudgetSummary]
    cumulative: Rate = Field(description="pass@k at the largest budget (= at any budget)")
    cumulative_hard: Rate
    automation_baseline: Rate = Field(description="baseline (a): closed by a single automation tactic alone")
    defaware_baseline: Rate = Field(Rate(solved=0, total=0), description="baseline (b): definition-aware automation")
    either_baseline: Rate = Field(Rate(solved=0, total=0), description="closed by (a) or (b)")
    hard_theorems: int = Field(description="closed by neither baseline")
    unmeasured: int = Field(0, description="theorems with no baseline measurement")
    beyond_automation: list[str] = Field(default_factory=list,
                                         description="hard theorems (neither baseline closes them) solved by a "
                                                     "proof with at least one step the policy proposed")
    automation_only: list[str] = Field(default_factory=list,
                                       description="hard theorems solved only by proofs made of automation "
                                                   "candidates the policy did not propose (or of unrecorded origin)")
    solved: list[str] = Field(default_factory=list, description="theorems solved (pass@k, largest budget)")
    hard_names: list[str] = Field(default_factory=list)
    newly_solved: list[str] = Field(default_factory=list, description="solved now, by no earlier iteration")
    timeouts: int = Field(0, description="searches stopped by the per-theorem time cap")
    start_errors: int = 0
    infra_errors: int = 0
    avg_time_s: float = 0.0
    median_time_s: float = 0.0
    without_ebm: EvalSummary | None = Field(None, description="the same eval without the EBM (ablation)")
    policy_only: EvalSummary | None = Field(None, description="the same eval without the automation candidates")

    @property
    def beyond_count(self) -> int:
        return len(self.beyond_automation)

    def rate_at(self, budget: int) -> float | None:
        return next((b.all.rate for b in self.budgets if b.budget == budget), None)

    def hard_rate_at(self, budget: int) -> float | None:
        return next((b.hard.rate for b in self.budgets if b.budget == budget), None)


POLICY_SOURCES = frozenset({"policy", "both"})


def has_policy_step(r: EvalResult) -> bool:
    """Whether the proof of ``r`` has a step the policy proposed (a step the
    automation candidates also held counts: the policy proposed it)."""
    return any(s in POLICY_SOURCES for s in r.proof_sources)


def summarize(
    results: Sequence[EvalResult],
    baselines: Baselines | None,
    *,
    iteration: int,
    benchmark: str,
    budgets: Sequence[int] | None = None,
    earlier_solved: set[str] | None = None,
) -> EvalSummary:
    """The summary of one variant's rows (all with the same ``ebm`` and ``search_automation``)."""
    ebms = {(r.ebm, r.search_automation) for r in results}
    if len(ebms) > 1:
        raise ValueError(f"rows of several EBM or automation settings {sorted(ebms)}: use summarize_variants")
    names = sorted({r.theorem for r in results})
    budgets = sorted(set(budgets or {r.budget for r in results}))
    attempts = sorted({r.attempt for r in results}) or [0]

    def hard(n: str) -> bool | None:
        return baselines.hard(n) if baselines is not None else None

    hard_names = {n for n in names if hard(n)}
    easy_names = {n for n in names if hard(n) is False}
    out = []
    for b in budgets:
        within = [r for r in results if r.proved_within(b)]
        solved = {r.theorem for r in within}
        per_attempt = [len({r.theorem for r in within if r.attempt == a}) / len(names) if names else 0.0
                       for a in attempts]
        out.append(BudgetSummary(
            budget=b,
            all=Rate(solved=len(solved), total=len(names)),
            hard=Rate(solved=len(solved & hard_names), total=len(hard_names)),
            easy=Rate(solved=len(solved & easy_names), total=len(easy_names)),
            pass1=statistics.fmean(per_attempt),
            avg_nodes_proved=statistics.fmean(r.nodes_to_proof or 0 for r in within) if within else 0.0,
        ))
    top = max(budgets) if budgets else 0
    solved_top = {r.theorem for r in results if r.proved_within(top)}
    by_policy = {r.theorem for r in results if r.proved_within(top) and has_policy_step(r)}
    single = {n for n in names if baselines is not None and baselines.single.get(n) is not None}
    defaware = {n for n in names if baselines is not None and baselines.defaware.get(n) is not None}
    measured = {n for n in names if baselines is not None and baselines.measured(n)}
    times = [r.time_s for r in results]
    first = results[0] if results else None
    return EvalSummary(
        iteration=iteration,
        benchmark=benchmark,
        model=first.model if first else "",
        ebm=first.ebm if first else "",
        automation=first.search_automation if first else False,
        theorems=len(names),
        pass_k=len(attempts),
        budgets=out,
        cumulative=Rate(solved=len(solved_top), total=len(names)),
        cumulative_hard=Rate(solved=len(solved_top & hard_names), total=len(hard_names)),
        automation_baseline=Rate(solved=len(single), total=len(names)),
        defaware_baseline=Rate(solved=len(defaware), total=len(names)),
        either_baseline=Rate(solved=len(single | defaware), total=len(names)),
        hard_theorems=len(hard_names),
        unmeasured=len(names) - len(measured),
        beyond_automation=sorted(solved_top & hard_names & by_policy),
        automation_only=sorted((solved_top & hard_names) - by_policy),
        solved=sorted(solved_top),
        hard_names=sorted(hard_names),
        newly_solved=sorted(solved_top - earlier_solved) if earlier_solved is not None else [],
        timeouts=sum(r.timeout for r in results),
        start_errors=len({r.theorem for r in results if r.error == "start"}),
        infra_errors=len({r.theorem for r in results if r.error == "infra"}),
        avg_time_s=statistics.fmean(times) if times else 0.0,
        median_time_s=statistics.median(times) if times else 0.0,
    )


def summarize_variants(
    results: Iterable[EvalResult],
    baselines: Baselines | None,
    *,
    iteration: int,
    benchmark: str,
    budgets: Sequence[int] | None = None,
    earlier_solved: set[str] | None = None,
) -> EvalSummary:
    """The summary of an eval output: the main variant (with the EBM when
    there is one, with automation candidates when there are rows with them),
    the same without the EBM as its ``without_ebm`` ablation, and the same
    without automation as its ``policy_only``."""
    rows = list(results)
    by_variant: dict[tuple[str, bool], list[EvalResult]] = {}
    for r in rows:
        by_variant.setdefault((r.ebm, r.search_automation), []).append(r)
    with_ebm = sorted({e for e, _ in by_variant if e})
    if len(with_ebm) > 1:
        raise ValueError(f"eval rows of several EBMs: {with_ebm}")
    kw = {"iteration": iteration, "benchmark": benchmark, "budgets": budgets, "earlier_solved": earlier_solved}
    if not by_variant:
        return summarize([], baselines, **kw)  # type: ignore[arg-type]
    ebm = with_ebm[0] if with_ebm else ""
    auto = any(a for e, a in by_variant if e == ebm)

    def one(key: tuple[str, bool]) -> EvalSummary | None:
        return summarize(by_variant[key], baselines, **kw) if key in by_variant else None  # type: ignore[arg-type]

    main = one((ebm, auto))
    assert main is not None
    return main.model_copy(update={"without_ebm": one(("", auto)) if ebm else None,
                                   "policy_only": one((ebm, False)) if auto else None})
