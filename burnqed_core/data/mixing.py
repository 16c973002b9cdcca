"""Training mix for iteration N > 0: base pairs + proofs found by search.

The seeds' iteration 1 (000) trained on a 10K subsample of the base corpus
plus the positive trajectory steps of iteration 0 upsampled x10 (~23% of the
mix): the model has already seen the whole base set, and the few hundred
found proof steps would drown in it otherwise. Here both ratios are settings
(``data.base_subsample``, ``data.trajectory_upsample``).

A positive trajectory step is a search node labelled ``positive`` that has a
parent: the pair is (parent's state, the tactic that led here, this node's
state), its depth the parent's depth. Parents are looked up within one
search, because node ids restart per search (see `_searches`). Steps go
through the same theorem-level split as the base pairs (`is_val_theorem` with
the base's seed and fraction): steps of validation theorems go to validation
once, never upsampled into training.

Each step's tactic has an origin (`TrajectoryRecord.source`): sampled by the
policy, added by the search's automation candidates, or both.
``exclude_sources`` drops steps by origin (``data.automation_steps:
exclude`` drops ``automation``: the automation is offered at every expansion
anyway, so the upsampled steps teach the structural steps between its
calls); a kept step's pair source names a non-policy origin
(``trajectory:both``).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Iterator, Sequence

import polars as pl
from pydantic import BaseModel, ConfigDict

from burnqed_core.data.pairs import PreparedPairs, is_unsafe_tactic, is_val_theorem, pairs_frame
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


class Mix(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    train: pl.DataFrame
    val: pl.DataFrame
    stats: MixStats


def mix_iteration(
    base: PreparedPairs,
    steps: Sequence[TacticPair] | pl.DataFrame,
    base_subsample: int,
    trajectory_upsample: int,
    seed: int,
) -> Mix:
    """The training mix: a seeded subsample of ``base.train`` (all of it when
    smaller than ``base_subsample``) plus the training-side trajectory steps
    repeated ``trajectory_upsample`` times, shuffled; validation is the base
    validation set plus the validation-side steps once. Steps are deduplicated
    on (state_before, tactic), and a step identical to a base pair still counts
    (it is a proof the model found)."""
    if base_subsample < 0 or trajectory_upsample < 0:
        raise ValueError("base_subsample and trajectory_upsample must be >= 0")
    rng = random.Random(seed)
    st = pairs_frame(steps).unique(subset=["state_before", "tactic"], keep="first", maintain_order=True)
    vseed, vfrac = base.stats.seed, base.stats.val_fraction
    step_val = pl.Series([is_val_theorem(n, vseed, vfrac) for n in st["theorem"]], dtype=pl.Boolean)
    st_train, st_val = st.filter(~step_val), st.filter(step_val)

    avail = base.train.height
    idx = sorted(rng.sample(range(avail), base_subsample)) if base_subsample < avail else list(range(avail))
    base_part = base.train[idx] if idx else base.train.clear()
    traj_part = pl.concat([st_train] * trajectory_upsample) if trajectory_upsample and st_train.height else \
        st_train.clear()
    train = pl.concat([base_part, traj_part], how="vertical")
    order = list(range(train.height))
    rng.shuffle(order)
    train = train[order] if order else train
    val = pl.concat([base.val, st_val], how="vertical")
    stats = MixStats(
        seed=seed, base_subsample=base_subsample, trajectory_upsample=trajectory_upsample,
        base_train_available=avail, base_train_used=base_part.height,
        trajectory_steps=st.height, trajectory_steps_train=st_train.height, trajectory_steps_val=st_val.height,
        trajectory_rows_train=traj_part.height, train_rows=train.height, val_rows=val.height,
        trajectory_fraction=traj_part.height / train.height if train.height else 0.0,
    )
    return Mix(train=train, val=val, stats=stats)
