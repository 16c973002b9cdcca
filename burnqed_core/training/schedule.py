"""Learning-rate schedules of SFT and the tiny base's pre-training: a linear warm-up, then a cosine, linear or
constant decay to a floor; an iteration's peak learning rate and step count (`iteration_schedule`)."""

from __future__ import annotations

import logging
import math
from typing import Any

from burnqed_core.config import TrainingConfig

log = logging.getLogger(__name__)

def iteration_schedule(cfg: TrainingConfig, iteration: int) -> tuple[float, int]:
    """(learning rate, max steps) for iteration N: seed 000 halves the lr each iteration and trains fewer steps."""
    if iteration <= 0:
        return cfg.lr, cfg.max_steps
    return cfg.lr * cfg.lr_decay_per_iteration ** iteration, cfg.max_steps_later


def lr_factor(k: int, warmup_steps: int, max_steps: int, schedule: str = "cosine",
              min_lr_ratio: float = 0.0) -> float:
    """LR multiplier for step k (0-based) of ``max_steps``: linear warm-up reaching 1 at step ``warmup_steps - 1``
    (the first step already moves, unlike a warm-up from 0), then ``schedule`` decay: ``cosine`` or ``linear``
    from 1 down to ``min_lr_ratio``, reached at the last step (``max_steps - 1``), or ``constant`` (1 throughout).
    With ``min_lr_ratio > 0`` every step trains: no step runs at a zero learning rate."""
    if k < warmup_steps:
        return (k + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    span = max(max_steps - warmup_steps, 1)
    progress = min(k - warmup_steps + 1, span) / span  # 1/span at the first decay step, 1 at the last step
    if schedule == "linear":
        shape = 1.0 - progress
    elif schedule == "cosine":
        shape = 0.5 * (1.0 + math.cos(math.pi * progress))
    else:
        raise ValueError(f"unknown learning-rate schedule {schedule!r} (cosine, linear, constant)")
    return min_lr_ratio + (1.0 - min_lr_ratio) * shape


def lr_schedule(warmup_steps: int, max_steps: int, schedule: str = "cosine", min_lr_ratio: float = 0.0) -> Any:
    """`lr_factor` as a function of the step, for `torch.optim.lr_scheduler.LambdaLR`."""
    if not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError(f"min_lr_ratio must be in [0, 1], got {min_lr_ratio}")
    lr_factor(warmup_steps, warmup_steps, max_steps, schedule, min_lr_ratio)  # an unknown schedule fails here

    def factor(k: int) -> float:
        return lr_factor(k, warmup_steps, max_steps, schedule, min_lr_ratio)

    return factor


def cosine_with_warmup(warmup_steps: int, max_steps: int, min_lr_ratio: float = 0.0) -> Any:
    """Linear warm-up, then cosine decay to ``min_lr_ratio`` at the last step (`lr_factor`)."""
    return lr_schedule(warmup_steps, max_steps, "cosine", min_lr_ratio)
