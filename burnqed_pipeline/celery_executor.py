"""dagster-celery's executor, with lost workers noticed.

`dagster_celery.celery_executor` sends each step as a Celery task and polls its result. When the worker
running a step dies with its whole process group (a spot machine reclaimed, ``kill -9`` of the worker), no
one ever writes that result: the run waits for ever. When only the pool process dies, Celery records a
``WorkerLostError`` and dagster-celery fails the run without a step event.

`celery_executor` here is the same executor (same config, same Celery app, same task and core loop), with
each step's result watched: a task that started on a worker which has not answered a ping for
``lost_worker_after_s`` seconds, or that ended in ``WorkerLostError``, is revoked (with SIGKILL, in case its
worker was only cut off) and reported the way Dagster's step-delegating executors report a failed health
check: `Executor.log_failure_or_retry_event_after_error`. So the step's own `RetryPolicy` applies (the
search and eval shard steps have one: the step is sent again, to a live worker, and the shard resumes from
its flushed parts); without one the step fails and the run fails, for run retries to re-execute from
failure. Requires ``task_track_started`` (the started task names its worker; the shipped run config sets it)
and ``retries: enabled`` for step retries.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import dagster as dg
from dagster._core.events import DagsterEvent
from dagster._serdes import serialize_value
from dagster._utils.error import SerializableErrorInfo
from dagster_celery.executor import CELERY_CONFIG, CeleryExecutor, _submit_task

log = logging.getLogger(__name__)

LOST_AFTER_S = 60.0
PING_EVERY_S = 5.0
POLL_S = 0.2
"""How often the run process looks at its steps' results. dagster-celery's core loop sleeps its module's
``TICK_SECONDS`` (1 s) between looks, so each step of a chain (a skipped one takes ~0.3 s on a worker) waited up
to a second before the next was sent; a look is one result-backend read per running step."""


class WorkerWatch:
    """Which workers still answer: one broadcast ping every `PING_EVERY_S` for the workers running steps."""

    def __init__(self, app: Any, lost_after_s: float) -> None:
        self.app = app
        self.lost_after_s = lost_after_s
        self.last_seen: dict[str, float] = {}
        self.last_ping = 0.0

    def silent_for(self, worker: str) -> float:
        """Seconds since ``worker`` last answered (0 the first time it is asked about). While the broker is
        unreachable nobody can answer and nobody is blamed: the clocks start again when it is back."""
        now = time.monotonic()
        self.last_seen.setdefault(worker, now)
        if now - self.last_ping >= PING_EVERY_S:
            self.last_ping = now
            try:
                replies = self.app.control.ping(destination=list(self.last_seen), timeout=2.0) or []
            except Exception as e:
                log.warning("celery ping failed (broker unreachable?): %s", e)
                self.last_seen = dict.fromkeys(self.last_seen, time.monotonic())
                return 0.0
            for r in replies:
                for name in r:
                    self.last_seen[name] = now
        return time.monotonic() - self.last_seen[worker]


class WatchedResult:
    """A step's `celery.result.AsyncResult` as the core loop uses it (``ready``, ``get``, ``revoke``), which
    also becomes ready when the step's worker is lost."""

    def __init__(self, result: Any, watch: WorkerWatch, executor: WatchedCeleryExecutor, plan_context: Any,
                 step: Any, known_state: Any) -> None:
        self.result = result
        self.watch = watch
        self.executor = executor
        self.plan_context = plan_context
        self.step = step
        self.known_state = known_state
        self.lost: str | None = None

    def _worker(self) -> tuple[str, Any] | None:
        if self.result.state != "STARTED":
            return None
        info = self.result.info
        if isinstance(info, dict) and info.get("hostname"):
            return str(info["hostname"]), info.get("pid")
        return None

    def ready(self) -> bool:
        if self.lost is not None:
            return True
        if self.result.ready():
            return True
        started = self._worker()
        if started is None:
            return False
        worker, pid = started
        silent = self.watch.silent_for(worker)
        if silent >= self.watch.lost_after_s:
            self.lost = (f"celery worker {worker} (pid {pid}) running step {self.step.key} has not answered for "
                         f"{silent:.0f} s: lost")
            self.result.revoke(terminate=True, signal="SIGKILL")
            return True
        return False

    def get(self) -> list[str]:
        if self.lost is None:
            try:
                return self.result.get()
            except Exception as e:
                if type(e).__name__ != "WorkerLostError":
                    raise
                self.lost = f"celery worker lost while running step {self.step.key}: {e}"
        return [serialize_value(self._report(self.lost))]

    def _report(self, message: str) -> DagsterEvent:
        """STEP_UP_FOR_RETRY when the step's retry policy allows another attempt, else STEP_FAILURE (logged)."""
        err = SerializableErrorInfo(message=message, stack=[], cls_name="WorkerLost")
        return self.executor.log_failure_or_retry_event_after_error(self.plan_context.for_step(self.step), err,
                                                                    self.known_state)

    def revoke(self, *args: Any, **kwargs: Any) -> None:
        self.result.revoke(*args, **kwargs)


class WatchedCeleryExecutor(CeleryExecutor):
    def __init__(self, lost_worker_after_s: float = LOST_AFTER_S, poll_s: float = POLL_S, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lost_worker_after_s = lost_worker_after_s
        self.poll_s = poll_s

    def execute(self, plan_context: Any, execution_plan: Any) -> Any:
        from dagster_celery import core_execution_loop as loop
        from dagster_celery.make_app import make_app

        loop.TICK_SECONDS = self.poll_s  # read by the loop at each turn; a run process runs one executor

        watch = WorkerWatch(make_app(self.app_args()), self.lost_worker_after_s)

        def submit(app: Any, context: Any, step: Any, queue: str, priority: int, known_state: Any) -> WatchedResult:
            res = _submit_task(app, context, step, queue, priority, known_state)
            return WatchedResult(res, watch, self, context, step, known_state)

        return loop.core_celery_execution_loop(plan_context, execution_plan, step_execution_fn=submit)


@dg.executor(
    name="celery",
    config_schema={**CELERY_CONFIG, "lost_worker_after_s": dg.Field(
        float, is_required=False, default_value=LOST_AFTER_S,
        description="a started step whose worker has not answered pings for this long is lost: revoked and "
                    "failed or retried (its retry policy)"),
        "poll_s": dg.Field(float, is_required=False, default_value=POLL_S,
                           description="seconds between the run process's looks at its running steps' results "
                                       "(dagster-celery's own loop: 1 s)")},
    requirements=dg.multiple_process_executor_requirements(),
)
def celery_executor(init_context: dg.InitExecutorContext) -> WatchedCeleryExecutor:
    """dagster-celery's executor (same config) that notices lost workers (module docstring)."""
    from dagster._core.execution.retries import RetryMode

    cfg = init_context.executor_config
    return WatchedCeleryExecutor(
        lost_worker_after_s=float(cfg.get("lost_worker_after_s", LOST_AFTER_S)),
        poll_s=float(cfg.get("poll_s", POLL_S)),
        broker=cfg.get("broker"), backend=cfg.get("backend"), config_source=cfg.get("config_source"),
        include=cfg.get("include"), retries=RetryMode.from_config(cfg["retries"]),
    )
