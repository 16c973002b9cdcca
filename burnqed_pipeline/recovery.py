"""Runs whose process is gone, on a single box.

A run process killed by SIGKILL (a spot reclaim, the OOM killer) reports nothing: its run stays STARTED and
keeps its ``gpu`` pool slot, so the next GPU step of any run would wait for ever, and run retries never see a
failure (Dagster's default run launcher cannot check a dead worker; on Kubernetes run monitoring does).
`recover_dead_runs` finds STARTED runs whose process (the pid of their RUN_START event, on this machine) no
longer exists, or is another process that started later, marks them failed (``UNEXPECTED_TERMINATION``:
run retries then re-execute them from failure when the daemon runs) and frees their pool slots.
``burnqed loop`` does this before it starts; ``burnqed recover`` does it on demand.
"""

from __future__ import annotations

import logging

import dagster as dg
import psutil
from dagster._core.events import DagsterEventType, JobFailureData, RunFailureReason

log = logging.getLogger(__name__)

IN_PROGRESS = (dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING)


def run_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid of the process that started ``run_id`` (its RUN_START event), or None."""
    for entry in instance.all_logs(run_id, of_type=DagsterEventType.RUN_START):
        if entry.dagster_event is not None and entry.dagster_event.pid is not None:
            return int(entry.dagster_event.pid)
    return None


def process_alive(pid: int, started_by: float) -> bool:
    """Whether process ``pid`` exists and was created by ``started_by`` (a later one reuses the number)."""
    try:
        proc = psutil.Process(pid)
        return proc.status() != psutil.STATUS_ZOMBIE and proc.create_time() <= started_by + 1.0
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def dead_runs(instance: dg.DagsterInstance) -> list[tuple[dg.DagsterRun, int]]:
    """In-progress runs of this instance whose run process is gone, with that process's pid."""
    out = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=list(IN_PROGRESS))):
        run = record.dagster_run
        pid = run_pid(instance, run.run_id)
        if pid is None:
            continue
        started = record.start_time or record.create_timestamp.timestamp()
        if not process_alive(pid, started):
            out.append((run, pid))
    return out


def recover_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark every run whose process is gone failed and free its pool slots; returns one line per run."""
    lines = []
    for run, pid in dead_runs(instance):
        msg = f"run process {pid} is gone (killed or preempted): marked failed by burnqed"
        instance.report_run_failed(run, msg, JobFailureData(error=None,
                                                            failure_reason=RunFailureReason.UNEXPECTED_TERMINATION))
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        line = f"run {run.run_id[:8]} ({run.job_name}, {run.tags.get('dagster/partition', 'no partition')}): {msg}"
        log.warning("%s", line)
        lines.append(line)
    return lines
