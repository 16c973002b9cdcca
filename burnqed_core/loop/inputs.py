"""What a stage of iteration N reads besides its own iteration's outputs, and the errors of a missing input.

Iteration N reads iteration N-1's adapter or merged model (warm start), the
trajectories of every iteration < N (training mix, theorem selection, EBM)
and the eval results of every iteration < N ("newly solved"). These are not
edges of the Dagster asset graph (a back edge would close a cycle, and
Dagster 1.13 has no "previous partition" mapping for dynamic partitions),
so they are read through the run directory layout (`burnqed_core.loop.spec.resolve`),
and a missing one is an error naming the iteration (the partition) to
materialise first. The pipeline records in each materialisation which
iterations it used (`UsedPartitions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from burnqed_core.errors import BurnqedError
from burnqed_core.loop.markers import is_done


class LoopError(BurnqedError):
    """The loop cannot run as asked (e.g. iteration N before N-1)."""


def require(stage_dir: Path, what: str, iteration: int | None, needed_by: str) -> Path:
    """``stage_dir`` if its stage finished, else a `LoopError` naming the partition to materialise."""
    if is_done(stage_dir):
        return stage_dir
    where = f"{what}[{iteration}]" if iteration is not None else what
    raise LoopError(f"{needed_by} needs {where}, which is not materialised ({stage_dir} has no finished output): "
                    f"materialise {where} first")


def trajectory_dirs(stage_dirs: Sequence[Path]) -> list[Path]:
    """Every search output (``*.traj``) in the given ``trajectories`` stage folders."""
    return [p for d in stage_dirs for p in sorted(Path(d).glob("*.traj")) if p.is_dir()]


class UsedPartitions(BaseModel):
    """Which iterations' outputs a stage read, for the materialisation metadata."""

    model_config = ConfigDict(frozen=True)
    same_iteration: list[str]
    earlier: dict[str, list[int]]

    def describe(self) -> str:
        parts = list(self.same_iteration)
        parts += [f"{k}[{', '.join(map(str, v))}]" for k, v in self.earlier.items() if v]
        return ", ".join(parts) or "none"
