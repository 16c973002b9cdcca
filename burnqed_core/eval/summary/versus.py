"""The baselines beside the prover: baseline (c)'s rates and intervals, the best baseline on all theorems and
on the hard split, and the prover's paired changes against each (`BaselineChoice`); a subset's rates with the
baselines on it (`subset_summary`)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from burnqed_core.eval.baselines.records import Baselines
from burnqed_core.eval.summary.bootstrap import cluster_rates
from burnqed_core.eval.summary.models import (
    BASELINE_LABELS,
    CONFIDENCE,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    BaselineChoice,
    BaselineName,
    Delta,
    Rate,
    SubsetSummary,
    TheoremOutcome,
)

Closed = Callable[[str], "tuple[float, float] | None"]
"""A baseline on a theorem: (pass@k, pass@1), None when it did not measure it."""


def _closed_by(baselines: Baselines, which: str, within: int) -> Closed:
    """Baseline ``which`` ('a', 'b', 'c') on a theorem: (pass@k, pass@1) as 0/1 and a fraction, None when it did
    not measure it; (c) within ``within`` nodes, pass@k over its attempts and pass@1 their mean (a single tactic:
    both its one result)."""
    if which in ("c", "r"):
        s = baselines.structural if which == "c" else baselines.structural_retrieval
        assert s is not None
        return lambda n: (float(s.proved(n, within)), s.attempt_rate(n, within)) if s.measured(n) else None
    tactics = baselines.single if which == "a" else baselines.defaware

    def single(n: str) -> tuple[float, float] | None:
        if n not in tactics:
            return None
        v = float(tactics[n] is not None)
        return v, v

    return single


def _versus(which: BaselineName, rate: Rate, units: Sequence[TheoremOutcome], closed: Closed, top: int,
            samples: int, seed: int, confidence: float) -> BaselineChoice:
    """``which`` with the prover's paired changes against it on ``units`` (the theorems it measured): at pass@k
    (the prover's k searches against the baseline's, (c) searched as often) and on the primary statistic
    (pass@1, mean over attempts on both sides), per theorem and per cluster."""
    units = [o for o in units if closed(o.theorem) is not None]
    if not units:
        return BaselineChoice(name=which, rate=rate)
    vals = [closed(o.theorem) for o in units]
    base_k = [v[0] for v in vals if v is not None]
    base_1 = [v[1] for v in vals if v is not None]
    pass1 = statistics.fmean(base_1)
    if samples < 1:
        return BaselineChoice(name=which, rate=rate, pass1=pass1)
    prover_k = [float(o.solved(top)) for o in units]
    prover_1 = [o.attempt_rate(top) for o in units]
    ests = cluster_rates([o.cluster for o in units],
                         [base_k, prover_k, [p - b for p, b in zip(prover_k, base_k, strict=True)],
                          base_1, prover_1, [p - b for p, b in zip(prover_1, base_1, strict=True)]],
                         samples=samples, seed=seed, confidence=confidence)
    label = BASELINE_LABELS[which]

    def delta(i: int, by_cluster: int, stat: str) -> Delta:
        return Delta(name=f"prover vs baseline {label}, {stat}{' by cluster' if by_cluster else ''}, budget {top}",
                     before=ests[i][by_cluster].value, after=ests[i + 1][by_cluster].value,
                     change=ests[i + 2][by_cluster], by_cluster=bool(by_cluster), decides=False)

    return BaselineChoice(name=which, rate=rate, pass1=pass1, versus=delta(0, 0, "pass@k"),
                          versus_by_cluster=delta(0, 1, "pass@k"), versus_pass1=delta(3, 0, "pass@1"),
                          versus_primary=delta(3, 1, "pass@1"))


def _best(rates: dict[BaselineName, float]) -> BaselineName:
    """The baseline of the highest rate; at a tie the later of (a), (b), (c), (c) with retrieval."""
    order = ["a", "b", "c", "r"]
    return max(rates, key=lambda k: (rates[k], order.index(k)))


def _pass1_rate(closed: Closed, units: Sequence[TheoremOutcome]) -> float:
    vals = [v[1] for o in units if (v := closed(o.theorem)) is not None]
    return statistics.fmean(vals) if vals else 0.0


Bootstrap = tuple[int, int, float]
"""(samples, seed, confidence) of a cluster bootstrap."""


def baseline_fields(outcomes: Sequence[TheoremOutcome], baselines: Baselines, budgets: Sequence[int],
                    automation: Rate, defaware: Rate, samples: int, seed: int,
                    confidence: float) -> tuple[dict[str, object], dict[int, Rate]]:
    """The summary's baseline (c) fields and best baselines, and (c)'s rate per budget (up to its own)."""
    top = max(budgets) if budgets else 0
    boot: Bootstrap = (samples, seed, confidence)
    out: dict[str, object] = {}
    per_budget: dict[int, Rate] = {}
    hard = [o for o in outcomes if o.hard]
    rates: dict[BaselineName, Rate] = {"a": automation, "b": defaware}
    hard_rates: dict[BaselineName, Rate] = {}
    if baselines.structural is not None:
        fields, per_budget = _structural_fields(outcomes, baselines, budgets, top, boot)
        out |= fields
        rates["c"] = fields["structural_baseline"]  # type: ignore[assignment]
        if hard:
            for which in ("a", "b"):
                closed = _closed_by(baselines, which, top)
                hard_rates[which] = Rate(solved=sum(bool(v and v[0]) for o in hard if (v := closed(o.theorem))),
                                         total=len(hard))
            hard_rates["c"] = fields["structural_hard"]  # type: ignore[assignment]
    sr = baselines.structural_retrieval
    if sr is not None:
        out |= _retrieval_fields(outcomes, baselines, top, boot)
        rates["r"] = out["retrieval_baseline"]  # type: ignore[assignment]
        if hard:
            within = min(top, sr.budget) if sr.budget else top
            hard_rates["r"] = Rate(solved=sum(sr.proved(o.theorem, within) for o in hard if sr.measured(o.theorem)),
                                   total=sum(sr.measured(o.theorem) for o in hard))
    if outcomes and (baselines.single or baselines.defaware or baselines.structural is not None):
        out["best_baseline"] = _best_choice(rates, outcomes, baselines, top, boot)
    if hard_rates:
        out["best_baseline_hard"] = _best_choice(hard_rates, hard, baselines, top, boot)
    return out, per_budget


def _structural_fields(outcomes: Sequence[TheoremOutcome], baselines: Baselines, budgets: Sequence[int], top: int,
                       boot: Bootstrap) -> tuple[dict[str, object], dict[int, Rate]]:
    """Baseline (c) on the theorems it measured: its rate (within its own budget), on the hard split, with
    their intervals and its pass@1; the prover against it; its checks; its rate per budget up to its own."""
    s = baselines.structural
    assert s is not None
    samples, seed, confidence = boot
    within = min(top, s.budget) if s.budget else top
    measured = [o for o in outcomes if s.measured(o.theorem)]
    m_hard = [o for o in measured if o.hard]
    per_budget = {b: Rate(solved=sum(s.proved(o.theorem, b) for o in measured), total=len(measured))
                  for b in budgets if b <= s.budget}
    rate = Rate(solved=sum(s.proved(o.theorem, within) for o in measured), total=len(measured))
    out: dict[str, object] = {
        "structural_baseline": rate, "structural_budget": s.budget,
        "structural_hard": Rate(solved=sum(s.proved(o.theorem, within) for o in m_hard), total=len(m_hard))}
    if outcomes:
        out["versus_structural"] = _versus("c", rate, outcomes, _closed_by(baselines, "c", top), top, *boot)
    if samples >= 1:
        for units, prefix in ((measured, "structural"), (m_hard, "structural_hard")):
            res = cluster_rates([o.cluster for o in units],
                                [[float(s.proved(o.theorem, within)) for o in units],
                                 [s.attempt_rate(o.theorem, within) for o in units]],
                                samples=samples, seed=seed, confidence=confidence)
            if res:
                out[f"{prefix}_ci"], out[f"{prefix}_by_cluster"] = res[0]
                if prefix == "structural":
                    out["structural_pass1"], out["structural_pass1_by_cluster"] = res[1]
    if s.checks:
        out["structural_checks"] = statistics.fmean(s.checks.values())
    return out, per_budget


def _retrieval_fields(outcomes: Sequence[TheoremOutcome], baselines: Baselines, top: int,
                      boot: Bootstrap) -> dict[str, object]:
    """Baseline (c) with retrieval: its rate on the theorems it measured, its checks, the prover against it."""
    sr = baselines.structural_retrieval
    assert sr is not None
    within = min(top, sr.budget) if sr.budget else top
    measured = [o for o in outcomes if sr.measured(o.theorem)]
    rate = Rate(solved=sum(sr.proved(o.theorem, within) for o in measured), total=len(measured))
    out: dict[str, object] = {"retrieval_baseline": rate}
    if sr.checks:
        out["retrieval_checks"] = statistics.fmean(sr.checks.values())
    if outcomes:
        out["versus_retrieval"] = _versus("r", rate, outcomes, _closed_by(baselines, "r", top), top, *boot)
    return out


def _best_choice(rates: dict[BaselineName, Rate], units: Sequence[TheoremOutcome], baselines: Baselines, top: int,
                 boot: Bootstrap) -> BaselineChoice:
    """The baseline of the highest pass@1 on ``units`` among ``rates``, with the prover's changes against it."""
    which = _best({k: _pass1_rate(_closed_by(baselines, k, top), units) for k in rates})
    return _versus(which, rates[which], units, _closed_by(baselines, which, top), top, *boot)


def subset_summary(what: str, names: Sequence[str], outcomes: Sequence[TheoremOutcome], baselines: Baselines | None,
                   top: int, *, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = CONFIDENCE) -> SubsetSummary:
    """The rates of ``outcomes`` restricted to ``names`` (the unseen theorems), with the baselines on them."""
    wanted = set(names)
    units = [o for o in outcomes if o.theorem in wanted]
    solved = Rate(solved=sum(o.solved(top) for o in units), total=len(units))
    fields: dict[str, object] = {}
    if units and samples >= 1:
        res = cluster_rates([o.cluster for o in units], [[float(o.solved(top)) for o in units],
                                                        [o.attempt_rate(top) for o in units]],
                            samples=samples, seed=seed, confidence=confidence)
        (fields["pass_k"], fields["pass_k_by_cluster"]), (fields["pass1"], fields["pass1_by_cluster"]) = res
    rates: dict[str, Rate] = {}
    if baselines is not None and units:
        for which in ("a", "b", "c"):
            if which == "c" and baselines.structural is None:
                continue
            closed = _closed_by(baselines, which, top)
            vals = [v for o in units if (v := closed(o.theorem)) is not None]
            rates[which] = Rate(solved=int(sum(v[0] for v in vals)), total=len(vals))
        if baselines.structural is not None:
            choice = _versus("c", rates["c"], units, _closed_by(baselines, "c", top), top, samples, seed, confidence)
            fields |= {"structural_pass1": choice.pass1, "versus_structural_primary": choice.versus_primary,
                       "versus_structural": choice.versus}
    return SubsetSummary(what=what, theorems=sorted(o.theorem for o in units),
                         clusters=len({o.cluster for o in units}), solved=solved, baselines=rates,
                         **fields)  # type: ignore[arg-type]

