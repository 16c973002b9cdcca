"""Running the pipeline's assets in-process in tests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.bindings import default_resources
from burnqed_pipeline.resources import ProfileResource, kept_resources
from burnqed_pipeline.services import StageRuntime

#: The runtime lent to the runs of this test process (`lent`): tests only. A reconstructable job
#: (`iteration_job`), re-built by Dagster from its module, finds it here; the pipeline itself keeps none.
_LENT: dict[str, StageRuntime] = {}


def resources(profile_path: Path, runtime: StageRuntime | None = None) -> dict[str, Any]:
    """The profile and the run's services: those of ``runtime`` (e.g. `lend`'s, the test session's loop and Lean),
    else of the one `lent` to this process, else the code location's (set up and torn down with each run)."""
    rt = runtime if runtime is not None else _LENT.get("runtime")
    services = kept_resources(rt) if rt is not None else {k: v for k, v in default_resources().items()
                                                           if k != "profile"}
    return {"profile": ProfileResource(profile=str(profile_path)), **services}


def lend(env: Any) -> StageRuntime:
    """Services on the running test loop (call from a coroutine) with the session's Lean ``env``: the pipeline
    uses them from another thread (``asyncio.to_thread``) and never closes them."""
    import asyncio

    return StageRuntime.lending(asyncio.get_running_loop(), env)


@contextlib.contextmanager
def lent(runtime: StageRuntime) -> Iterator[StageRuntime]:
    """Within the block, the runs of this process (`resources`, `iteration_job`) use ``runtime``."""
    if _LENT:
        raise RuntimeError("a runtime is already lent")
    _LENT["runtime"] = runtime
    try:
        yield runtime
    finally:
        _LENT.clear()


def all_assets() -> list[Any]:
    return list(defs().assets or [])


def materialize(instance: dg.DagsterInstance, res: dict[str, Any], selection: list[str],
                partition: str | None = None, raise_on_error: bool = True) -> dg.ExecuteInProcessResult:
    return dg.materialize(all_assets(), instance=instance, resources=res, selection=selection,
                          partition_key=partition, raise_on_error=raise_on_error)


def metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    """asset key -> its materialisation metadata, values unwrapped."""
    out: dict[str, dict[str, Any]] = {}
    for ev in result.get_asset_materialization_events():
        m = ev.event_specific_data.materialization
        out[m.asset_key.to_user_string()] = {k: getattr(v, "value", v) for k, v in m.metadata.items()}
    return out


def failure_message(result: dg.ExecuteInProcessResult) -> str:
    for ev in result.all_events:
        if ev.is_step_failure:
            err = ev.event_specific_data.error
            while err.cause is not None:
                err = err.cause
            return err.message
    return ""


def iteration_job() -> dg.JobDefinition:
    """The code location's ``iteration`` job (resources from ``BURNQED_PROFILE``; the runtime `lent` to this
    process, if any), for `dg.reconstructable`: `dg.execute_job` runs and re-executes (from failure) runs of
    it against a persistent instance."""
    d = defs()
    if not _LENT:
        return d.resolve_job_def("iteration")
    from burnqed_pipeline.defs.jobs import iteration_job as job

    return dg.Definitions(assets=list(d.assets or []), jobs=[job], executor=dg.in_process_executor,
                          resources={**default_resources(), **kept_resources(_LENT["runtime"])}
                          ).resolve_job_def("iteration")


def step_keys(result: dg.ExecutionResult, event: str = "STEP_START") -> list[str]:
    """The keys of the steps of a run that reported ``event`` (STEP_START, STEP_SUCCESS, STEP_FAILURE)."""
    return [e.step_key for e in result.all_events if e.event_type_value == event and e.step_key]
