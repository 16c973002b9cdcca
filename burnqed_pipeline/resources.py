"""The resources of the pipeline's assets: the profile (`ProfileResource`) and the run's services
(`RuntimeResource`: the event loop, the Lean pool and the policy, `burnqed_pipeline.services.StageRuntime`).

Their lifetimes are Dagster's: a resource is set up when a run (in-process executor) or a step (multiprocess,
Celery, Kubernetes) starts and torn down when it ends. Two owners keep services longer, explicitly: a command
that materialises many runs in one process passes its own `StageRuntime` as the ``runtime`` resource
(`burnqed_pipeline.runner`), and a Celery worker process keeps one from its start to its shutdown
(`burnqed_pipeline.deploy.worker`), which `RuntimeResource` with ``keep`` uses when it runs there.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
from pydantic import PrivateAttr

from burnqed_core.config import LeanConfig, Profile, load_profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_pipeline.services import StageRuntime

T = TypeVar("T")


#: the attribute of a Celery worker's app that holds the worker process's `StageRuntime`
WORKER_RUNTIME_ATTR = "burnqed_runtime"


class ProfileResource(dg.ConfigurableResource):
    """The burnqed profile every stage reads: loaded once per resource instance (once per run), at the first
    `load`, which reads the files and the ``BURNQED_*`` environment; later calls return the same (frozen,
    shareable) `Profile`."""

    profile: str = "tiny"
    work_dir: str | None = None
    _loaded: Profile | None = PrivateAttr(default=None)

    def load(self) -> Profile:
        if self._loaded is None:
            overrides = {"paths.work_dir": self.work_dir} if self.work_dir else None
            self._loaded = load_profile(self.profile, overrides=overrides)
        return self._loaded


def worker_runtime() -> StageRuntime | None:
    """The `StageRuntime` of the Celery worker process this runs in (`burnqed_pipeline.deploy.worker`), if any."""
    try:
        from celery import current_app
    except ImportError:
        return None
    rt = getattr(current_app, WORKER_RUNTIME_ATTR, None)
    return rt if isinstance(rt, StageRuntime) else None


class RuntimeResource(dg.ConfigurableResource):
    """The run's services (`StageRuntime`), made on first use and closed when the run (or step) ends; with
    ``keep`` inside a Celery worker, the worker process's own (never closed here)."""

    launch_sglang: bool = False
    keep: bool = False
    _rt: StageRuntime | None = PrivateAttr(default=None)
    _owned: bool = PrivateAttr(default=False)

    def _runtime(self) -> StageRuntime:
        if self._rt is None:
            kept = worker_runtime() if self.keep else None
            if kept is not None:
                self._rt, self._owned = kept, False
            else:
                self._rt, self._owned = StageRuntime(launch_sglang=self.launch_sglang), True
        return self._rt

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runtime().run(coro)

    async def lean(self, settings: LeanConfig) -> ProofEnv:
        return await self._runtime().lean(settings)

    async def policy(self, profile: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        return await self._runtime().policy(profile, model_path, iteration)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        rt, self._rt = self._rt, None
        if rt is not None and self._owned:
            rt.close()
