"""Running the pipeline's assets in-process in tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource


def resources(profile_path: Path, launch: bool = False) -> dict[str, Any]:
    p = ProfileResource(profile=str(profile_path))
    return {"profile": p, "lean": LeanResource(profile=p), "policy": PolicyResource(profile=p, launch=launch)}


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
    """The code location's ``iteration`` job (resources from ``BURNQED_PROFILE``), for `dg.reconstructable`:
    `dg.execute_job` runs and re-executes (from failure) runs of it against a persistent instance."""
    return defs().resolve_job_def("iteration")


def step_keys(result: dg.ExecutionResult, event: str = "STEP_START") -> list[str]:
    """The keys of the steps of a run that reported ``event`` (STEP_START, STEP_SUCCESS, STEP_FAILURE)."""
    return [e.step_key for e in result.all_events if e.event_type_value == event and e.step_key]
