"""Aggregate per-search `EvalResult` rows into solve rates (the metrics are defined in `docs/evaluation.md`).

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
holds several instances of one template, and twins (`burnqed_core.data.twins.clusters`).
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

Held out in substance. ``similarity`` (`burnqed_core.data.twins.near_twins.SimilarityReport`) is how close the set
is to the training corpus: nearest-neighbour similarity by statement, by statement with definitions and by
proof, and the near-twins found; ``unseen`` gives the rates on the theorems with no near-twin of any kind
(`SubsetSummary`), beside the baselines on them.

One module per concept: `models` (what a summary holds), `bootstrap` (the cluster bootstrap), `versus` (the
baselines beside the prover), `aggregate` (rows into a summary, `SummaryOptions`), `paired` (two summaries
compared). Every name below is importable from ``burnqed_core.eval.summary``.
"""

from burnqed_core.eval.summary.aggregate import (
    POLICY_SOURCES,
    SummaryOptions,
    has_both_step,
    has_policy_step,
    outcomes_of,
    summarize,
    summarize_variants,
)
from burnqed_core.eval.summary.bootstrap import cluster_rates
from burnqed_core.eval.summary.models import (
    BASELINE_LABELS,
    CONFIDENCE,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    MIN_CLUSTERS,
    PRIMARY_STATISTIC,
    BaselineChoice,
    BaselineName,
    BudgetSummary,
    Delta,
    Estimate,
    EvalSummary,
    Rate,
    SubsetSummary,
    TheoremOutcome,
    primary_delta_name,
)
from burnqed_core.eval.summary.paired import PairedChange, ebm_change, ebm_change_line, joint_clusters, paired_deltas
from burnqed_core.eval.summary.versus import subset_summary

__all__ = (
    "BASELINE_LABELS",
    "CONFIDENCE",
    "DEFAULT_SAMPLES",
    "DEFAULT_SEED",
    "MIN_CLUSTERS",
    "POLICY_SOURCES",
    "PRIMARY_STATISTIC",
    "BaselineChoice",
    "BaselineName",
    "BudgetSummary",
    "Delta",
    "Estimate",
    "EvalSummary",
    "PairedChange",
    "Rate",
    "SubsetSummary",
    "SummaryOptions",
    "TheoremOutcome",
    "cluster_rates",
    "ebm_change",
    "ebm_change_line",
    "has_both_step",
    "has_policy_step",
    "joint_clusters",
    "outcomes_of",
    "paired_deltas",
    "primary_delta_name",
    "subset_summary",
    "summarize",
    "summarize_variants",
)
