"""Decisions over training seeds: the seed-averaged paired change of the primary statistic, with an interval that
includes the seed variance.

One trained model is one draw: pre-training alone swings widely from one training seed to the next, so an
interval over the theorems of one run is conditional on that model. A profile's reported comparison (iteration
N against iteration 0) therefore runs the loop once per training seed of ``training.seeds`` (each in
`seed_work_dir`, with ``training.seed`` set to it: `seed_profile`; each run is an ordinary ``burnqed loop``, its
own Dagster run, no loop of ours around them) and `compare_seeds` reads the runs' eval outputs side by side:

* per seed ``s`` and theorem ``t`` on the theorems every run holds, the paired difference of the primary statistic's
  unit (`burnqed_core.eval.summary.PRIMARY_STATISTIC`: the theorem's per-attempt solve rate at the largest common
  budget), ``d[s][t] = after_s(t) - before_s(t)``;
* the statistic: the mean over seeds of the by-cluster mean of ``d[s]`` (each cluster weighs one);
* its 95% interval by a two-level bootstrap: each resample draws the clusters with replacement *and* the seeds
  with replacement, and recomputes the statistic on both draws (percentile interval, widened to hold the point),
  so that a change that one lucky model makes cannot look certain. With one seed it is the ordinary paired
  cluster bootstrap, and says that it rests on one model.

The verdict follows the single-run rule (`burnqed_core.eval.compare.interval_verdict`): improved when the interval
lies above zero, a regression when it lies wholly below ``-regression_pp``, no-go otherwise; fewer than
`MIN_CLUSTERS` clusters decide nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.config import Profile
from burnqed_core.errors import DataError
from burnqed_core.eval.summary import (
    CONFIDENCE,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    MIN_CLUSTERS,
    PRIMARY_STATISTIC,
    Estimate,
    EvalSummary,
    TheoremOutcome,
    joint_clusters,
)

SEED_DIR = "seed-{seed}"


def seed_work_dir(work_dir: str | Path, seed: int) -> Path:
    """Where the loop of training seed ``seed`` of a profile runs: ``<work_dir>/seed-<seed>``."""
    return Path(work_dir) / SEED_DIR.format(seed=seed)


def seed_profile(profile: Profile, seed: int) -> Profile:
    """``profile`` for training seed ``seed``: ``training.seed`` set to it and its own work directory
    (`seed_work_dir`); the data split, search selection and eval seeds stay the profile's, so the runs differ
    only in the trained models."""
    return profile.model_copy(update={
        "training": profile.training.model_copy(update={"seed": seed}),
        "paths": profile.paths.model_copy(update={"work_dir": seed_work_dir(profile.paths.work_dir, seed)})})


def training_seeds(profile: Profile) -> list[int]:
    """The profile's training seeds (``training.seeds``; none listed: its one ``training.seed``)."""
    return list(profile.training.seeds) or [profile.training.seed]


class SeedChange(BaseModel):
    """The seed-averaged paired change of the primary statistic between two groups of runs."""

    model_config = ConfigDict(frozen=True)
    statistic: str = PRIMARY_STATISTIC
    seeds: int
    theorems: int
    clusters: int
    budget: int
    before: float = Field(description="the statistic before, averaged over the seeds")
    after: float
    change: Estimate = Field(description="after - before averaged over the seeds, with its two-level bootstrap "
                                         "interval (clusters and seeds resampled)")
    per_seed: list[float] = Field(default_factory=list, description="each seed's change (by cluster)")
    seed_sd: float = Field(0.0, description="the standard deviation of the per-seed changes (0 for one seed)")
    samples: int = DEFAULT_SAMPLES
    seed: int = DEFAULT_SEED

    def describe(self) -> str:
        per = ", ".join(f"{100 * d:+.1f}" for d in self.per_seed)
        return (f"{self.statistic}, budget {self.budget}: {self.change.pp()} ({100 * self.before:.1f}% -> "
                f"{100 * self.after:.1f}%), mean over {self.seeds} training seed{'s' if self.seeds != 1 else ''} "
                f"(per seed {per} pp; sd {100 * self.seed_sd:.1f} pp); {self.theorems} theorems, {self.clusters} "
                f"clusters; interval: {self.samples} resamples of the clusters and the seeds, seed {self.seed}")


class SeedVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)
    decision: str
    reason: str
    change: SeedChange

    @property
    def go(self) -> bool:
        return self.decision == "go"


def seed_change(before: Sequence[EvalSummary], after: Sequence[EvalSummary], *, samples: int = DEFAULT_SAMPLES,
                seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE) -> SeedChange:
    """The seed-averaged paired change from ``before`` to ``after`` (one summary per training seed, in the same
    seed order on both sides), with its two-level bootstrap interval (the module docstring)."""
    import numpy as np

    outcomes, shared, top = _paired_outcomes(before, after)
    cl = joint_clusters(shared, *({n: a[n].cluster for n in shared} for a, _ in outcomes),
                        *({n: z[n].cluster for n in shared} for _, z in outcomes))
    names = sorted(set(cl))
    col = np.asarray([names.index(c) for c in cl])
    size = np.bincount(col, minlength=len(names)).astype(float)

    def per_cluster(values: list[float]) -> np.ndarray:
        return np.bincount(col, weights=np.asarray(values, dtype=float), minlength=len(names)) / size

    d = np.stack([per_cluster([z[n].attempt_rate(top) - a[n].attempt_rate(top) for n in shared])
                  for a, z in outcomes])  # (seeds, clusters)
    b0 = np.stack([per_cluster([a[n].attempt_rate(top) for n in shared]) for a, _ in outcomes])
    b1 = np.stack([per_cluster([z[n].attempt_rate(top) for n in shared]) for _, z in outcomes])
    per_seed = d.mean(axis=1)
    point = float(per_seed.mean())
    low, high = _two_level_interval(d, samples=samples, seed=seed, confidence=confidence)
    k, c = d.shape
    return SeedChange(seeds=k, theorems=len(shared), clusters=c, budget=top, before=float(b0.mean()),
                      after=float(b1.mean()), change=Estimate(value=point, low=float(min(low, point)),
                                                              high=float(max(high, point))),
                      per_seed=[float(x) for x in per_seed],
                      seed_sd=float(statistics.stdev(per_seed)) if k > 1 else 0.0, samples=samples, seed=seed)


Outcomes = dict[str, TheoremOutcome]


def _paired_outcomes(before: Sequence[EvalSummary], after: Sequence[EvalSummary],
                     ) -> tuple[list[tuple[Outcomes, Outcomes]], list[str], int]:
    """Per seed, both sides' outcomes by theorem; the theorems every run holds; the largest budget all share.
    Raises `DataError` for unpaired runs, runs without outcomes, or runs with no theorem or budget in common."""
    if not before or len(before) != len(after):
        raise DataError(f"a seed comparison needs one eval per training seed on each side (got {len(before)} and "
                        f"{len(after)})")
    outcomes = [({o.theorem: o for o in a.outcomes}, {o.theorem: o for o in z.outcomes})
                for a, z in zip(before, after, strict=True)]
    if any(not a or not z for a, z in outcomes):
        raise DataError("a summary without per-theorem outcomes (written before clusters) cannot be paired")
    shared = sorted(set.intersection(*(set(a) & set(z) for a, z in outcomes)))
    budgets = set.intersection(*({b.budget for b in s.budgets} for s in [*before, *after]))
    if not shared or not budgets:
        raise DataError("the runs share no theorem or no budget")
    return outcomes, shared, max(budgets)


def _two_level_interval(d: Any, *, samples: int, seed: int, confidence: float) -> tuple[float, float]:
    """The ``confidence`` percentile interval of the mean of ``d`` (seeds x clusters) over ``samples`` resamples
    of both the clusters and the seeds, with replacement (``numpy.random.default_rng(seed)``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    k, c = d.shape
    stats = np.empty(samples)
    for i in range(samples):
        wc = rng.multinomial(c, np.full(c, 1.0 / c)).astype(float)
        ws = rng.multinomial(k, np.full(k, 1.0 / k)).astype(float)
        stats[i] = float(ws @ (d @ wc) / wc.sum() / ws.sum())
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def seed_verdict(change: SeedChange, *, regression_pp: float = 2.0, min_clusters: int = MIN_CLUSTERS) -> SeedVerdict:
    """Go when the seed-averaged change's interval lies above zero; a regression when it lies wholly below
    ``-regression_pp``; no-go otherwise, and with fewer than ``min_clusters`` clusters (nothing decides)."""
    one = "" if change.seeds > 1 else " (one training seed: the interval is conditional on one trained model)"
    if change.clusters < min_clusters:
        return SeedVerdict(decision="no-go", change=change,
                           reason=f"{change.clusters} clusters (fewer than {min_clusters}): the set decides nothing")
    if change.change.high < -regression_pp / 100:
        return SeedVerdict(decision="no-go", change=change,
                           reason=f"regression beyond {regression_pp:.1f}pp, the whole 95% interval below it{one}")
    if change.change.low > 0:
        return SeedVerdict(decision="go", change=change, reason=f"improved, 95% interval above zero{one}")
    return SeedVerdict(decision="no-go", change=change, reason=f"no improvement with its 95% interval above zero{one}")


def compare_seed_dirs(before: Sequence[str | Path], after: Sequence[str | Path], **kw: float) -> SeedVerdict:
    """`seed_verdict` of the eval outputs ``before`` and ``after`` (one directory per training seed, the same
    seed order on both sides)."""
    from burnqed_core.eval.report import read_summary

    regression_pp = float(kw.pop("regression_pp", 2.0))
    change = seed_change([read_summary(p) for p in before], [read_summary(p) for p in after])
    return seed_verdict(change, regression_pp=regression_pp, **kw)  # type: ignore[arg-type]


def format_seed_verdict(v: SeedVerdict, before: Sequence[str | Path], after: Sequence[str | Path]) -> str:
    lines = ["Training seeds (one eval output per seed, paired in this order):"]
    lines += [f"  seed run {i}: {a} -> {z}" for i, (a, z) in enumerate(zip(before, after, strict=True))]
    lines += ["", v.change.describe(), "", f"go/no-go: {v.decision.upper()}: {v.reason}"]
    return "\n".join(lines)
