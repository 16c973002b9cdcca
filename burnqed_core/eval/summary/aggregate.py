"""One variant's `EvalResult` rows into an `EvalSummary` (`summarize`), and an eval output's variants into the
main one with its ablations (`summarize_variants`), under one `SummaryOptions`."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.twins.similarity import SimilarityReport
from burnqed_core.eval.baselines.records import Baselines
from burnqed_core.eval.summary.bootstrap import cluster_rates
from burnqed_core.eval.summary.models import (
    CONFIDENCE,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    BudgetSummary,
    Estimate,
    EvalSummary,
    Rate,
    SubsetSummary,
    TheoremOutcome,
)
from burnqed_core.eval.summary.versus import baseline_fields, subset_summary
from burnqed_core.records import EvalResult

POLICY_SOURCES = frozenset({"policy"})


def has_policy_step(r: EvalResult) -> bool:
    """Whether the proof of ``r`` has a step only the policy proposed at its node (``policy``): a step that
    the automation candidates also held (``both``) is the policy repeating the automation, not beyond it."""
    return any(s in POLICY_SOURCES for s in r.proof_sources)


def has_both_step(r: EvalResult) -> bool:
    """Whether the proof of ``r`` has a step the policy proposed that the automation also proposed (``both``)."""
    return "both" in r.proof_sources


def _budget_estimates(outcomes: Sequence[TheoremOutcome], budgets: Sequence[int], samples: int, seed: int,
                      confidence: float) -> tuple[dict[int, dict[str, Estimate]], int, int]:
    """Per budget: pass@k, pass@1 and hard-split estimates (per theorem and per cluster); the cluster counts."""
    out: dict[int, dict[str, Estimate]] = {b: {} for b in budgets}
    if not outcomes or samples < 1 or not budgets:
        return out, len({o.cluster for o in outcomes}), len({o.cluster for o in outcomes if o.hard})
    kw = {"samples": samples, "seed": seed, "confidence": confidence}
    res = cluster_rates([o.cluster for o in outcomes],
                        [[float(o.solved(b)) for o in outcomes] for b in budgets]
                        + [[o.attempt_rate(b) for o in outcomes] for b in budgets], **kw)
    for i, b in enumerate(budgets):
        out[b]["all_ci"], out[b]["all_by_cluster"] = res[i]
        out[b]["pass1_ci"], out[b]["pass1_by_cluster"] = res[len(budgets) + i]
    hard = [o for o in outcomes if o.hard]
    for i, (per_theorem, per_cluster) in enumerate(cluster_rates(
            [o.cluster for o in hard], [[float(o.solved(b)) for o in hard] for b in budgets], **kw)):
        out[budgets[i]]["hard_ci"], out[budgets[i]]["hard_by_cluster"] = per_theorem, per_cluster
    return out, len({o.cluster for o in outcomes}), len({o.cluster for o in hard})


def outcomes_of(results: Sequence[EvalResult], names: Sequence[str], attempts: Sequence[int],
                hard: Callable[[str], bool | None]) -> list[TheoremOutcome]:
    """One `TheoremOutcome` per name: its cluster (the smallest non-empty ``cluster`` of its rows; the theorem
    itself when its rows have none: files written before the column), hardness, nodes to proof per attempt."""
    pos = {a: i for i, a in enumerate(attempts)}
    nodes: dict[str, list[int | None]] = {n: [None] * len(attempts) for n in names}
    cluster: dict[str, str] = {}
    for r in results:
        if r.cluster and (r.theorem not in cluster or r.cluster < cluster[r.theorem]):
            cluster[r.theorem] = r.cluster
        if r.proved and r.nodes_to_proof is not None and r.theorem in nodes:
            i = pos[r.attempt]
            cur = nodes[r.theorem][i]
            nodes[r.theorem][i] = r.nodes_to_proof if cur is None else min(cur, r.nodes_to_proof)
    return [TheoremOutcome(theorem=n, cluster=cluster.get(n, n), hard=hard(n), nodes=nodes[n]) for n in names]


class SummaryOptions(BaseModel):
    """What `summarize` and `summarize_variants` are asked for, besides the rows and the baselines."""

    model_config = ConfigDict(frozen=True)
    iteration: int
    benchmark: str
    budgets: tuple[int, ...] | None = Field(None, description="the node budgets reported (None or empty: the "
                                                                "rows' budgets)")
    earlier_solved: frozenset[str] | None = Field(None, description="theorems earlier iterations solved "
                                                                     "(``newly_solved``: the rest; None: none)")
    bootstrap_samples: int = Field(DEFAULT_SAMPLES, description="cluster-bootstrap resamples (0: no intervals)")
    bootstrap_seed: int = DEFAULT_SEED
    confidence: float = CONFIDENCE
    similarity: SimilarityReport | None = Field(None, description="the set against the training corpus (carried "
                                                                  "as is; the rates on the theorems with no "
                                                                  "near-twin of any kind are ``unseen``)")


def summarize(results: Sequence[EvalResult], baselines: Baselines | None, options: SummaryOptions) -> EvalSummary:
    """The summary of one variant's rows (all with the same ``ebm`` and ``search_automation``); the intervals by a
    cluster bootstrap of ``options.bootstrap_samples`` resamples (0: no intervals) seeded by
    ``options.bootstrap_seed``."""
    ebms = {(r.ebm, r.search_automation) for r in results}
    if len(ebms) > 1:
        raise ValueError(f"rows of several EBM or automation settings {sorted(ebms)}: use summarize_variants")
    names = sorted({r.theorem for r in results})
    budgets = sorted(set(options.budgets or {r.budget for r in results}))
    attempts = sorted({r.attempt for r in results}) or [0]

    def hard(n: str) -> bool | None:
        return baselines.hard(n) if baselines is not None else None

    hard_names = {n for n in names if hard(n)}
    easy_names = {n for n in names if hard(n) is False}
    outcomes = outcomes_of(results, names, attempts, hard)
    boot = (options.bootstrap_samples, options.bootstrap_seed, options.confidence)
    est, n_clusters, n_hard_clusters = _budget_estimates(outcomes, budgets, *boot)
    single = {n for n in names if baselines is not None and baselines.single.get(n) is not None}
    defaware = {n for n in names if baselines is not None and baselines.defaware.get(n) is not None}
    automation_rate = Rate(solved=len(single), total=len(names))
    defaware_rate = Rate(solved=len(defaware), total=len(names))
    extra, structural_at = baseline_fields(outcomes, baselines, budgets, automation_rate, defaware_rate, *boot) \
        if baselines is not None else ({}, {})
    top = max(budgets) if budgets else 0
    measured = {n for n in names if baselines is not None and baselines.measured(n)}
    return EvalSummary(
        iteration=options.iteration,
        benchmark=options.benchmark,
        **_variant_fields(results),
        theorems=len(names),
        pass_k=len(attempts),
        budgets=_budget_rows(results, names, attempts, budgets, (hard_names, easy_names), est, structural_at),
        automation_baseline=automation_rate,
        defaware_baseline=defaware_rate,
        either_baseline=Rate(solved=len(single | defaware), total=len(names)),
        hard_theorems=len(hard_names),
        unmeasured=len(names) - len(measured),
        **_solved_fields(results, top, names, hard_names, options.earlier_solved),
        **_error_fields(results),
        clusters=n_clusters,
        hard_clusters=n_hard_clusters,
        **_interval_fields(est.get(top, {}), options),
        outcomes=outcomes,
        similarity=options.similarity,
        unseen=_unseen(names, outcomes, baselines, top, options),
        **extra,  # type: ignore[arg-type]
    )


def _variant_fields(results: Sequence[EvalResult]) -> dict[str, object]:
    """The model, EBM and automation setting of the rows (their first row's)."""
    first = results[0] if results else None
    return {"model": first.model if first else "", "ebm": first.ebm if first else "",
            "automation": first.search_automation if first else False}


def _budget_rows(results: Sequence[EvalResult], names: Sequence[str], attempts: Sequence[int],
                 budgets: Sequence[int], split: tuple[set[str], set[str]], est: dict[int, dict[str, Estimate]],
                 structural_at: dict[int, Rate]) -> list[BudgetSummary]:
    """One `BudgetSummary` per budget; ``split``: the hard and the easy theorems."""
    hard_names, easy_names = split
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
            structural=structural_at.get(b),
            **est[b],
        ))
    return out


def _solved_fields(results: Sequence[EvalResult], top: int, names: Sequence[str], hard_names: set[str],
                   earlier_solved: frozenset[str] | None) -> dict[str, object]:
    """What was solved at the largest budget ``top``, the hard theorems beyond automation by the origin of their
    proofs' steps, and what is new since ``earlier_solved``."""
    proved = [r for r in results if r.proved_within(top)]
    solved_top = {r.theorem for r in proved}
    by_policy = {r.theorem for r in proved if has_policy_step(r)}
    by_both = {r.theorem for r in proved if has_both_step(r)} - by_policy
    by_premise = {r.theorem for r in proved if "premise" in r.proof_sources}
    hard_solved = solved_top & hard_names
    counted = [r.checks for r in results if r.checks]
    return {
        "cumulative": Rate(solved=len(solved_top), total=len(names)),
        "cumulative_hard": Rate(solved=len(hard_solved), total=len(hard_names)),
        "beyond_automation": sorted(hard_solved & by_policy),
        "beyond_by_both": sorted(hard_solved & by_both),
        "beyond_by_premise": sorted(hard_solved & by_premise),
        "checks_per_theorem": statistics.fmean(counted) if counted else None,
        "automation_only": sorted(hard_solved - by_policy - by_both),
        "solved": sorted(solved_top),
        "hard_names": sorted(hard_names),
        "newly_solved": sorted(solved_top - earlier_solved) if earlier_solved is not None else [],
    }


def _start_message(r: EvalResult) -> str:
    """The first line of a start error's message (at most 300 characters)."""
    if not (r.message or "").strip():
        return "no message recorded"
    return (r.message or "").strip().splitlines()[0][:300]


def _error_fields(results: Sequence[EvalResult]) -> dict[str, object]:
    """Timeouts, start errors (the first message of each theorem), infrastructure errors and search times."""
    starts: dict[str, str] = {}
    for r in results:
        if r.error == "start":
            starts.setdefault(r.theorem, _start_message(r))
    times = [r.time_s for r in results]
    return {
        "timeouts": sum(r.timeout for r in results),
        "start_errors": len(starts),
        "start_failures": dict(sorted(starts.items())),
        "infra_errors": len({r.theorem for r in results if r.error == "infra"}),
        "avg_time_s": statistics.fmean(times) if times else 0.0,
        "median_time_s": statistics.median(times) if times else 0.0,
    }


def _interval_fields(top_est: dict[str, Estimate], options: SummaryOptions) -> dict[str, object]:
    """The intervals at the largest budget, and how they were drawn."""
    return {
        "cumulative_ci": top_est.get("all_ci"),
        "cumulative_by_cluster": top_est.get("all_by_cluster"),
        "hard_ci": top_est.get("hard_ci"),
        "hard_by_cluster": top_est.get("hard_by_cluster"),
        "per_attempt": top_est.get("pass1_ci"),
        "per_attempt_by_cluster": top_est.get("pass1_by_cluster"),
        "bootstrap_samples": max(options.bootstrap_samples, 0) if top_est else 0,
        "bootstrap_seed": options.bootstrap_seed,
        "confidence": options.confidence,
    }


def _unseen(names: Sequence[str], outcomes: Sequence[TheoremOutcome], baselines: Baselines | None, top: int,
            options: SummaryOptions) -> SubsetSummary | None:
    """The rates on the theorems with no near-twin of any kind in the corpus; None without a similarity report."""
    if options.similarity is None:
        return None
    near = options.similarity.with_near_twin()
    return subset_summary("unseen (no near-twin of any kind in the corpus)", [n for n in names if n not in near],
                          outcomes, baselines, top, samples=options.bootstrap_samples, seed=options.bootstrap_seed,
                          confidence=options.confidence)


def summarize_variants(results: Iterable[EvalResult], baselines: Baselines | None,
                       options: SummaryOptions) -> EvalSummary:
    """The summary of an eval output: the main variant (with the EBM when
    there is one, with automation candidates when there are rows with them),
    the same without the EBM as its ``without_ebm`` ablation, and the same
    without automation as its ``policy_only`` (``similarity`` on each)."""
    rows = list(results)
    by_variant: dict[tuple[str, bool], list[EvalResult]] = {}
    for r in rows:
        by_variant.setdefault((r.ebm, r.search_automation), []).append(r)
    with_ebm = sorted({e for e, _ in by_variant if e})
    if len(with_ebm) > 1:
        raise ValueError(f"eval rows of several EBMs: {with_ebm}")
    if not by_variant:
        return summarize([], baselines, options)
    ebm = with_ebm[0] if with_ebm else ""
    auto = any(a for e, a in by_variant if e == ebm)

    def one(key: tuple[str, bool]) -> EvalSummary | None:
        return summarize(by_variant[key], baselines, options) if key in by_variant else None

    def side(key: tuple[str, bool]) -> EvalSummary | None:  # the report block once, on the main variant
        got = one(key)
        return got.model_copy(update={"similarity": None}) if got is not None else None

    main = one((ebm, auto))
    assert main is not None
    return main.model_copy(update={"without_ebm": side(("", auto)) if ebm else None,
                                   "policy_only": side((ebm, False)) if auto else None})
