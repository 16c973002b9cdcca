"""What every asset body shares: the profile and run layout, burnqed's logs
routed to ``context.log``, periodic progress of long stages, and the
`MaterializeResult` built from a `StageResult`."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_core.config import Profile
from burnqed_core.loop.inputs import UsedPartitions
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.records import StageResult
from burnqed_pipeline.metadata import stage_metadata

PROGRESS_EVERY_S = 20.0


@dataclass(frozen=True)
class Stage:
    profile: Profile
    layout: BaseLayout


def stage(profile: Profile) -> Stage:
    return Stage(profile=profile, layout=BaseLayout(root=Path(profile.paths.work_dir)))


class _ToDagster(logging.Handler):
    def __init__(self, context: dg.OpExecutionContext) -> None:
        super().__init__(logging.INFO)
        self.context = context

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = f"{record.name}: {record.getMessage()}"
            if record.levelno >= logging.WARNING:
                self.context.log.warning(msg)
            else:
                self.context.log.info(msg)
        except Exception:  # logging must never break a stage
            self.handleError(record)


@contextlib.contextmanager
def logs_to(context: dg.OpExecutionContext) -> Iterator[None]:
    """Within the block, INFO+ records of burnqed's loggers also go to ``context.log`` (the run's event log)."""
    handler = _ToDagster(context)
    loggers = [logging.getLogger("burnqed_core"), logging.getLogger("burnqed_pipeline")]
    old = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        if lg.getEffectiveLevel() > logging.INFO:
            lg.setLevel(logging.INFO)
    try:
        yield
    finally:
        for lg, level in zip(loggers, old, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)


@contextlib.contextmanager
def progress(context: dg.OpExecutionContext, report: Callable[[], str | None],
             every_s: float = PROGRESS_EVERY_S) -> Iterator[None]:
    """Log ``report()`` every ``every_s`` seconds while the block runs (theorems searched / total, training
    steps), in place of a terminal progress bar."""
    stop = threading.Event()
    last: list[str | None] = [None]

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                line = report()
            except Exception:
                line = None
            if line and line != last[0]:
                context.log.info(f"progress: {line}")
                last[0] = line

    t = threading.Thread(target=loop, name="burnqed-progress", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(timeout=5)


def searched_progress(out_dir: Path, total: int) -> Callable[[], str | None]:
    """Theorems saved so far in the ``*.traj`` outputs under ``out_dir`` (flushed parts), of ``total`` each."""
    from burnqed_core.trajectory_io import finished_theorems

    def report() -> str | None:
        parts = []
        for d in sorted(out_dir.rglob("*.traj")):
            if d.is_dir():
                parts.append(f"{d.name}: {len(finished_theorems(d))}/{total} theorems searched")
        return "; ".join(parts) or None

    return report


def training_progress(run_dir: Path) -> Callable[[], str | None]:
    """The latest checkpoint's step under a training run dir."""
    from burnqed_core.training.sft import list_checkpoints

    def report() -> str | None:
        ckpts = list_checkpoints(run_dir)
        return f"training: checkpoint at step {int(ckpts[-1].name.split('-')[1])}" if ckpts else None

    return report


def result(context: dg.OpExecutionContext, res: StageResult, used: UsedPartitions,
           extra: Mapping[str, Any] | None = None) -> dg.MaterializeResult:
    """Log what the stage did and return its materialisation with metadata."""
    where = f"[{context.partition_key}] " if context.has_partition_key else ""
    when = "unchanged inputs, skipped" if res.skipped else f"{res.seconds:.1f} s"
    context.log.info(f"{res.stage} {where}({when}): {res.summary}")
    return dg.MaterializeResult(metadata=stage_metadata(res, used, extra))


def worker_name() -> str:
    """Where this step runs: the Celery worker's node name (``w1@host``) inside a Celery task, else
    ``host:pid``."""
    try:
        from celery import current_task

        hostname = getattr(getattr(current_task, "request", None), "hostname", None)
        if hostname:
            return str(hostname)
    except ImportError:
        pass
    return f"{socket.gethostname()}:{os.getpid()}"


def shard_workers(results: Any) -> dict[str, Any]:
    """Which worker ran each shard (the merge step's metadata): ``{"shard_workers": {shard: worker},
    "workers": n}``."""
    ran = {f"shard_{r.index:05d}": r.worker or "?" for r in sorted(results, key=lambda r: r.index)}
    return {"shard_workers": dg.MetadataValue.json(ran), "workers": len(set(ran.values()))}


def first_served(results: Any) -> dict[str, Any]:
    """What the policy served in the first shard that ran (or recorded it), for the merged stage's metadata."""
    for r in results:
        served = r.metrics.get("served")
        if served:
            return dict(served)
    return {}
