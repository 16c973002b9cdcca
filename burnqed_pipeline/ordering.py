"""Iterations in order under a backfill.

A backfill of several iterations launches one run per partition at once (the asset graph has no edge from
iteration N to N-1: Dagster 1.13 has no "previous partition" mapping for dynamic partitions), while
iteration N reads the trajectories and eval results of every iteration < N. So the first stage of an
iteration (``tactic_pairs``, a CPU step outside the ``gpu`` pool, so waiting holds no GPU slot) waits while an
earlier iteration's ``trajectories`` or ``eval_report`` is unfinished but a run materialising that partition
is queued, running, or failed with an automatic retry to come; once none is, it goes on, and a still missing
earlier output fails the stage with a `LoopError` naming the partition to materialise first. The runs of a
backfill therefore finish their iterations in order whatever order they start in.

A waiting run holds a place in the run queue (``run_queue.max_concurrent_runs``, 10 by default). If every run
it waits for stays queued for `QUEUED_TIMEOUT_S` (the queue is full of later iterations waiting), the stage fails
with a message saying so: its run retry goes to the back of the queue and the earlier iteration gets the place.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import dagster as dg

from burnqed_core.loop.inputs import LoopError
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.markers import is_done
from burnqed_core.loop.stages import SPECS

POLL_S = 30.0
QUEUED_TIMEOUT_S = 900.0
LOG_EVERY_S = 300.0
# the stages whose outputs of earlier iterations some stage reads (the specs' ``earlier``)
EARLIER_STAGES = tuple(dict.fromkeys(s.earlier for s in SPECS if s.earlier is not None))
QUEUED = frozenset({dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED})
IN_FLIGHT = (dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
             dg.DagsterRunStatus.STARTED)


def _selects(run: dg.DagsterRun, asset: str) -> bool:
    return run.asset_selection is None or dg.AssetKey(asset) in run.asset_selection


def runs_materialising(instance: dg.DagsterInstance, asset: str, partition: str,
                       exclude: str | None = None) -> list[dg.DagsterRun]:
    """Runs that will still materialise ``asset[partition]``: queued or running, or failed with an automatic
    retry not launched yet (``dagster/will_retry`` without ``dagster/auto_retry_run_id``)."""
    out = []
    for run in instance.get_runs(dg.RunsFilter(statuses=[*IN_FLIGHT, dg.DagsterRunStatus.FAILURE],
                                               tags={"dagster/partition": partition}), limit=50):
        if run.run_id == exclude or not _selects(run, asset):
            continue
        if run.status == dg.DagsterRunStatus.FAILURE and not (
                run.tags.get("dagster/will_retry") == "true" and "dagster/auto_retry_run_id" not in run.tags):
            continue
        out.append(run)
    return out


def wait_for_earlier_iterations(context: dg.AssetExecutionContext, layout: BaseLayout, n: int, needed_by: str,
                                poll_s: float | None = None, sleep: Callable[[float], None] = time.sleep) -> float:
    """Wait while an unfinished earlier stage (`EARLIER_STAGES` of iterations < ``n``) is being materialised by
    another run; return the seconds waited. Returns at once when nothing earlier is missing or in flight."""
    poll = POLL_S if poll_s is None else poll_s
    t0 = last_log = time.monotonic()
    queued_since: float | None = None
    logged = False
    while True:
        pending: list[str] = []
        all_queued = True
        for k in range(n):
            for asset in EARLIER_STAGES:
                if is_done(layout.iteration(k).stage(asset)):
                    continue
                runs = runs_materialising(context.instance, asset, str(k), exclude=context.run_id)
                if runs:
                    pending.append(f"{asset}[{k}] (run {runs[0].run_id[:8]}, {runs[0].status.value})")
                    all_queued = all_queued and all(r.status in QUEUED for r in runs)
        now = time.monotonic()
        waited = now - t0
        if not pending:
            if logged:
                context.log.info(f"{needed_by}: earlier iterations done after {waited:.0f} s, going on")
            return waited
        queued_since = (queued_since or now) if all_queued else None
        if queued_since is not None and now - queued_since >= QUEUED_TIMEOUT_S:
            raise LoopError(f"{needed_by} waited {waited:.0f} s for {', '.join(pending)}, which stayed queued: "
                            "the run queue is full of later iterations (run_queue.max_concurrent_runs); this run "
                            "fails so that its retry queues behind them")
        if not logged or time.monotonic() - last_log >= LOG_EVERY_S:
            context.log.info(f"{needed_by} waits for {', '.join(pending)}: iterations run in order (a run whose "
                             "process is gone stays STARTED until it is terminated in the UI)")
            logged, last_log = True, time.monotonic()
        sleep(poll)
