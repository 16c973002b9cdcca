"""The cluster bootstrap: statistics of units grouped in clusters, with percentile intervals over resamples of
the clusters (`cluster_rates`)."""

from __future__ import annotations

from collections.abc import Sequence

from burnqed_core.eval.summary.models import CONFIDENCE, DEFAULT_SAMPLES, DEFAULT_SEED, Estimate

_MAX_CELLS = 4_000_000  # resample weights held at once (rows x clusters)


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
