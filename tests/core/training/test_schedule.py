"""The learning-rate schedule: warm-up, decay to a floor, no wasted last step."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from burnqed_core.training.schedule import cosine_with_warmup, lr_factor, lr_schedule


def factors(warmup: int, steps: int, schedule: str = "cosine", floor: float = 0.1) -> list[float]:
    f = lr_schedule(warmup, steps, schedule, floor)
    return [f(k) for k in range(steps)]


def test_cosine_warmup_then_decay_to_the_floor_at_the_last_step() -> None:
    fs = factors(4, 20, "cosine", 0.1)
    assert fs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])  # the first step already moves
    decay = fs[4:]
    assert all(a > b for a, b in itertools.pairwise(decay))  # strictly decreasing after warm-up
    assert fs[-1] == pytest.approx(0.1)  # the last step trains at the floor, not at 0
    assert min(fs) > 0
    # values: cosine over the 16 decay steps, scaled into [0.1, 1]
    k = 11
    p = (k - 4 + 1) / 16
    assert fs[k] == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))
    assert fs[4 + 8 - 1] == pytest.approx(0.55)  # half-way through the decay: mid-point of 1 and the floor


def test_linear_and_constant() -> None:
    fs = factors(2, 12, "linear", 0.2)
    assert fs[:2] == pytest.approx([0.5, 1.0])
    steps = [fs[k] - fs[k + 1] for k in range(2, 11)]
    assert steps == pytest.approx([0.8 / 10] * 9)  # equal decrements
    assert fs[-1] == pytest.approx(0.2)
    assert factors(3, 10, "constant", 0.5) == pytest.approx([1 / 3, 2 / 3] + [1.0] * 8)


def test_floor_zero_is_the_old_schedule_and_wastes_the_last_step() -> None:
    old = cosine_with_warmup(10, 150)
    assert old(149) == 0.0  # what the floor exists to avoid
    assert cosine_with_warmup(10, 150, 0.1)(149) == pytest.approx(0.1)
    assert lr_factor(10, 10, 150) == pytest.approx(0.5 * (1 + math.cos(math.pi / 140)))


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="schedule"):
        lr_schedule(2, 10, "exponential", 0.1)
    with pytest.raises(ValueError, match="min_lr_ratio"):
        lr_schedule(2, 10, "cosine", 1.5)


def test_lambda_lr_applies_it() -> None:
    """What the optimiser sees at each step, through torch's LambdaLR as the training loop uses it."""
    w = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.AdamW([w], lr=2e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_schedule(3, 9, "cosine", 0.1))
    seen = []
    for _ in range(9):
        seen.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    assert seen[0] == pytest.approx(2e-3 / 3) and max(seen) == pytest.approx(2e-3)
    assert seen[-1] == pytest.approx(2e-4)
