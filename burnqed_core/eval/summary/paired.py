"""Two summaries compared: the changes on the theorems both hold, each with an interval by a paired cluster
bootstrap (`paired_deltas`), and the EBM ablation of one summary (`ebm_change`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.eval.summary.bootstrap import cluster_rates
from burnqed_core.eval.summary.models import (
    CONFIDENCE,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    MIN_CLUSTERS,
    Delta,
    EvalSummary,
    TheoremOutcome,
)


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
    from burnqed_core.data.twins.union_find import UnionFind

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
    boot = {"samples": samples, "seed": seed, "confidence": confidence}

    def solved(b: int) -> Callable[[TheoremOutcome], float]:
        return lambda o: float(o.solved(b))

    def pass1(o: TheoremOutcome) -> float:
        return o.attempt_rate(top)

    stats: list[Stat] = [(f"pass@k{{cluster}}, budget {b}", solved(b), False) for b in budgets]
    stats.append((f"pass@1 (mean per attempt){{cluster}}, budget {top}", pass1, len(set(cl)) >= min_clusters))
    out = _paired((a, z), shared, cl, stats, boot)
    # a theorem's hardness is the later eval's, the earlier's where the later did not measure it
    hard_idx = [i for i, n in enumerate(shared) if (z[n].hard if z[n].hard is not None else a[n].hard)]
    hard_names = [shared[i] for i in hard_idx]
    hard_cl = [cl[i] for i in hard_idx]
    out += _paired((a, z), hard_names, hard_cl,
                   [(f"hard split{{cluster}}, budget {top}", solved(top), False),
                    (f"hard split pass@1 (mean per attempt){{cluster}}, budget {top}", pass1,
                     len(set(hard_cl)) >= min_clusters)], boot)
    return PairedChange(theorems=len(shared), clusters=len(set(cl)), hard_theorems=len(hard_names),
                        hard_clusters=len({cl[i] for i in hard_idx}), samples=samples, seed=seed, deltas=out)


Stat = tuple[str, Callable[[TheoremOutcome], float], bool]
"""A statistic of `paired_deltas`: its name (``{cluster}`` where " by cluster" goes), its value on a theorem's
outcome, and whether its per-cluster change decides."""


def _paired(evals: tuple[dict[str, TheoremOutcome], dict[str, TheoremOutcome]], names: Sequence[str],
            clusters: Sequence[str], stats: Sequence[Stat], boot: dict[str, Any]) -> list[Delta]:
    """The changes of ``stats`` from the first eval's outcomes to the second's on ``names``, per theorem and per
    cluster, on the same cluster-bootstrap resamples."""
    if not names:
        return []
    a, z = evals
    ests = cluster_rates(clusters, [[f(a[n]) for n in names] for _, f, _ in stats]
                         + [[f(z[n]) for n in names] for _, f, _ in stats]
                         + [[f(z[n]) - f(a[n]) for n in names] for _, f, _ in stats], **boot)
    k = len(stats)
    out = []
    for i, (name, _, decides) in enumerate(stats):
        for by_cluster in (False, True):
            out.append(Delta(name=name.format(cluster=" by cluster" if by_cluster else ""),
                             before=ests[i][int(by_cluster)].value, after=ests[k + i][int(by_cluster)].value,
                             change=ests[2 * k + i][int(by_cluster)], by_cluster=by_cluster,
                             decides=decides and by_cluster))
    return out


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
