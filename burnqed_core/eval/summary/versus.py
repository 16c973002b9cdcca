"""The baselines beside the prover: baseline (c)'s rates and intervals, the best baseline on all theorems and
on the hard split, and the prover's paired changes against each (`BaselineChoice`); a subset's rates with the
baselines on it (`subset_summary`)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from burnqed_core.eval.baselines import Baselines
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


def baseline_fields(outcomes: Sequence[TheoremOutcome], baselines: Baselines, budgets: Sequence[int],
                     automation: Rate, defaware: Rate, samples: int, seed: int,
                     confidence: float) -> tuple[dict[str, object], dict[int, Rate]]:
    """The summary's baseline (c) fields and best baselines, and (c)'s rate per budget (up to its own)."""
    top = max(budgets) if budgets else 0
    kw = {"samples": samples, "seed": seed, "confidence": confidence}
    out: dict[str, object] = {}
    per_budget: dict[int, Rate] = {}
    hard = [o for o in outcomes if o.hard]
    rates: dict[BaselineName, Rate] = {"a": automation, "b": defaware}
    hard_rates: dict[BaselineName, Rate] = {}
    s = baselines.structural
    if s is not None:
        within = min(top, s.budget) if s.budget else top
        measured = [o for o in outcomes if s.measured(o.theorem)]
        m_hard = [o for o in measured if o.hard]
        per_budget = {b: Rate(solved=sum(s.proved(o.theorem, b) for o in measured), total=len(measured))
                      for b in budgets if b <= s.budget}
        rates["c"] = Rate(solved=sum(s.proved(o.theorem, within) for o in measured), total=len(measured))
        out |= {"structural_baseline": rates["c"], "structural_budget": s.budget,
                "structural_hard": Rate(solved=sum(s.proved(o.theorem, within) for o in m_hard), total=len(m_hard))}
        if outcomes:
            out["versus_structural"] = _versus("c", rates["c"], outcomes, _closed_by(baselines, "c", top), top,
                                               samples, seed, confidence)
        if samples >= 1:
            for units, prefix in ((measured, "structural"), (m_hard, "structural_hard")):
                res = cluster_rates([o.cluster for o in units],
                                    [[float(s.proved(o.theorem, within)) for o in units],
                                     [s.attempt_rate(o.theorem, within) for o in units]], **kw)  # type: ignore[arg-type]
                if res:
                    out[f"{prefix}_ci"], out[f"{prefix}_by_cluster"] = res[0]
                    if prefix == "structural":
                        out["structural_pass1"], out["structural_pass1_by_cluster"] = res[1]
        if hard:
            for which in ("a", "b"):
                closed = _closed_by(baselines, which, top)
                hard_rates[which] = Rate(solved=sum(bool(v and v[0]) for o in hard if (v := closed(o.theorem))),
                                         total=len(hard))
            hard_rates["c"] = out["structural_hard"]  # type: ignore[assignment]
        if s.checks:
            out["structural_checks"] = statistics.fmean(s.checks.values())
    sr = baselines.structural_retrieval
    if sr is not None:
        within = min(top, sr.budget) if sr.budget else top
        measured_r = [o for o in outcomes if sr.measured(o.theorem)]
        rates["r"] = Rate(solved=sum(sr.proved(o.theorem, within) for o in measured_r), total=len(measured_r))
        out["retrieval_baseline"] = rates["r"]
        if sr.checks:
            out["retrieval_checks"] = statistics.fmean(sr.checks.values())
        if outcomes:
            out["versus_retrieval"] = _versus("r", rates["r"], outcomes, _closed_by(baselines, "r", top), top,
                                              samples, seed, confidence)
        if hard:
            hard_rates["r"] = Rate(solved=sum(sr.proved(o.theorem, within) for o in hard if sr.measured(o.theorem)),
                                   total=sum(sr.measured(o.theorem) for o in hard))
    if outcomes and (baselines.single or baselines.defaware or s is not None):
        which = _best({k: _pass1_rate(_closed_by(baselines, k, top), outcomes) for k in rates})
        out["best_baseline"] = _versus(which, rates[which], outcomes, _closed_by(baselines, which, top), top,
                                       samples, seed, confidence)
    if hard_rates:
        which = _best({k: _pass1_rate(_closed_by(baselines, k, top), hard) for k in hard_rates})
        out["best_baseline_hard"] = _versus(which, hard_rates[which], hard, _closed_by(baselines, which, top), top,
                                            samples, seed, confidence)
    return out, per_budget


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

