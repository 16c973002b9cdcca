"""How good an energy head and its encoder are (seed 002's measures and red lines).

* **energy gap**: mean energy of the negatives minus that of the positive,
  averaged over groups (> 0: positives are lower, as they should be);
* **rank-1**: the share of groups whose positive has the lowest energy, with
  the chance level ``mean(1 / group size)`` beside it, overall and by depth of
  the positive (``1``, ``2``, ``3``, ``4+``); **sibling rank-1**: the same
  among failed siblings only (the choice the search actually faces);
* **separation** of the encoder alone (no head): L2 distance between the
  centroids of positive and negative state embeddings, the same divided by
  the mean distance of a state to its class centroid (scale-free: last-token
  L2-normalised vectors have norm 1, so the seeds' raw red lines of 5.0 / 3.0,
  measured on mean-pooled 4096-d vectors, do not transfer), and the balanced
  accuracy of a linear probe (logistic regression) trained on the states of
  training theorems and tested on those of held-out theorems (chance 0.5;
  seed red line 0.65).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from pydantic import BaseModel, Field

from burnqed_core.ebm.data import ContrastiveData, theorem_in_val
from burnqed_core.ebm.model import EnergyHead
from burnqed_core.verdict import CheckVerdict, Figure

#: Seed 002's red lines (EBM rank-1 at depth 4+, linear probe); the centroid
#: line applies to the raw centroid L2 of mean-pooled vectors only.
RED_LINE_RANK1_DEEP = 0.25
RED_LINE_PROBE = 0.65
RED_LINE_VARIANCE = 1e-4
#: Seed 002's centroid red line (< 3.0, raw L2 between the centroids of positive and negative states of
#: mean-pooled vectors) and what it means across iterations: 3.0 against the iteration-0 target of 5.0, so
#: an encoder keeping less than 60% of the previous iteration's (scale-free) separation has collapsed
#: (seed 002's iter_5: 6.40 -> 1.33).
RED_LINE_CENTROID_RAW = 3.0
RED_LINE_CENTROID_KEEP = 3.0 / 5.0
#: Fewer states or groups than these and a figure is not judged (too noisy to tell).
MIN_PROBE_STATES = 20
MIN_RANK_GROUPS = 10
#: A temperature within 1% of a bound is pinned (as `EnergyHead.temperature_pinned`).
PINNED_REL = 0.01


class RankStats(BaseModel):
    n: int = 0
    rank1: float | None = None
    chance: float | None = None

    @property
    def lift(self) -> float | None:
        return None if self.rank1 is None or self.chance is None else self.rank1 - self.chance


class SeparationMetrics(BaseModel):
    positives: int = 0
    negatives: int = 0
    centroid_l2: float | None = None
    centroid_l2_ratio: float | None = Field(None, description="centroid L2 / mean distance to own centroid")
    linear_probe_acc: float | None = Field(None, description="balanced accuracy on held-out theorems' states")
    probe_chance: float = 0.5
    probe_split: str = Field("theorem", description="'theorem' (held-out theorems) or 'rows' (too few theorems)")
    variance_ratio: float | None = Field(None, description="total variance of the state vectors / their mean "
                                         "squared norm (0: every state embeds the same, a collapse)")


class EbmMetrics(BaseModel):
    """The typed record the pipeline shows and the go/no-go reads."""

    split: str = "val"
    theorems: int = 0
    groups: int = 0
    negatives_per_group: float = 0.0
    energy_pos_mean: float | None = None
    energy_neg_mean: float | None = None
    energy_gap: float | None = None
    rank1: RankStats = Field(default_factory=RankStats)
    rank1_by_depth: dict[str, RankStats] = Field(default_factory=dict)
    sibling_rank1: RankStats = Field(default_factory=RankStats)
    separation: SeparationMetrics | None = None
    temperature: float | None = None
    warnings: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.split}: {self.groups} positives of {self.theorems} theorems"]
        if self.rank1.rank1 is not None:
            parts.append(f"rank-1 {self.rank1.rank1:.3f} (chance {self.rank1.chance:.3f})")
        if self.sibling_rank1.rank1 is not None:
            parts.append(f"vs failed siblings {self.sibling_rank1.rank1:.3f} (chance {self.sibling_rank1.chance:.3f}, "
                         f"n={self.sibling_rank1.n})")
        if self.energy_gap is not None:
            parts.append(f"energy gap {self.energy_gap:+.3f}")
        s = self.separation
        if s is not None and s.centroid_l2 is not None:
            parts.append(f"centroid L2 {s.centroid_l2:.3f} (ratio {s.centroid_l2_ratio:.3f})")
        if s is not None and s.linear_probe_acc is not None:
            parts.append(f"linear probe {s.linear_probe_acc:.3f}")
        return ", ".join(parts)


def depth_bucket(depth: int) -> str:
    return str(depth) if depth < 4 else "4+"


@torch.no_grad()
def group_energies(head: EnergyHead, z: torch.Tensor, data: ContrastiveData, positives: Sequence[int],
                   groups: Sequence[Sequence[int]], batch: int = 512) -> list[np.ndarray]:
    """Energies ``[E_pos, E_neg...]`` of each group (eval mode, batched)."""
    was = head.training
    head.eval()
    out: list[np.ndarray] = []
    try:
        for s in range(0, len(positives), batch):
            idx = list(positives[s : s + batch])
            members = [[data.positives[i].state, *groups[s + j]] for j, i in enumerate(idx)]
            width = max(len(m) for m in members)
            rows = torch.zeros((len(idx), width), dtype=torch.long)
            for j, m in enumerate(members):
                rows[j, : len(m)] = torch.tensor(m)
            goals = torch.tensor([data.positives[i].goal for i in idx], dtype=torch.long)
            e = head(z[rows], z[goals].unsqueeze(1)).cpu().numpy()
            out.extend(e[j, : len(m)] for j, m in enumerate(members))
    finally:
        head.train(was)
    return out


def _rank(groups: Sequence[np.ndarray]) -> RankStats:
    usable = [g for g in groups if len(g) > 1]
    if not usable:
        return RankStats(n=0)
    wins = [float(g[0] < g[1:].min()) for g in usable]
    return RankStats(n=len(usable), rank1=float(np.mean(wins)), chance=float(np.mean([1 / len(g) for g in usable])))


def rank_metrics(head: EnergyHead, z: torch.Tensor, data: ContrastiveData, positives: Sequence[int],
                 groups: Sequence[Sequence[int]], split: str = "val") -> EbmMetrics:
    """Energy gap and rank-1 (overall, by depth, among siblings) of ``positives``."""
    m = EbmMetrics(split=split, theorems=len({data.positives[i].theorem for i in positives}), groups=len(positives))
    if not positives:
        return m
    energies = group_energies(head, z, data, positives, groups)
    m.negatives_per_group = float(np.mean([len(g) - 1 for g in energies]))
    with_negs = [g for g in energies if len(g) > 1]
    if with_negs:
        m.energy_pos_mean = float(np.mean([g[0] for g in with_negs]))
        m.energy_neg_mean = float(np.mean([g[1:].mean() for g in with_negs]))
        m.energy_gap = float(np.mean([g[1:].mean() - g[0] for g in with_negs]))
    m.rank1 = _rank(energies)
    by: dict[str, list[np.ndarray]] = {}
    for i, g in zip(positives, energies, strict=True):
        by.setdefault(depth_bucket(data.positives[i].depth), []).append(g)
    m.rank1_by_depth = {k: _rank(v) for k, v in sorted(by.items())}
    sib_pos = [i for i in positives if data.positives[i].siblings]
    if sib_pos:
        sib_groups = [list(data.positives[i].siblings) for i in sib_pos]
        m.sibling_rank1 = _rank(group_energies(head, z, data, sib_pos, sib_groups))
    m.temperature = float(head.temperature.detach())
    deep = m.rank1_by_depth.get("4+")
    if deep is not None and deep.rank1 is not None and deep.n >= 10 and deep.rank1 < RED_LINE_RANK1_DEEP:
        m.warnings.append(f"rank-1 at depth 4+ is {deep.rank1:.2f} < red line {RED_LINE_RANK1_DEEP}")
    if m.rank1.rank1 is not None and m.rank1.chance is not None and m.rank1.n >= 10 and m.rank1.rank1 <= m.rank1.chance:
        m.warnings.append(f"rank-1 {m.rank1.rank1:.2f} is not above chance {m.rank1.chance:.2f}")
    return m


def _row_theorems(data: ContrastiveData) -> dict[int, str]:
    out: dict[int, str] = {}
    for t, rows in sorted(data.theorem_states.items()):
        for r in rows:
            out.setdefault(r, t)
    return out


def _probe(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray, yte: np.ndarray, seed: int) -> float:
    """Balanced accuracy of an L2-regularised logistic regression (full-batch LBFGS)."""
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    a = torch.tensor((xtr - mu) / sd, dtype=torch.float32)
    b = torch.tensor(ytr, dtype=torch.float32)
    torch.manual_seed(seed)
    w = torch.zeros(a.shape[1], requires_grad=True)
    c = torch.zeros(1, requires_grad=True)
    pos_w = float((b == 0).sum() / max(float((b == 1).sum()), 1.0))
    opt = torch.optim.LBFGS([w, c], lr=0.5, max_iter=200, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        logits = a @ w + c
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, b, pos_weight=torch.tensor(pos_w)) + 1e-2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        pred = ((torch.tensor((xte - mu) / sd, dtype=torch.float32) @ w + c) > 0).numpy()
    accs = [float((pred[yte == k] == k).mean()) for k in (0, 1) if (yte == k).any()]
    return float(np.mean(accs))


def separation_metrics(z: np.ndarray | torch.Tensor, data: ContrastiveData, val_fraction: float = 0.2,
                       seed: int = 0) -> SeparationMetrics:
    """Centroid L2 and linear probe of positive vs negative state embeddings."""
    zz = z.detach().cpu().numpy() if isinstance(z, torch.Tensor) else np.asarray(z)
    pos = [r for r in data.positive_rows if r not in set(data.negatives)]
    neg = list(data.negatives)
    m = SeparationMetrics(positives=len(pos), negatives=len(neg))
    if not pos or not neg:
        return m
    zp, zn = zz[pos].astype(np.float64), zz[neg].astype(np.float64)
    both = np.concatenate([zp, zn])
    sq = float((both**2).sum(1).mean())
    m.variance_ratio = float(both.var(0).sum() / sq) if sq > 0 else 0.0
    cp, cn = zp.mean(0), zn.mean(0)
    m.centroid_l2 = float(np.linalg.norm(cp - cn))
    spread = float(np.concatenate([np.linalg.norm(zp - cp, axis=1), np.linalg.norm(zn - cn, axis=1)]).mean())
    m.centroid_l2_ratio = m.centroid_l2 / spread if spread > 0 else None
    rows = np.array(pos + neg)
    y = np.array([1] * len(pos) + [0] * len(neg))
    owner = _row_theorems(data)
    is_val = np.array([theorem_in_val(owner.get(int(r), ""), val_fraction or 0.2, seed) for r in rows])
    if is_val.all() or (~is_val).all() or len(set(y[is_val])) < 2 or len(set(y[~is_val])) < 2:
        rng = np.random.default_rng(seed)
        is_val = rng.random(len(rows)) < 0.3
        m.probe_split = "rows"
        if is_val.all() or (~is_val).all() or len(set(y[~is_val])) < 2 or not is_val.any():
            return m
    m.linear_probe_acc = _probe(zz[rows[~is_val]], y[~is_val], zz[rows[is_val]], y[is_val], seed)
    return m


def separation_warnings(s: SeparationMetrics) -> list[str]:
    """The encoder's red lines that transfer across poolings: the linear probe
    (seed 002: < 0.65) and a collapse of all states onto one vector. Empty: healthy
    (or too few states to tell). For the pipeline's `embeddings` check."""
    out = []
    if s.linear_probe_acc is not None and s.positives + s.negatives >= 20 and s.linear_probe_acc < RED_LINE_PROBE:
        out.append(f"linear probe {s.linear_probe_acc:.2f} < red line {RED_LINE_PROBE} (embedding collapse?)")
    if s.variance_ratio is not None and s.variance_ratio < RED_LINE_VARIANCE:
        out.append(f"state embeddings have almost no variance (ratio {s.variance_ratio:.2e}): collapsed")
    return out


def embeddings_verdict(sep: SeparationMetrics | None, pooling: str,
                       previous: SeparationMetrics | None = None) -> CheckVerdict:
    """The ``embeddings`` check (seed 002's collapse red lines): the state vectors have variance, the
    linear probe separates positive from negative states (>= 0.65), and the centroids of positive and
    negative states stay apart: raw L2 >= 3.0 for mean pooling (the seed's setting); for any pooling, the
    scale-free separation keeps at least 60% of the previous iteration's. ``sep`` None: nothing was encoded
    (iteration 0): passes."""
    if sep is None or (sep.positives == 0 and sep.negatives == 0):
        return CheckVerdict(check="embeddings", notes=["no labelled states encoded (iteration 0 has no earlier "
                                                       "trajectories): nothing to judge"])
    states = sep.positives + sep.negatives
    figures = [
        Figure(name="variance_ratio", value=sep.variance_ratio, op=">=", threshold=RED_LINE_VARIANCE,
               note="total variance / mean squared norm; 0 = every state embeds the same"),
        Figure(name="linear_probe_acc", value=sep.linear_probe_acc if states >= MIN_PROBE_STATES else None,
               op=">=", threshold=RED_LINE_PROBE,
               note=f"held-out {sep.probe_split}" if states >= MIN_PROBE_STATES
               else f"{states} states < {MIN_PROBE_STATES}: not judged"),
    ]
    if pooling == "mean":
        figures.append(Figure(name="centroid_l2", value=sep.centroid_l2, op=">=", threshold=RED_LINE_CENTROID_RAW))
    else:
        figures.append(Figure(name="centroid_l2", value=sep.centroid_l2, op=">=", threshold=0.0, blocking=False,
                              note=f"raw red line {RED_LINE_CENTROID_RAW} is for mean pooling, not {pooling}"))
    prev = previous.centroid_l2_ratio if previous is not None else None
    if prev is not None and prev > 0:
        figures.append(Figure(name="centroid_l2_ratio", value=sep.centroid_l2_ratio, op=">=",
                              threshold=RED_LINE_CENTROID_KEEP * prev,
                              note=f"{RED_LINE_CENTROID_KEEP:.0%} of the previous iteration's {prev:.4g}"))
    else:
        figures.append(Figure(name="centroid_l2_ratio", value=sep.centroid_l2_ratio, op=">", threshold=0.0,
                              note="no previous iteration to compare with"))
    return CheckVerdict(check="embeddings", figures=figures,
                        notes=[f"{sep.positives} positive / {sep.negatives} negative states, {pooling} pooling"])


def ebm_verdict(metrics: EbmMetrics | None, temperature_min: float, temperature_max: float,
                no_ebm_reason: str = "") -> CheckVerdict:
    """The ``ebm`` check: rank-1 above chance (held-out theorems when there are enough groups, else all),
    rank-1 at depth 4+ above seed 002's red line 0.25, and a temperature not pinned at a bound (gotcha 3).
    Figures with fewer than 10 groups are shown, not judged. ``metrics`` None: no EBM was trained
    (iteration 0, or ``ebm.enabled: false``): passes with the reason."""
    if metrics is None:
        return CheckVerdict(check="ebm", notes=[f"no EBM: {no_ebm_reason or 'none trained'}"])
    r = metrics.rank1
    enough = r.n >= MIN_RANK_GROUPS and r.rank1 is not None
    figures = [Figure(name=f"rank1 ({metrics.split})", value=r.rank1 if enough else None, op=">",
                      threshold=r.chance if r.chance is not None else 0.0,
                      note=f"threshold = chance over {r.n} groups" if enough
                      else f"{r.n} groups < {MIN_RANK_GROUPS}: not judged (rank-1 {r.rank1})")]
    deep = metrics.rank1_by_depth.get("4+")
    if deep is not None:
        deep_ok = deep.n >= MIN_RANK_GROUPS and deep.rank1 is not None
        figures.append(Figure(name="rank1 depth 4+", value=deep.rank1 if deep_ok else None, op=">=",
                              threshold=RED_LINE_RANK1_DEEP,
                              note="" if deep_ok else f"{deep.n} groups < {MIN_RANK_GROUPS}: not judged"))
    t = metrics.temperature
    figures += [
        Figure(name="temperature (floor)", value=t, op=">", threshold=temperature_min * (1 + PINNED_REL),
               note="pinned at the floor" if t is not None and t <= temperature_min * (1 + PINNED_REL) else ""),
        Figure(name="temperature (ceiling)", value=t, op="<", threshold=temperature_max * (1 - PINNED_REL),
               note="pinned at the ceiling" if t is not None and t >= temperature_max * (1 - PINNED_REL) else ""),
    ]
    if metrics.energy_gap is not None:
        figures.append(Figure(name="energy_gap", value=metrics.energy_gap, op=">", threshold=0.0, blocking=False,
                              note="mean E(negatives) - E(positive)"))
    return CheckVerdict(check="ebm", figures=figures, notes=[metrics.summary()])
