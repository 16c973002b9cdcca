"""What a process running stages keeps across runs (`StageRuntime`): an event loop
(`burnqed_pipeline.runtime.AsyncRuntime`), the Lean pool (`burnqed_pipeline.lean_pools.LeanPools`) and the
policy (`burnqed_pipeline.policy_host.PolicyHost`), together.

A run's own services are its resources (`burnqed_pipeline.resources`: set up when the run, or the step,
starts and torn down when it ends). A `StageRuntime` is for an owner that outlives runs, so that Lean starts
once: the command that materialises many runs in one process (``burnqed loop``, ``burnqed transfer``:
`burnqed_pipeline.runner`), whose runs get it through `burnqed_pipeline.resources.kept_resources`, and a
Celery worker process (`burnqed_pipeline.deploy.worker`), whose steps use it when the run's ``event_loop``
resource says ``keep``. A caller with a running loop and a started Lean environment of its own (a test session)
lends them (`StageRuntime.lending`): they are used, never closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Self, TypeVar

from burnqed_core.config import LeanConfig, Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_pipeline.lean_pools import LeanPools
from burnqed_pipeline.policy_host import PolicyHost
from burnqed_pipeline.runtime import AsyncRuntime

T = TypeVar("T")


class StageRuntime:
    """The loop, the Lean pool and the policy of an owner that outlives runs (module docstring)."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop | None = None, env: ProofEnv | None = None,
                 launch_sglang: bool = False) -> None:
        self.runtime = AsyncRuntime(loop)
        self.pools = LeanPools(lent=env)
        self.policies = PolicyHost(launch_sglang=launch_sglang)

    @classmethod
    def lending(cls, loop: asyncio.AbstractEventLoop, env: ProofEnv | None = None) -> Self:
        """Run on ``loop`` (running in another thread than the materialisation) and use ``env`` as the Lean
        environment: neither is closed by this runtime."""
        return cls(loop=loop, env=env)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.runtime.run(coro)

    async def lean(self, settings: LeanConfig) -> ProofEnv:
        """The started Lean environment of ``settings`` (call on the runtime's loop)."""
        return await self.pools.env(settings)

    async def policy(self, profile: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        """The policy on ``model_path`` and what it serves (`PolicyHost.policy`; call on the runtime's loop)."""
        return await self.policies.policy(profile, model_path, iteration)

    @property
    def lean_started(self) -> bool:
        """Whether this runtime started a Lean pool that is still open."""
        return self.pools.started

    def close(self) -> None:
        """Close what this runtime started (the policy, a launched server, the Lean pool, its own loop)."""
        if not self.runtime.loop.is_closed():
            if self.policies.loaded:
                self.run(self.policies.aclose())
            if self.pools.started:
                self.run(self.pools.aclose())
        self.policies.stop_server()
        self.runtime.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
