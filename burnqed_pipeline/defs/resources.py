"""The code location's resources and executor: the profile named by ``BURNQED_PROFILE`` (default tiny), the run's
services (`burnqed_pipeline.resources.RuntimeResource`: the SGLang server launched by the pipeline when
``BURNQED_SGLANG_LAUNCH=1``, else attached to ``policy.sglang.url``; a Celery worker's own services when
``BURNQED_KEEP_LEAN=1``), and the executor ``BURNQED_EXECUTOR`` names (`burnqed_pipeline.executors`)."""

from __future__ import annotations

import os
from typing import Any

import dagster as dg

from burnqed_pipeline.executors import pipeline_executor
from burnqed_pipeline.resources import ProfileResource, RuntimeResource

#: ``1``: steps run by a Celery worker process use the services it keeps (one Lean pool per worker,
#: `burnqed_pipeline.deploy.worker`); `burnqed_pipeline.deploy.local_celery` sets it.
KEEP_LEAN_ENV = "BURNQED_KEEP_LEAN"


def default_resources() -> dict[str, Any]:
    return {
        "profile": ProfileResource(profile=os.environ.get("BURNQED_PROFILE", "tiny")),
        "runtime": RuntimeResource(launch_sglang=os.environ.get("BURNQED_SGLANG_LAUNCH") == "1",
                                   keep=os.environ.get(KEEP_LEAN_ENV) == "1"),
    }


@dg.definitions
def resources() -> dg.Definitions:
    # By default one process runs every step of a run: the Lean pool and the loaded policy serve all of its
    # stages. BURNQED_EXECUTOR picks another executor (Kubernetes, celery: `burnqed_pipeline.executors`).
    return dg.Definitions(resources=default_resources(), executor=pipeline_executor())
