"""The run's Lean pool (`LeanPoolResource`): started on the run's event loop when a stage first needs Lean,
closed when the run (or step) ends; in a Celery worker process with ``keep``, or in a command's runs, the
owner's pool (`burnqed_pipeline.resources.EventLoopResource.kept`), left open.

Its fields are the pool's machine settings (`burnqed_core.config.LeanConfig`'s ``machine`` fields: how many
workers, when to recycle one, the verdict cache), editable on the launchpad; ``None`` keeps the profile's.
They change how fast a stage runs, never what it finds, so they are not part of any stage's fingerprint. What
Lean checks (backend, tactic timeout, the embedded header) stays the profile's.
"""

# No ``from __future__ import annotations``: Dagster reads ``ResourceDependency`` annotations as objects.


import dagster as dg
from pydantic import Field, PrivateAttr

from burnqed_core.config import LeanConfig
from burnqed_core.lean.types import ProofEnv
from burnqed_pipeline.lean_pools import LeanPools
from burnqed_pipeline.resources.event_loop import EventLoopResource


class LeanPoolResource(dg.ConfigurableResource):
    """The run's Lean pool, started on the run's loop when a stage first needs Lean and closed when the run ends.
    Its fields are the pool's machine settings; unset (null), the profile's lean section decides."""

    event_loop: dg.ResourceDependency[EventLoopResource]
    num_workers: int | None = Field(None, ge=1, description="Lean worker processes (None: the profile's "
                                                            "lean.num_workers, itself None: sized from the machine)")
    max_requests_per_worker: int | None = Field(None, ge=1, description="requests before a worker is recycled")
    worker_ttl_s: float | None = Field(None, gt=0, description="seconds before a worker is recycled")
    worker_rss_limit_mb: int | None = Field(None, ge=1, description="resident memory that makes a worker recycle")
    batch_size: int | None = Field(None, ge=1, description="(state, tactic) pairs elaborated per document edit")
    verdict_cache: int | None = Field(None, ge=0, description="tactic verdicts kept for reuse; 0: off")
    self_test: bool | None = Field(None, description="check each new worker on a known proof")
    _pools: LeanPools | None = PrivateAttr(default=None)
    _owned: bool = PrivateAttr(default=False)

    def settings(self, profile_lean: LeanConfig) -> LeanConfig:
        """The profile's Lean settings with this resource's fields that are set."""
        names = ("num_workers", "max_requests_per_worker", "worker_ttl_s", "worker_rss_limit_mb", "batch_size",
                 "verdict_cache", "self_test")
        update = {n: getattr(self, n) for n in names if getattr(self, n) is not None}
        return profile_lean.model_copy(update=update) if update else profile_lean

    async def env(self, profile_lean: LeanConfig) -> ProofEnv:
        """The started Lean environment for the profile's settings (call on the event loop)."""
        if self._pools is None:
            raise dg.DagsterInvariantViolationError("the lean resource is not set up (use it inside a run)")
        return await self._pools.env(self.settings(profile_lean))

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        kept = self.event_loop.kept
        self._pools, self._owned = (kept.pools, False) if kept is not None else (LeanPools(), True)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        pools, self._pools = self._pools, None
        if pools is not None and self._owned and pools.started:
            self.event_loop.run(pools.aclose())
