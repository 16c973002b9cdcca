"""The run's event loop (`EventLoopResource`): the asyncio loop, in a thread of its own, that the Lean pool and
the policy belong to and that asset bodies submit the stages' coroutines to (`burnqed_pipeline.runtime`).

`burnqed_pipeline.resources.LeanPoolResource` and `burnqed_pipeline.resources.PolicyResource` depend on it
(``ResourceDependency``): bound to the same instance (the code location binds it with ``configure_at_launch``,
so that Dagster hands every resource the run's one instance), they start their services on its loop.

Its lifetime is the run's (or, with the multiprocess, Celery or Kubernetes executor, the step's). Two owners
keep services longer: a Celery worker process (`burnqed_pipeline.deploy.worker`), whose `StageRuntime` the
resource uses with ``keep`` when the step runs there, and a command that materialises many runs in one process,
whose runs get a resource bound to its `StageRuntime` (`kept_resources`).
"""


from collections.abc import Coroutine
from typing import Any, Self, TypeVar

import dagster as dg
from pydantic import Field, PrivateAttr

from burnqed_pipeline.runtime import AsyncRuntime
from burnqed_pipeline.services import StageRuntime

T = TypeVar("T")

#: the attribute of a Celery worker's app that holds the worker process's `StageRuntime`
WORKER_RUNTIME_ATTR = "burnqed_runtime"


def worker_runtime() -> StageRuntime | None:
    """The `StageRuntime` of the Celery worker process this runs in (`burnqed_pipeline.deploy.worker`), if any."""
    try:
        from celery import current_app
    except ImportError:
        return None
    rt = getattr(current_app, WORKER_RUNTIME_ATTR, None)
    return rt if isinstance(rt, StageRuntime) else None


class EventLoopResource(dg.ConfigurableResource):
    """The run's asyncio loop, in a thread of its own: the Lean pool and the policy live on it, and the stages'
    coroutines run on it. With keep, in a Celery worker process, the loop (and pool and policy) that process keeps."""

    keep: bool = Field(False, description="in a Celery worker process, use the services it keeps (its loop, "
                                          "Lean pool and policy) and leave them open (deploy/celery/run_config.yaml)")
    _runtime: AsyncRuntime | None = PrivateAttr(default=None)
    _kept: StageRuntime | None = PrivateAttr(default=None)

    @classmethod
    def over(cls, kept: StageRuntime) -> Self:
        """A resource already bound to ``kept`` (its loop, and its pool and policy for the resources that depend
        on this one): hand it to Dagster as it is (`kept_resources`), never to be set up again."""
        res = cls(keep=True)
        res._runtime, res._kept = kept.runtime, kept
        return res

    @property
    def kept(self) -> StageRuntime | None:
        """The owner's services this run uses (a worker's, a command's), if any."""
        return self._kept

    @property
    def runtime(self) -> AsyncRuntime:
        if self._runtime is None:
            raise dg.DagsterInvariantViolationError("the event_loop resource is not set up (use it inside a run)")
        return self._runtime

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for its result (from the step's thread)."""
        return self.runtime.run(coro)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self._runtime is not None:
            return
        kept = worker_runtime() if self.keep else None
        self._kept = kept
        self._runtime = kept.runtime if kept is not None else AsyncRuntime()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        rt, self._runtime = self._runtime, None
        if rt is not None and self._kept is None:
            rt.close()
