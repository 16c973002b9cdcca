"""The EBM jobs the CLI and the loop stages share: encode trajectory sets,
train a head on them, measure a saved head."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import EBMConfig
from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.ebm.data import (
    ContrastiveData,
    build_data,
    fixed_groups,
    other_theorem_pool,
    split_positives,
    theorem_in_val,
)
from burnqed_core.ebm.embeddings import (
    CacheMeta,
    EmbeddingCache,
    EmbeddingMismatchError,
    EncodeReport,
    encode_states,
    policy_fingerprint,
    policy_pooling,
    trajectory_texts,
)
from burnqed_core.ebm.hindsight import path_texts
from burnqed_core.ebm.metrics import EbmMetrics, rank_metrics, separation_metrics
from burnqed_core.ebm.train import TrainReport, load_head, train_ebm
from burnqed_core.errors import DataError
from burnqed_core.records import TrajectoryRecord
from burnqed_core.trajectory_io import read_trajectories

log = logging.getLogger(__name__)


def read_trajectory_dirs(dirs: Sequence[str | Path]) -> list[TrajectoryRecord]:
    records: list[TrajectoryRecord] = []
    for d in dirs:
        records.extend(read_trajectories(d))
    return records


async def encode_trajectories(
    policy: Any,
    trajectory_dirs: Sequence[str | Path],
    cache_dir: str | Path,
    cfg: EBMConfig,
    *,
    model_path: str | Path | None = None,
    progress: bool = False,
    known: Mapping[str, Sequence[str]] | None = None,
) -> EncodeReport:
    """Encode every unique state and root goal of the trajectory sets into the cache at ``cache_dir``; with
    ``known`` (`burnqed_core.ebm.hindsight`), also the known-path states of the searched theorems."""
    records = read_trajectory_dirs(trajectory_dirs)
    texts = trajectory_texts(records)
    if known:
        have = set(texts)
        texts += [t for t in path_texts(known, sorted({r.theorem for r in records})) if t not in have]
    meta = CacheMeta(fingerprint=policy_fingerprint(policy, model_path), pooling=policy_pooling(policy),
                     text_format=format_of(policy).version,
                     model_path=str(model_path or getattr(policy, "model_path", "") or ""))
    cache = EmbeddingCache.open(cache_dir, meta)
    return await encode_states(policy, texts, cache, batch_size=cfg.encode_batch_size,
                               checkpoint_every=cfg.checkpoint_every, progress=progress)


def load_training_data(cache_dir: str | Path, trajectory_dirs: Sequence[str | Path],
                       known: Mapping[str, Sequence[str]] | None = None) -> tuple[Any, ContrastiveData, CacheMeta]:
    """(embedding matrix, contrastive data, cache meta) of the trajectory sets (with ``known``: and the hindsight
    positives of their unproved searches)."""
    cache = EmbeddingCache.load(cache_dir)
    data = build_data(read_trajectory_dirs(trajectory_dirs), known)
    if not data.keys:
        raise DataError("the trajectories hold no proof states")
    try:
        z = cache.matrix(data.keys)
    except EmbeddingMismatchError as e:
        raise EmbeddingMismatchError(f"{e}: `burnqed ebm encode` these trajectories with the same model first") \
            from None
    return z, data, cache.meta


def train_from_dirs(cache_dir: str | Path, trajectory_dirs: Sequence[str | Path], cfg: EBMConfig,
                    out_dir: str | Path, *, iteration: int | None = None, progress: bool = False,
                    known: Mapping[str, Sequence[str]] | None = None) -> TrainReport:
    z, data, meta = load_training_data(cache_dir, trajectory_dirs, known)
    return train_ebm(z, data, cfg, out_dir, meta, iteration=iteration, progress=progress)


def measure(ebm_dir: str | Path, cache_dir: str | Path, trajectory_dirs: Sequence[str | Path],
            cfg: EBMConfig, held_out_only: bool = True,
            known: Mapping[str, Sequence[str]] | None = None) -> EbmMetrics:
    """Metrics of a saved head on (the held-out theorems of) trajectory sets."""
    import torch

    head, record = load_head(ebm_dir)
    z, data, meta = load_training_data(cache_dir, trajectory_dirs, known)
    if meta.pooling != record.pooling or meta.fingerprint != record.fingerprint:
        raise EmbeddingMismatchError(f"{cache_dir} holds {meta.pooling!r} embeddings of another encoder than the EBM "
                                     f"in {ebm_dir} ({record.pooling!r}): refusing to mix")
    train_idx, val_idx = split_positives(data, cfg.val_fraction, cfg.seed)
    held_out = bool(held_out_only and val_idx)
    idx = val_idx if held_out else train_idx + val_idx
    # negatives from other theorems: those of the same split, as in training (`train.train_ebm`)
    theorems = [t for t in sorted(data.theorem_states)
                if not held_out or theorem_in_val(t, cfg.val_fraction, cfg.seed)]
    pool = other_theorem_pool(data, theorems)
    groups = fixed_groups(data, idx, record.num_negatives or cfg.num_negatives, cfg.seed, pool)
    zt = torch.from_numpy(z)
    m = rank_metrics(head, zt, data, idx, groups, split="val" if held_out else "all")
    m.separation = separation_metrics(zt, data, cfg.val_fraction, cfg.seed)
    return m
