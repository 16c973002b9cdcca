"""What a Celery worker process keeps from its start to its shutdown: one `StageRuntime` (the event loop, the
Lean pool, the policy), so that the steps it runs one after another share one Lean start.

The worker imports this module at its start (``dagster-celery worker start -i burnqed_pipeline.deploy.worker``,
as `burnqed_pipeline.deploy.local_celery` starts them): the runtime is made when each worker process starts
and closed when it shuts down (Celery's ``worker_process_init`` / ``worker_process_shutdown`` signals), and
held by the worker's Celery app, where the run's `burnqed_pipeline.resources.EventLoopResource` with ``keep``
(deploy/celery/run_config.yaml) finds it: the run's Lean pool and policy resources then use its pool and policy.
The SGLang server is launched by the worker when ``BURNQED_SGLANG_LAUNCH=1`` in its environment (a worker's
setting, read when its process starts), else attached to.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import current_app
from celery.signals import worker_process_init, worker_process_shutdown

from burnqed_pipeline.resources import WORKER_RUNTIME_ATTR
from burnqed_pipeline.services import StageRuntime

log = logging.getLogger(__name__)


@worker_process_init.connect
def open_runtime(**_: Any) -> None:
    setattr(current_app, WORKER_RUNTIME_ATTR,
            StageRuntime(launch_sglang=os.environ.get("BURNQED_SGLANG_LAUNCH") == "1"))
    log.info("burnqed: this worker process keeps one runtime (Lean pool, policy) for its steps")


@worker_process_shutdown.connect
def close_runtime(**_: Any) -> None:
    rt = getattr(current_app, WORKER_RUNTIME_ATTR, None)
    if isinstance(rt, StageRuntime):
        delattr(current_app, WORKER_RUNTIME_ATTR)
        rt.close()
