"""What every asset body shares: the profile and run layout, burnqed's logs
routed to ``context.log``, periodic progress of long stages, the
`MaterializeResult` built from a `StageResult`, and how a signal stops a run
of a burnqed command (through a tag of the run in the instance)."""

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

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 20.0

COMMAND_TAG = "burnqed/command"
"""The tag of the runs that ``burnqed loop`` and ``burnqed transfer`` materialise in their own process
(`burnqed_pipeline.runner.materialize_stages`): a SIGINT/SIGTERM there is meant for the command, which stops."""

INTERRUPTED_TAG = "burnqed/interrupted"
"""Set on a run of a burnqed command that a signal interrupted (`stops_the_run`): its later steps refuse to
start (`refuse_if_interrupted`). A tag of the run in the instance, not a note in this process."""


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


@contextlib.contextmanager
def stops_the_run(context: Any) -> Iterator[None]:
    """In a run of a burnqed command (`COMMAND_TAG`), a signal that interrupts the block fails the step for good
    and marks the run interrupted (`refuse_if_interrupted`). Dagster would retry an interrupted step that has a
    retry policy (the shard steps have one): the command would go on with the next shard instead of stopping.
    Elsewhere (a Celery worker or Kubernetes pod running one step, where the signal preempts that step) the
    interruption is left to Dagster and the retry policy."""
    if COMMAND_TAG not in context.run.tags:
        yield
        return
    try:
        yield
    except (dg.DagsterExecutionInterruptedError, KeyboardInterrupt) as e:
        context.instance.add_run_tags(context.run_id, {INTERRUPTED_TAG: "true"})
        log.warning("run %s interrupted: its remaining steps will not start", context.run_id[:8])
        raise dg.Failure("interrupted by a signal; run the command again to continue", allow_retries=False) from e


def refuse_if_interrupted(context: Any) -> None:
    """Fail at once a step of a run that a signal interrupted (`stops_the_run`): the run ends within moments."""
    if COMMAND_TAG not in context.run.tags:
        return
    run = context.instance.get_run_by_id(context.run_id)
    if run is not None and run.tags.get(INTERRUPTED_TAG) == "true":
        raise dg.Failure("not started: a signal interrupted this run", allow_retries=False)


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
    from burnqed_core.training.checkpoints import list_checkpoints

    def report() -> str | None:
        ckpts = list_checkpoints(run_dir)
        return f"training: checkpoint at step {int(ckpts[-1].name.split('-')[1])}" if ckpts else None

    return report


def result(context: dg.OpExecutionContext, res: StageResult, used: UsedPartitions,
           extra: Mapping[str, Any] | None = None, data_version: dg.DataVersion | None = None) -> dg.MaterializeResult:
    """Log what the stage did and return its materialisation with metadata (and its data version)."""
    where = f"[{context.partition_key}] " if context.has_partition_key else ""
    when = "unchanged inputs, skipped" if res.skipped else f"{res.seconds:.1f} s"
    context.log.info(f"{res.stage} {where}({when}): {res.summary}")
    return dg.MaterializeResult(metadata=stage_metadata(res, used, extra), data_version=data_version)


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
