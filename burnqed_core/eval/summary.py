"""Aggregate per-search `EvalResult` rows into solve rates (seed 003, 5.4/5.8).

Pure functions over records: no Lean, no model. A theorem is solved at node
budget B with pass@k when any of its k attempts found a proof with
``nodes_to_proof <= B`` (one search per attempt at the largest budget, so the
curve is monotone in B by construction). ``pass@1`` is the mean over the
attempts of the single-attempt solve rate. Hard theorems are those neither
automation baseline closes (`burnqed_core.eval.baselines`); "beyond
automation" lists the hard theorems the prover solved with a proof that has a
step only the policy proposed at that node (`EvalResult.proof_sources`:
``policy``); a hard theorem whose proofs' policy steps were all also
automation candidates at their node (``both``: the policy repeated what the
automation proposes) is listed apart (``beyond_by_both``), and one whose every
proof is automation candidates alone, or of unrecorded origin, apart again
(``automation_only``).

The primary statistic (`PRIMARY_STATISTIC`), declared here once: **pass@1 by
cluster at the largest budget** (the mean over attempts of the per-attempt
solve rate, each cluster weighing one). `burnqed compare` and the ``go_no_go``
check decide on its paired change alone (`paired_deltas` marks it
``decides``), on all theorems and, when the hard split has at least
`MIN_CLUSTERS` clusters, on the hard split; every other change is shown. A
set with fewer than `MIN_CLUSTERS` clusters decides nothing.

An eval output holds up to three variants (`burnqed_core.eval.run.variants`):
the main one (policy + automation when the search adds automation
candidates, with the EBM when there is one), its EBM ablation
(``without_ebm``) and the policy alone (``policy_only``: no automation
candidates). The main figures (cumulative rate, go/no-go) are the main
variant's; the policy-only ones are reported beside them so that what the
automation closes is never mistaken for learning.

Clusters and intervals. Theorems are not independent: a generated benchmark
holds several instances of one template, and twins (`burnqed_core.data.clusters`).
Each row carries its theorem's cluster (`EvalResult.cluster`; rows written
before the column fall back to one cluster per theorem). Besides the
per-theorem rates the summary gives the per-cluster rate (each cluster weighs
one: the mean over clusters of the fraction of its theorems solved, pass@k
still counted per theorem) and a 95% interval for both by a *cluster
bootstrap* (`cluster_rates`): the clusters are resampled with replacement
``bootstrap_samples`` times (`DEFAULT_SAMPLES` = 2000) by a
``numpy.random.Generator`` seeded with ``bootstrap_seed`` (`DEFAULT_SEED` = 0),
the statistic is recomputed on each resample (a cluster drawn twice counts
twice) and the interval is the 2.5th and 97.5th percentiles (linear
interpolation) of those values, widened where needed to hold the point
estimate. The same seed gives the same interval; one cluster gives a
zero-width interval. This is done at every budget for pass@k, the mean
per-attempt rate (pass@1: the attempts are searches with independent seeds)
and the hard split (whose clusters are resampled among the hard theorems'
clusters). Each theorem's outcome (its cluster, hardness and nodes to proof
per attempt, `TheoremOutcome`) is kept in the summary, so that two summaries
can be compared by a *paired* cluster bootstrap (`paired_deltas`) without
their rows.

Baseline (c) and the best baseline. When the baselines carry baseline (c)
(`Baselines.structural`: the same search with no learned policy, as many
seeded attempts per theorem as the eval's pass@k: equal compute), the summary
gives its rate at the largest budget over the theorems it measured
(``structural_baseline``, pass@k: some attempt proved it), its mean per
attempt (``structural_pass1``), at every budget up to its own (``nodes <=
B``), on the hard split, each with the same cluster-bootstrap intervals. The
best of (a), (b) and (c) (``best_baseline``: the highest pass@1 rate over the
eval's theorems; at a tie the later of (a), (b), (c); a single tactic's pass@1
is its pass@k) comes with the prover's paired changes against it
(`BaselineChoice`): ``versus_primary`` on the primary statistic (the prover's
pass@1 minus the baseline's, by cluster: equal compute), ``versus_pass1`` the
same per theorem, and ``versus``/``versus_by_cluster`` at pass@k (the prover's
k searches against (c)'s k searches), each with its 95% interval by the same
cluster bootstrap (a percentile interval of the mean difference, as in
`paired_deltas`); on the hard split (``best_baseline_hard``, only with (c):
(a) and (b) close no hard theorem by definition) likewise.

Held out in substance. ``similarity`` (`burnqed_core.data.near_twins.SimilarityReport`) is how close the set
is to the training corpus: nearest-neighbour similarity by statement, by statement with definitions and by
proof, and the near-twins found; ``unseen`` gives the rates on the theorems with no near-twin of any kind
(`SubsetSummary`), beside the baselines on them.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.similarity import SimilarityReport
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


DEFAULT_SAMPLES = 2000
DEFAULT_SEED = 0
CONFIDENCE = 0.95
_MAX_CELLS = 4_000_000  # resample weights held at once (rows x clusters)


class Estimate(BaseModel):
    """A point estimate with its interval (fractions: 0.01 = 1 point; a change when it is a delta)."""

    model_config = ConfigDict(frozen=True)
    value: float
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def __str__(self) -> str:
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"

    def pp(self) -> str:
        """As a change in percentage points: ``+3.6 pp [-1.2, +8.3]``."""
        return f"{100 * self.value:+.1f} pp [{100 * self.low:+.1f}, {100 * self.high:+.1f}]"


class TheoremOutcome(BaseModel):
    """What the eval found for one theorem: enough to recompute every rate of the summary on a resample."""

    model_config = ConfigDict(frozen=True)
    theorem: str
    cluster: str
    hard: bool | None = None
    nodes: list[int | None] = Field(default_factory=list,
                                    description="per attempt (in the summary's attempt order): nodes to proof, "
                                                "None when that attempt did not prove it")

    def solved(self, budget: int) -> bool:
        """pass@k: some attempt proved it within ``budget`` nodes."""
        return any(n is not None and n <= budget for n in self.nodes)

    def attempt_rate(self, budget: int) -> float:
        """The fraction of the attempts that proved it within ``budget``."""
        return sum(n is not None and n <= budget for n in self.nodes) / len(self.nodes) if self.nodes else 0.0


class BudgetSummary(BaseModel):
    model_config = ConfigDict(frozen=True)
    budget: int
    all: Rate = Field(description="pass@k: solved by any attempt within the budget")
    hard: Rate
    easy: Rate
    pass1: float = Field(0.0, description="mean over attempts of the single-attempt solve rate")
    avg_nodes_proved: float = Field(0.0, description="mean nodes to proof of the proofs within the budget")
    all_ci: Estimate | None = Field(None, description="pass@k per theorem with its 95% cluster-bootstrap interval")
    all_by_cluster: Estimate | None = Field(None, description="pass@k per cluster (each cluster weighs one)")
    pass1_ci: Estimate | None = Field(None, description="mean per-attempt rate with its interval")
    pass1_by_cluster: Estimate | None = None
    hard_ci: Estimate | None = Field(None, description="pass@k on the hard split with its interval")
    hard_by_cluster: Estimate | None = None
    structural: Rate | None = Field(None, description="baseline (c) proved within this budget, of the theorems it "
                                                      "measured (None: not measured, or beyond its budget)")


class Delta(BaseModel):
    """One statistic of two evals on the theorems both hold, and its change with a paired interval."""

    model_config = ConfigDict(frozen=True)
    name: str
    before: float
    after: float
    change: Estimate = Field(description="after - before, with its 95% paired cluster-bootstrap interval")
    by_cluster: bool = False
    decides: bool = Field(True, description="enters the go/no-go (the primary statistic, `PRIMARY_STATISTIC`; "
                                           "the others are shown)")

    def describe(self) -> str:
        return f"{self.name}: {self.change.pp()} ({100 * self.before:.1f}% -> {100 * self.after:.1f}%)"


BASELINE_LABELS = {"a": "(a) single tactic", "b": "(b) definition-aware",
                   "c": "(c) structural search, no learned policy",
                   "r": "(c) with retrieval: structural and premise steps, no learned policy"}
BaselineName = Literal["a", "b", "c", "r"]


class BaselineChoice(BaseModel):
    """The best baseline on a split, its rate, and the prover's paired changes against it."""

    model_config = ConfigDict(frozen=True)
    name: BaselineName
    rate: Rate = Field(description="the baseline's rate on the split ((c): pass@k over the theorems it measured)")
    pass1: float | None = Field(None, description="the baseline's mean per-attempt rate ((a), (b): its rate)")
    versus: Delta | None = Field(None, description="prover (pass@k, largest budget) minus this baseline (pass@k: "
                                                   "(c) searched as often) per theorem, with its 95% "
                                                   "cluster-bootstrap interval")
    versus_by_cluster: Delta | None = Field(None, description="the same, each cluster weighing one")
    versus_pass1: Delta | None = Field(None, description="prover pass@1 minus the baseline's pass@1, per theorem")
    versus_primary: Delta | None = Field(None, description="the same by cluster: the primary statistic "
                                                           "(`PRIMARY_STATISTIC`) at equal compute")

    @property
    def label(self) -> str:
        return BASELINE_LABELS[self.name]

    @property
    def deciding(self) -> Delta | None:
        """The change the verdict reads: on the primary statistic, else (summaries written before it) pass@k."""
        return self.versus_primary if self.versus_primary is not None else self.versus

    @property
    def beaten(self) -> bool | None:
        """Whether the prover beats it: the primary change's interval lies above zero (None: no interval)."""
        d = self.deciding
        return d.change.low > 0 if d is not None else None

    def describe(self) -> str:
        out = f"{self.label} {self.rate}"
        if self.pass1 is not None and self.name == "c":
            out += f", pass@1 {100 * self.pass1:.1f}%"
        if self.versus_primary is not None:
            out += f"; prover vs it, {PRIMARY_STATISTIC}: {self.versus_primary.change.pp()}"
            if self.versus is not None:
                out += f"; at pass@k {self.versus.change.pp()}"
                if self.versus_by_cluster is not None:
                    out += f", by cluster {self.versus_by_cluster.change.pp()}"
        elif self.versus is not None:
            out += f"; prover vs it: {self.versus.change.pp()}"
            if self.versus_by_cluster is not None:
                out += f", by cluster {self.versus_by_cluster.change.pp()}"
        return out


class SubsetSummary(BaseModel):
    """The rates on a subset of the eval's theorems (the unseen ones: no near-twin of any kind in the corpus),
    with the baselines on the same theorems."""

    model_config = ConfigDict(frozen=True)
    what: str
    theorems: list[str] = Field(default_factory=list)
    clusters: int = 0
    solved: Rate
    pass_k: Estimate | None = None
    pass_k_by_cluster: Estimate | None = None
    pass1: Estimate | None = None
    pass1_by_cluster: Estimate | None = None
    baselines: dict[str, Rate] = Field(default_factory=dict, description="(a), (b), (c) (pass@k) on the subset")
    structural_pass1: float | None = None
    versus_structural_primary: Delta | None = Field(None, description="prover pass@1 minus (c) pass@1 by cluster")
    versus_structural: Delta | None = Field(None, description="prover pass@k minus (c) pass@k per theorem")

    def lines(self) -> list[str]:
        if not self.theorems:
            return [f"{self.what}: none"]
        solved = f"{self.solved.solved}/{self.solved.total}, {self.pass_k}" if self.pass_k is not None \
            else str(self.solved)
        out = [f"{self.what}: {len(self.theorems)} theorems, {self.clusters} clusters; solved (pass@k) {solved}"
               + (f"; pass@1 by cluster {self.pass1_by_cluster}" if self.pass1_by_cluster is not None else "")]
        cells = ", ".join(f"({k}) {r}" for k, r in self.baselines.items())
        if cells:
            out.append(f"  baselines on them: {cells}"
                       + (f"; (c) pass@1 {100 * self.structural_pass1:.1f}%" if self.structural_pass1 is not None
                          else ""))
        if self.versus_structural_primary is not None:
            out.append(f"  prover vs (c), {PRIMARY_STATISTIC}: {self.versus_structural_primary.change.pp()}"
                       + (f"; at pass@k {self.versus_structural.change.pp()}" if self.versus_structural else ""))
        return out


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
                                                     "proof with a step only the policy proposed at its node")
    beyond_by_both: list[str] = Field(default_factory=list,
                                      description="hard theorems solved, not beyond automation, by a proof with a "
                                                  "step both the policy and the automation proposed ('both')")
    beyond_by_premise: list[str] = Field(default_factory=list, description="hard theorems solved at the largest "
                                         "budget whose proof has a premise step (source 'premise': a retrieved "
                                         "premise's rw/simp only/exact/apply)")
    checks_per_theorem: float | None = Field(None, description="Lean tactic checks per theorem and attempt, the "
                                             "search's compute (None: rows written before checks were counted)")
    retrieval_baseline: Rate | None = Field(None, description="baseline (c) with retrieval: the search with no "
                                            "learned policy and the premise steps, of the theorems it measured")
    structural_checks: float | None = Field(None, description="baseline (c)'s checks per theorem")
    retrieval_checks: float | None = Field(None, description="baseline (c) with retrieval's checks per theorem")
    versus_retrieval: BaselineChoice | None = Field(None, description="baseline (c) with retrieval and the prover's "
                                                    "paired change against it")
    automation_only: list[str] = Field(default_factory=list,
                                       description="hard theorems solved only by proofs made of automation "
                                                   "candidates the policy did not propose (or of unrecorded origin)")
    solved: list[str] = Field(default_factory=list, description="theorems solved (pass@k, largest budget)")
    hard_names: list[str] = Field(default_factory=list)
    newly_solved: list[str] = Field(default_factory=list, description="solved now, by no earlier iteration")
    timeouts: int = Field(0, description="searches stopped by the per-theorem time cap")
    start_errors: int = 0
    start_failures: dict[str, str] = Field(default_factory=dict,
                                           description="theorem -> Lean's error, for each theorem whose statement "
                                                       "did not elaborate (counted unsolved, never silently)")
    infra_errors: int = 0
    avg_time_s: float = 0.0
    median_time_s: float = 0.0
    clusters: int = Field(0, description="clusters of the theorems (0: a summary written before clusters)")
    hard_clusters: int = Field(0, description="clusters of the hard theorems")
    cumulative_ci: Estimate | None = Field(None, description="pass@k at the largest budget per theorem, with its "
                                                             "95% cluster-bootstrap interval")
    cumulative_by_cluster: Estimate | None = Field(None, description="the same per cluster (each weighs one)")
    hard_ci: Estimate | None = Field(None, description="the hard split's pass@k at the largest budget")
    hard_by_cluster: Estimate | None = None
    per_attempt: Estimate | None = Field(None, description="mean per-attempt rate at the largest budget (pass@1)")
    per_attempt_by_cluster: Estimate | None = None
    bootstrap_samples: int = Field(0, description="cluster-bootstrap resamples behind the intervals (0: none)")
    bootstrap_seed: int = 0
    confidence: float = CONFIDENCE
    outcomes: list[TheoremOutcome] = Field(default_factory=list,
                                           description="per theorem: cluster, hardness, nodes to proof per "
                                                       "attempt (what a paired comparison resamples)")
    structural_baseline: Rate | None = Field(None, description="baseline (c): proved by the search with no learned "
                                             "policy within the largest budget, of the theorems it measured")
    structural_budget: int = Field(0, description="baseline (c)'s node budget (0: not measured)")
    structural_ci: Estimate | None = Field(None, description="baseline (c) per theorem with its 95% interval")
    structural_by_cluster: Estimate | None = None
    structural_pass1: Estimate | None = Field(None, description="baseline (c)'s mean per attempt (its pass@1)")
    structural_pass1_by_cluster: Estimate | None = None
    structural_hard: Rate | None = Field(None, description="baseline (c) on the hard split")
    structural_hard_ci: Estimate | None = None
    structural_hard_by_cluster: Estimate | None = None
    best_baseline: BaselineChoice | None = Field(None, description="the best of (a), (b), (c) on all theorems, "
                                                                   "and the prover's paired change against it")
    best_baseline_hard: BaselineChoice | None = Field(None, description="the same on the hard split (with (c) only)")
    versus_structural: BaselineChoice | None = Field(None, description="baseline (c) and the prover's paired change "
                                                     "against it, whether or not (c) is the best (transfer folds)")
    similarity: SimilarityReport | None = Field(None, description="nearest-neighbour similarity to the training "
                                                "corpus and the near-twins found")
    unseen: SubsetSummary | None = Field(None, description="the rates on the theorems with no near-twin of any kind")
    without_ebm: EvalSummary | None = Field(None, description="the same eval without the EBM (ablation)")
    policy_only: EvalSummary | None = Field(None, description="the same eval without the automation candidates")

    @property
    def beyond_count(self) -> int:
        return len(self.beyond_automation)

    @property
    def primary(self) -> Estimate | None:
        """The primary statistic (`PRIMARY_STATISTIC`) with its interval: pass@1 by cluster at the largest
        budget (None: a summary without intervals)."""
        return self.per_attempt_by_cluster

    def rate_at(self, budget: int) -> float | None:
        return next((b.all.rate for b in self.budgets if b.budget == budget), None)

    def hard_rate_at(self, budget: int) -> float | None:
        return next((b.hard.rate for b in self.budgets if b.budget == budget), None)


POLICY_SOURCES = frozenset({"policy"})
PRIMARY_STATISTIC = "pass@1 by cluster"
"""The statistic `burnqed compare` and the go/no-go decide on: the mean over attempts of the per-attempt solve
rate at the largest budget, each cluster weighing one (`EvalSummary.primary`)."""
MIN_CLUSTERS = 10
"""A split (all theorems, the hard split) decides only with at least this many clusters: a percentile bootstrap
over fewer has too few distinct resamples to mean anything."""


def primary_delta_name(budget: int, hard: bool = False) -> str:
    """The name `paired_deltas` gives the primary statistic's change."""
    return (f"hard split pass@1 (mean per attempt) by cluster, budget {budget}" if hard
            else f"pass@1 (mean per attempt) by cluster, budget {budget}")


def has_policy_step(r: EvalResult) -> bool:
    """Whether the proof of ``r`` has a step only the policy proposed at its node (``policy``): a step that
    the automation candidates also held (``both``) is the policy repeating the automation, not beyond it."""
    return any(s in POLICY_SOURCES for s in r.proof_sources)


def has_both_step(r: EvalResult) -> bool:
    """Whether the proof of ``r`` has a step the policy proposed that the automation also proposed (``both``)."""
    return "both" in r.proof_sources


# --- cluster bootstrap ---------------------------------------------------------------------------------


def cluster_rates(
    clusters: Sequence[str],
    values: Sequence[Sequence[float]],
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> list[tuple[Estimate, Estimate]]:
    """Statistics of units grouped in clusters, with cluster-bootstrap intervals.

    Unit i (a theorem) is in cluster ``clusters[i]``; ``values[k][i]`` is its value for statistic k (1.0/0.0
    for solved or not, a fraction of attempts, a paired difference). For each k: (the mean over the units,
    the mean over the clusters of each cluster's mean over its units), each an `Estimate` whose interval is
    the ``confidence`` percentile interval over ``samples`` resamples of the clusters with replacement (the
    same resamples for every statistic, drawn from ``numpy.random.default_rng(seed)``; a cluster drawn twice
    counts twice), widened where needed to hold the point estimate. Empty when there are no units."""
    import numpy as np

    n = len(clusters)
    if n == 0:
        return []
    if samples < 1:
        raise ValueError(f"the cluster bootstrap needs at least one resample, not {samples}")
    vals = np.asarray(values, dtype=float).reshape(len(values), n)
    k = vals.shape[0]
    names = sorted(set(clusters))
    index = {name: i for i, name in enumerate(names)}
    col = np.asarray([index[name] for name in clusters], dtype=np.int64)
    c = len(names)
    size = np.bincount(col, minlength=c).astype(float)  # units per cluster (> 0)
    sums = np.stack([np.bincount(col, weights=v, minlength=c) for v in vals]).reshape(k, c)  # per cluster
    nums = np.vstack([sums, sums / size])  # per unit: sum w*S / sum w*n; per cluster: sum w*(S/n) / sum w
    dens = np.vstack([np.tile(size, (k, 1)), np.ones((k, c))])
    point = nums.sum(axis=1) / dens.sum(axis=1)
    rng = np.random.default_rng(seed)
    p = np.full(c, 1.0 / c)
    stats = np.empty((samples, 2 * k))
    step = max(1, _MAX_CELLS // c)
    for start in range(0, samples, step):
        m = min(step, samples - start)
        w = rng.multinomial(c, p, size=m).astype(float)  # (m, c): how often each cluster is drawn
        stats[start:start + m] = (w @ nums.T) / (w @ dens.T)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(stats, [tail, 100 - tail], axis=0)
    est = [Estimate(value=float(v), low=float(min(lo, v)), high=float(max(hi, v)))
           for v, lo, hi in zip(point, low, high, strict=True)]
    return [(est[i], est[k + i]) for i in range(k)]


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


Closed = Callable[[str], "tuple[float, float] | None"]


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


def _baseline_fields(outcomes: Sequence[TheoremOutcome], baselines: Baselines, budgets: Sequence[int],
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


def summarize(
    results: Sequence[EvalResult],
    baselines: Baselines | None,
    *,
    iteration: int,
    benchmark: str,
    budgets: Sequence[int] | None = None,
    earlier_solved: set[str] | None = None,
    bootstrap_samples: int = DEFAULT_SAMPLES,
    bootstrap_seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    similarity: SimilarityReport | None = None,
) -> EvalSummary:
    """The summary of one variant's rows (all with the same ``ebm`` and ``search_automation``); the
    intervals by a cluster bootstrap of ``bootstrap_samples`` resamples (0: no intervals) seeded by
    ``bootstrap_seed``. ``similarity``: the set against the training corpus (carried as is, and the rates on
    the theorems with no near-twin of any kind, ``unseen``)."""
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
    outcomes = outcomes_of(results, names, attempts, hard)
    est, n_clusters, n_hard_clusters = _budget_estimates(outcomes, budgets, bootstrap_samples, bootstrap_seed,
                                                         confidence)
    single = {n for n in names if baselines is not None and baselines.single.get(n) is not None}
    defaware = {n for n in names if baselines is not None and baselines.defaware.get(n) is not None}
    automation_rate = Rate(solved=len(single), total=len(names))
    defaware_rate = Rate(solved=len(defaware), total=len(names))
    extra, structural_at = _baseline_fields(outcomes, baselines, budgets, automation_rate, defaware_rate,
                                            bootstrap_samples, bootstrap_seed, confidence) \
        if baselines is not None else ({}, {})
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
    top = max(budgets) if budgets else 0
    top_est = est.get(top, {})
    solved_top = {r.theorem for r in results if r.proved_within(top)}
    by_policy = {r.theorem for r in results if r.proved_within(top) and has_policy_step(r)}
    by_both = {r.theorem for r in results if r.proved_within(top) and has_both_step(r)} - by_policy
    by_premise = {r.theorem for r in results if r.proved_within(top) and "premise" in r.proof_sources}
    counted = [r.checks for r in results if r.checks]
    starts: dict[str, str] = {}
    for r in results:
        if r.error == "start":
            starts.setdefault(r.theorem, (r.message or "no message recorded").strip().splitlines()[0][:300]
                              if (r.message or "").strip() else "no message recorded")
    unseen = None
    if similarity is not None:
        near = similarity.with_near_twin()
        unseen = subset_summary("unseen (no near-twin of any kind in the corpus)",
                                [n for n in names if n not in near], outcomes, baselines, top,
                                samples=bootstrap_samples, seed=bootstrap_seed, confidence=confidence)
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
        automation_baseline=automation_rate,
        defaware_baseline=defaware_rate,
        either_baseline=Rate(solved=len(single | defaware), total=len(names)),
        hard_theorems=len(hard_names),
        unmeasured=len(names) - len(measured),
        beyond_automation=sorted(solved_top & hard_names & by_policy),
        beyond_by_both=sorted(solved_top & hard_names & by_both),
        beyond_by_premise=sorted(solved_top & hard_names & by_premise),
        checks_per_theorem=statistics.fmean(counted) if counted else None,
        automation_only=sorted((solved_top & hard_names) - by_policy - by_both),
        solved=sorted(solved_top),
        hard_names=sorted(hard_names),
        newly_solved=sorted(solved_top - earlier_solved) if earlier_solved is not None else [],
        timeouts=sum(r.timeout for r in results),
        start_errors=len(starts),
        start_failures=dict(sorted(starts.items())),
        infra_errors=len({r.theorem for r in results if r.error == "infra"}),
        avg_time_s=statistics.fmean(times) if times else 0.0,
        median_time_s=statistics.median(times) if times else 0.0,
        clusters=n_clusters,
        hard_clusters=n_hard_clusters,
        cumulative_ci=top_est.get("all_ci"),
        cumulative_by_cluster=top_est.get("all_by_cluster"),
        hard_ci=top_est.get("hard_ci"),
        hard_by_cluster=top_est.get("hard_by_cluster"),
        per_attempt=top_est.get("pass1_ci"),
        per_attempt_by_cluster=top_est.get("pass1_by_cluster"),
        bootstrap_samples=max(bootstrap_samples, 0) if top_est else 0,
        bootstrap_seed=bootstrap_seed,
        confidence=confidence,
        outcomes=outcomes,
        similarity=similarity,
        unseen=unseen,
        **extra,  # type: ignore[arg-type]
    )


def summarize_variants(
    results: Iterable[EvalResult],
    baselines: Baselines | None,
    *,
    iteration: int,
    benchmark: str,
    budgets: Sequence[int] | None = None,
    earlier_solved: set[str] | None = None,
    bootstrap_samples: int = DEFAULT_SAMPLES,
    bootstrap_seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    similarity: SimilarityReport | None = None,
) -> EvalSummary:
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
    kw = {"iteration": iteration, "benchmark": benchmark, "budgets": budgets, "earlier_solved": earlier_solved,
          "bootstrap_samples": bootstrap_samples, "bootstrap_seed": bootstrap_seed, "confidence": confidence,
          "similarity": similarity}
    if not by_variant:
        return summarize([], baselines, **kw)  # type: ignore[arg-type]
    ebm = with_ebm[0] if with_ebm else ""
    auto = any(a for e, a in by_variant if e == ebm)

    def one(key: tuple[str, bool]) -> EvalSummary | None:
        return summarize(by_variant[key], baselines, **kw) if key in by_variant else None  # type: ignore[arg-type]

    def side(key: tuple[str, bool]) -> EvalSummary | None:  # the report block once, on the main variant
        got = one(key)
        return got.model_copy(update={"similarity": None}) if got is not None else None

    main = one((ebm, auto))
    assert main is not None
    return main.model_copy(update={"without_ebm": side(("", auto)) if ebm else None,
                                   "policy_only": side((ebm, False)) if auto else None})


# --- paired comparison ------------------------------------------------------------------------------------


class PairedChange(BaseModel):
    """`paired_deltas` of two summaries."""

    model_config = ConfigDict(frozen=True)
    theorems: int = Field(description="theorems in both evals (the only ones compared)")
    clusters: int = Field(description="their clusters (the union of both evals' clusterings)")
    hard_theorems: int = 0
    hard_clusters: int = 0
    samples: int = DEFAULT_SAMPLES
    seed: int = DEFAULT_SEED
    deltas: list[Delta] = Field(default_factory=list)

    def describe(self) -> str:
        return (f"95% intervals: paired cluster bootstrap over {self.theorems} theorems in both evals "
                f"({self.clusters} clusters; hard split {self.hard_theorems} theorems, {self.hard_clusters} "
                f"clusters), {self.samples} resamples, seed {self.seed}")


def joint_clusters(names: Sequence[str], *labelings: dict[str, str]) -> list[str]:
    """The cluster of each of ``names`` when two theorems are together whenever some labeling puts them in one
    cluster (union-find; a cluster is named by its smallest theorem name)."""
    from burnqed_core.data.union_find import UnionFind

    uf = UnionFind(names)
    for labels in labelings:
        first: dict[str, str] = {}
        for n in names:
            c = labels.get(n, n)
            if c in first:
                uf.union(first[c], n)
            else:
                first[c] = n
    return [uf.find(n) for n in names]


def paired_deltas(
    before: EvalSummary,
    after: EvalSummary,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    min_clusters: int = MIN_CLUSTERS,
) -> PairedChange | None:
    """The changes from ``before`` to ``after`` on the theorems both hold, each with a 95% interval by a paired
    cluster bootstrap: the clusters are resampled and both evals' statistic computed on the same resample (the
    interval of the difference of per-theorem values). A theorem's cluster joins both evals' clusterings
    (`joint_clusters`); its hardness is the later eval's (the earlier's where the later did not measure it).

    Deltas: pass@k at every budget both report, per theorem and per cluster; the mean per-attempt rate (pass@1)
    at the largest such budget, per theorem and per cluster; the hard split at that budget, pass@k and pass@1,
    per theorem and per cluster. Only the primary statistic decides the go/no-go (``decides``): pass@1 by
    cluster on all theorems when they have at least ``min_clusters`` clusters, and on the hard split when it
    has at least ``min_clusters`` clusters; the others are shown. None when either summary has no per-theorem
    outcomes (written before they were kept), no theorem is in both, or there is no common budget."""
    a = {o.theorem: o for o in before.outcomes}
    z = {o.theorem: o for o in after.outcomes}
    shared = sorted(a.keys() & z.keys())
    budgets = sorted({b.budget for b in before.budgets} & {b.budget for b in after.budgets})
    if not shared or not budgets:
        return None
    top = budgets[-1]
    cl = joint_clusters(shared, {n: a[n].cluster for n in shared}, {n: z[n].cluster for n in shared})
    kw = {"samples": samples, "seed": seed, "confidence": confidence}

    def hard(n: str) -> bool:
        return bool(z[n].hard if z[n].hard is not None else a[n].hard)

    def deltas(names: Sequence[str], clusters_: Sequence[str],
               stats: Sequence[tuple[str, Callable[[TheoremOutcome], float], bool]]) -> list[Delta]:
        """Per theorem and per cluster; the third item: whether the per-cluster change decides."""
        if not names:
            return []
        ests = cluster_rates(clusters_, [[f(a[n]) for n in names] for _, f, _ in stats]
                             + [[f(z[n]) for n in names] for _, f, _ in stats]
                             + [[f(z[n]) - f(a[n]) for n in names] for _, f, _ in stats], **kw)
        k = len(stats)
        out = []
        for i, (name, _, decides) in enumerate(stats):
            for by_cluster in (False, True):
                out.append(Delta(name=name.format(cluster=" by cluster" if by_cluster else ""),
                                 before=ests[i][int(by_cluster)].value, after=ests[k + i][int(by_cluster)].value,
                                 change=ests[2 * k + i][int(by_cluster)], by_cluster=by_cluster,
                                 decides=decides and by_cluster))
        return out

    def solved(b: int) -> Callable[[TheoremOutcome], float]:
        return lambda o: float(o.solved(b))

    def pass1(o: TheoremOutcome) -> float:
        return o.attempt_rate(top)

    stats = [(f"pass@k{{cluster}}, budget {b}", solved(b), False) for b in budgets]
    stats.append((f"pass@1 (mean per attempt){{cluster}}, budget {top}", pass1, len(set(cl)) >= min_clusters))
    out = deltas(shared, cl, stats)
    hard_idx = [i for i, n in enumerate(shared) if hard(n)]
    hard_names = [shared[i] for i in hard_idx]
    hard_cl = [cl[i] for i in hard_idx]
    out += deltas(hard_names, hard_cl,
                  [(f"hard split{{cluster}}, budget {top}", solved(top), False),
                   (f"hard split pass@1 (mean per attempt){{cluster}}, budget {top}", pass1,
                    len(set(hard_cl)) >= min_clusters)])
    return PairedChange(theorems=len(shared), clusters=len(set(cl)), hard_theorems=len(hard_names),
                        hard_clusters=len({cl[i] for i in hard_idx}), samples=samples, seed=seed, deltas=out)


def ebm_change(s: EvalSummary, *, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> PairedChange | None:
    """The EBM ablation with its intervals: `paired_deltas` from the same eval without the EBM (``without_ebm``:
    the same theorems, attempts and seeds) to ``s``. None without an ablation (or without per-theorem
    outcomes)."""
    if s.without_ebm is None:
        return None
    return paired_deltas(s.without_ebm, s, samples=samples, seed=seed)


def ebm_change_line(s: EvalSummary) -> str | None:
    """``EBM ablation at 24 nodes (without -> with): pass@k +4.1 pp [+0.0, +8.2] (...), by cluster ...; pass@1
    (mean per attempt) ...``: the deciding budget's changes with their intervals, or None without an
    ablation."""
    ch = ebm_change(s)
    if ch is None or not ch.deltas:
        return None
    top = max(b.budget for b in s.without_ebm.budgets) if s.without_ebm is not None else 0
    keep = [d for d in ch.deltas if d.name.endswith(f"budget {top}") and "hard" not in d.name]
    return (f"EBM ablation at {top} nodes (without -> with, same seeds, {ch.theorems} theorems, {ch.clusters} "
            "clusters): " + "; ".join(d.describe() for d in keep))
