"""What an eval summary holds: rates, estimates with their intervals, each theorem's outcome, the rates per
budget, changes, the baselines' choice, a subset's rates and the whole `EvalSummary` (the concepts are described in
`burnqed_core.eval.summary`). Pure data, no computation beyond formatting."""

from __future__ import annotations

from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.twins.similarity import SimilarityReport


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


BASELINE_LABELS = MappingProxyType({"a": "(a) single tactic", "b": "(b) definition-aware",
                                    "c": "(c) structural search, no learned policy",
                                    "r": "(c) with retrieval: structural and premise steps, no learned policy"})
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
