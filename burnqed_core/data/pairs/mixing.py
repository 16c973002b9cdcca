"""Training mix for iteration N > 0: base pairs + proofs found by search.

The seeds' iteration 1 (000) trained on a 10K subsample of the base corpus
plus the positive trajectory steps of iteration 0 upsampled x10 (~23% of the
mix): the model has already seen the whole base set, and the few hundred
found proof steps would drown in it otherwise. Here both ratios are settings
(``data.base_subsample``, ``data.trajectory_upsample``), and so is a cap on
the share of trajectory rows in the mix (``data.trajectory_max_share``, the
seeds' ~23 %): when the search proves many theorems, ×10 of their steps would
outweigh the base data (iteration 1 drifting towards the searched theorems at
the cost of the rest), so the upsample factor shrinks until the trajectory
rows are at most that share of the training mix. The factor may become
fractional: every step is repeated ``floor(f)`` times and a seeded subset of
the steps once more. Every training-side step appears at least once, even
when that alone passes the cap (a found proof is never dropped).

A positive trajectory step is a search node labelled ``positive`` that has a
parent: the pair is (parent's state, the tactic that led here, this node's
state), its depth the parent's depth. Parents are looked up within one
search, because node ids restart per search (see `_searches`). Steps go
through the same theorem-level split as the base pairs (the `TheoremSplit`
drawn before pre-training, or `is_val_theorem` with the base's seed and
fraction): steps of validation theorems go to validation once, never
upsampled into training.

Each step's tactic has an origin (`TrajectoryRecord.source`): sampled by the
policy, added by the search's automation candidates, or both.
``exclude_sources`` drops steps by origin (``data.automation_steps:
exclude`` drops ``automation``: the automation is offered at every expansion
anyway, so the upsampled steps teach the structural steps between its
calls); a kept step's pair source names a non-policy origin
(``trajectory:both``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterable, Iterator, Sequence

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.pairs.prepare import PreparedPairs, TheoremSplit, is_unsafe_tactic, is_val_theorem, pairs_frame
from burnqed_core.records import TacticPair, TrajectoryRecord


def _searches(records: Iterable[TrajectoryRecord]) -> Iterator[list[TrajectoryRecord]]:
    """Split records into searches: the rows of one search are contiguous (as
    the trajectory writer stores them), so a new search starts where the
    theorem or iteration changes or a node id repeats (node ids are unique
    within a search: a repeat is another run over the same theorem, e.g. the
    noise-temperature search)."""
    seg: list[TrajectoryRecord] = []
    ids: set[int] = set()
    key: tuple[str, int] | None = None
    for r in records:
        k = (r.theorem, r.iteration)
        if seg and (k != key or r.node_id in ids):
            yield seg
            seg, ids = [], set()
        seg.append(r)
        ids.add(r.node_id)
        key = k
    if seg:
        yield seg


def positive_steps(records: Iterable[TrajectoryRecord], source: str = "",
                   exclude_sources: Collection[str] = ()) -> list[TacticPair]:
    """Tactic pairs of the positive steps in trajectory records (one or more
    runs concatenated). Steps with an empty state or tactic, an unsafe
    tactic, or a tactic origin in ``exclude_sources`` are skipped."""
    out: list[TacticPair] = []
    for search in _searches(records):
        nodes = {r.node_id: r for r in search}
        for r in search:
            if r.label != "positive" or r.parent_id < 0 or r.source in exclude_sources:
                continue
            parent = nodes.get(r.parent_id)
            if parent is None or not parent.state.strip() or not r.tactic.strip() or is_unsafe_tactic(r.tactic):
                continue
            out.append(TacticPair(
                theorem=r.theorem, state_before=parent.state, tactic=r.tactic, state_after=r.state,
                depth=parent.depth,
                source=(source or f"trajectory:iter_{r.iteration}") + (f":{r.source}" if r.source != "policy" else ""),
            ))
    return out


class MixStats(BaseModel):
    """Counts of one iteration's training mix."""

    model_config = ConfigDict(frozen=True)
    seed: int
    base_subsample: int
    trajectory_upsample: int
    base_train_available: int
    base_train_used: int
    trajectory_steps: int
    trajectory_steps_train: int
    trajectory_steps_val: int
    trajectory_rows_train: int
    train_rows: int
    val_rows: int
    trajectory_fraction: float
    trajectory_max_share: float = 1.0
    effective_upsample: float = Field(0.0, description="trajectory rows / training-side steps after the cap")
    share_capped: bool = Field(False, description="the cap lowered the upsample factor")


class Mix(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    train: pl.DataFrame
    val: pl.DataFrame
    stats: MixStats


def upsampled_rows(steps: int, base_rows: int, upsample: int, max_share: float) -> int:
    """How many trajectory rows the mix holds: ``steps * upsample``, lowered so that they are at most
    ``max_share`` of the training mix (``rows <= max_share / (1 - max_share) * base_rows``), never below
    ``steps`` (each step at least once) when ``upsample >= 1``."""
    if not 0 < max_share <= 1:
        raise ValueError(f"trajectory_max_share must be in (0, 1], got {max_share}")
    want = steps * upsample
    if max_share >= 1 or upsample == 0:
        return want
    cap = math.floor(max_share / (1 - max_share) * base_rows + 1e-9)
    return max(min(want, cap), steps)


def mix_iteration(
    base: PreparedPairs,
    steps: Sequence[TacticPair] | pl.DataFrame,
    base_subsample: int,
    trajectory_upsample: int,
    seed: int,
    *,
    max_share: float = 1.0,
    split: TheoremSplit | None = None,
) -> Mix:
    """The training mix: a seeded subsample of ``base.train`` (all of it when
    smaller than ``base_subsample``) plus the training-side trajectory steps
    repeated ``trajectory_upsample`` times, lowered to at most ``max_share`` of
    the mix (`upsampled_rows`), shuffled; validation is the base validation
    set plus the validation-side steps once. Steps are deduplicated on
    (state_before, tactic), and a step identical to a base pair still counts
    (it is a proof the model found). ``split``: the theorem split of the base
    pairs (default: `is_val_theorem` with the base's seed and fraction)."""
    if base_subsample < 0 or trajectory_upsample < 0:
        raise ValueError("base_subsample and trajectory_upsample must be >= 0")
    rng = random.Random(seed)
    st = pairs_frame(steps).unique(subset=["state_before", "tactic"], keep="first", maintain_order=True)
    vseed, vfrac = base.stats.seed, base.stats.val_fraction
    is_val = split.is_val if split is not None else (lambda n: is_val_theorem(n, vseed, vfrac))
    step_val = pl.Series([is_val(n) for n in st["theorem"]], dtype=pl.Boolean)
    st_train, st_val = st.filter(~step_val), st.filter(step_val)

    avail = base.train.height
    idx = sorted(rng.sample(range(avail), base_subsample)) if base_subsample < avail else list(range(avail))
    base_part = base.train[idx] if idx else base.train.clear()
    n_steps = st_train.height
    rows = upsampled_rows(n_steps, base_part.height, trajectory_upsample, max_share) if n_steps else 0
    full, extra = divmod(rows, n_steps) if n_steps else (0, 0)
    parts = [st_train] * full
    if extra:
        parts.append(st_train[sorted(rng.sample(range(n_steps), extra))])
    traj_part = pl.concat(parts, how="vertical") if parts else st_train.clear()
    train = pl.concat([base_part, traj_part], how="vertical")
    order = list(range(train.height))
    rng.shuffle(order)
    train = train[order] if order else train
    val = pl.concat([base.val, st_val], how="vertical")
    stats = MixStats(
        seed=seed, base_subsample=base_subsample, trajectory_upsample=trajectory_upsample,
        base_train_available=avail, base_train_used=base_part.height,
        trajectory_steps=st.height, trajectory_steps_train=n_steps, trajectory_steps_val=st_val.height,
        trajectory_rows_train=traj_part.height, train_rows=train.height, val_rows=val.height,
        trajectory_fraction=traj_part.height / train.height if train.height else 0.0,
        trajectory_max_share=max_share, effective_upsample=traj_part.height / n_steps if n_steps else 0.0,
        share_capped=traj_part.height < n_steps * trajectory_upsample,
    )
    return Mix(train=train, val=val, stats=stats)
