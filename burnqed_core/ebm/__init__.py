"""The energy-based value function (seed 002): embeddings cache, goal-conditioned
energy head, InfoNCE training with hard negatives, metrics, and the scorer the
search uses. Lower energy = more provable.

* `embeddings`: proof states encoded by the policy, cached in Parquet keyed by
  (model fingerprint, pooling, state hash), resumable;
* `model`: `EnergyHead`;
* `data`: positives and their negatives from trajectory labels;
* `train`: InfoNCE training, checkpoints, exact resume;
* `metrics`: energy gap, rank-1 by depth, embedding separation (`EbmMetrics`);
* `scorer`: `load_energy_scorer(dir, policy)` for the search.
"""
