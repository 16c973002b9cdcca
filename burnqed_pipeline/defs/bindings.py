"""The code location's resources and executor.

* ``profile``: the profile named by the ``BURNQED_PROFILE`` environment variable (``dg.EnvVar``: read when a run
  starts, never at load; a run fails naming it when it is unset);
* ``event_loop``, ``lean``, ``policy``: the run's loop, Lean pool and policy (`burnqed_pipeline.resources`); the
  loop is bound with ``configure_at_launch``, so that the pool and the policy share the run's one loop. The
  launchpad shows their fields (the pool's and the policy's machine settings, ``keep`` for Celery workers); the
  defaults keep the profile's settings;
* the executor that ``BURNQED_EXECUTOR`` names (`burnqed_pipeline.executors`): an executor is part of the
  definitions, so this one is read at load.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from burnqed_pipeline.executors import pipeline_executor
from burnqed_pipeline.resources import EventLoopResource, LeanPoolResource, PolicyResource, ProfileResource

PROFILE_ENV = "BURNQED_PROFILE"


def default_resources() -> dict[str, Any]:
    loop = EventLoopResource.configure_at_launch()
    return {"profile": ProfileResource(profile=dg.EnvVar(PROFILE_ENV)), "event_loop": loop,
            "lean": LeanPoolResource(event_loop=loop), "policy": PolicyResource(event_loop=loop)}


@dg.definitions
def resources() -> dg.Definitions:
    # By default one process runs every step of a run: the Lean pool and the loaded policy serve all of its
    # stages. BURNQED_EXECUTOR picks another executor (Kubernetes, celery: `burnqed_pipeline.executors`).
    return dg.Definitions(resources=default_resources(), executor=pipeline_executor())
