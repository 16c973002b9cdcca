"""The run's services bound to an owner that outlives runs (`kept_resources`): a command that materialises many
runs in one process (``burnqed loop``, ``burnqed transfer``), or a test that lends its loop and Lean.

Dagster sets a resource up afresh for each run (a new instance from its config), so a resource cannot carry an
open pool from one run to the next. The owner's `StageRuntime` travels instead inside an `EventLoopResource`
handed to Dagster as it is (``ResourceDefinition.hardcoded_resource``: no set-up, no tear-down); the Lean pool
and policy resources depend on it and, at their set-up, use its owner's pool and policy, which they leave open.
"""


from typing import Any

import dagster as dg

from burnqed_pipeline.resources.event_loop import EventLoopResource
from burnqed_pipeline.resources.lean_pool import LeanPoolResource
from burnqed_pipeline.resources.policy import PolicyResource
from burnqed_pipeline.services import StageRuntime


def kept_loop(kept: StageRuntime) -> dg.ResourceDefinition:
    """The ``event_loop`` resource of ``kept``: what `LeanPoolResource` and `PolicyResource` depend on."""
    return dg.ResourceDefinition.hardcoded_resource(EventLoopResource.over(kept), "the owner's kept loop")


def kept_resources(kept: StageRuntime) -> dict[str, Any]:
    """``event_loop``, ``lean`` and ``policy`` for runs served by ``kept`` (its pool and policy, never closed by
    the runs)."""
    loop = kept_loop(kept)
    return {"event_loop": loop, "lean": LeanPoolResource(event_loop=loop), "policy": PolicyResource(event_loop=loop)}
