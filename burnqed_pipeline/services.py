"""What a process running stages keeps while it runs them (`StageRuntime`): the event loop, the Lean pool and
the policy serving the iteration's model.

Its lifetime is its owner's, never a module's: the run's resource (`burnqed_pipeline.resources.RuntimeResource`:
set up when the run, or the step, starts and torn down when it ends), the command that materialises many runs
in one process (``burnqed loop``, ``burnqed transfer``: `burnqed_pipeline.runner`, for the whole command, so
that Lean starts once), or a Celery worker process (`burnqed_pipeline.deploy.worker`: from the worker
process's start to its shutdown, so that Lean starts once per worker). A caller with a running loop and a
started Lean environment of its own (a test session) lends them (`StageRuntime.lending`): they are used, never
closed.

* Lean: the pool of the given settings, started on first need (another settings' pool is closed first).
* Policy: ``local``: transformers on the model dir; ``sglang``: launch the server from ``policy.sglang.python``
  (``launch``) or attach to ``policy.sglang.url``, load the iteration's model with the safe weight swap, check
  it with a real one-token generation, and record what the server says it serves; a launched server is
  stopped when the runtime closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Self, TypeVar

from burnqed_core.config import LeanConfig, Profile
from burnqed_core.errors import PolicyError
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_pipeline.runtime import AsyncRuntime

T = TypeVar("T")

log = logging.getLogger(__name__)

PROBE_STATE = "⊢ True"


def _same_path(a: Any, b: str | Path) -> bool:
    if a is None:
        return False
    if str(a).rstrip("/") == str(b).rstrip("/"):
        return True
    try:
        return Path(str(a)).resolve() == Path(b).resolve()
    except OSError:
        return False


class StageRuntime:
    """The loop, the Lean pool and the policy of a process running stages (module docstring)."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop | None = None, env: ProofEnv | None = None,
                 launch_sglang: bool = False) -> None:
        self.runtime = AsyncRuntime(loop)
        self.launch_sglang = launch_sglang
        self._lent_env = env
        self._pool: Any = None
        self._pool_key: str | None = None
        self._policy: Any = None
        self._model: str | None = None
        self._server: Any = None

    @classmethod
    def lending(cls, loop: asyncio.AbstractEventLoop, env: ProofEnv | None = None) -> Self:
        """Run on ``loop`` (running in another thread than the materialisation) and use ``env`` as the Lean
        environment: neither is closed by this runtime."""
        return cls(loop=loop, env=env)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.runtime.run(coro)

    async def lean(self, settings: LeanConfig) -> ProofEnv:
        """The started Lean environment of ``settings`` (call on the runtime's loop)."""
        if self._lent_env is not None:
            return self._lent_env
        key = settings.model_dump_json()
        if self._pool is not None and self._pool_key == key:
            log.debug("Lean pool of this process reused (started by an earlier step)")
            return self._pool
        from burnqed_core.lean.pool import LeanPool

        await self._close_pool()
        log.info("starting Lean (%s backend)", settings.backend)
        pool = LeanPool(settings)
        await pool.start()
        self._pool, self._pool_key = pool, key
        return pool

    async def policy(self, profile: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        """The policy on ``model_path`` (loaded or swapped in if needed), checked by a one-token generation,
        and what it serves: ``{"backend", "model_path", ...}`` (for SGLang, the server's own ``/model_info``)."""
        backend = profile.policy.backend
        if backend == "sglang":
            return await self._sglang(profile, model_path, iteration)
        if self._policy is None or self._model != str(model_path):
            from burnqed_core.policy.factory import make_policy

            await self._close_policy()
            self._policy = make_policy(profile, model_path)
            self._model = str(model_path)
        await self._probe()
        return self._policy, {"backend": backend, "model_path": self._model}

    async def _sglang(self, prof: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        from burnqed_core.policy.sglang import SglangPolicy

        cfg = prof.policy
        if self._policy is None:
            server = None
            if self.launch_sglang:
                from burnqed_core.policy.launcher import SglangServer

                server = SglangServer(cfg.sglang, model_path, log_path=Path(prof.paths.work_dir) / "sglang.log")
                await asyncio.to_thread(server.start)
                self._server = server
            self._policy = SglangPolicy(cfg.sglang, max_new_tokens=cfg.max_new_tokens, batch_size=cfg.batch_size,
                                        server=server)
        policy: SglangPolicy = self._policy
        info = await policy.model_info()
        restarted = False
        if not _same_path(info.get("model_path"), model_path):
            log.info("SGLang serves %s: swapping in %s", info.get("model_path"), model_path)
            swapped = await policy.swap_weights(model_path, weight_version=f"iter_{iteration}")
            restarted = swapped.restarted
        if not await policy.healthy():
            raise PolicyError(f"the SGLang server at {policy.client.url} does not generate (one-token check failed)")
        info = await policy.model_info()
        if not _same_path(info.get("model_path"), model_path):
            raise PolicyError(f"the SGLang server at {policy.client.url} serves {info.get('model_path')!r}, "
                              f"not {str(model_path)!r}")
        self._model = str(model_path)
        return policy, {"backend": "sglang", "url": policy.client.url, "model_path": info.get("model_path"),
                        "weight_version": info.get("weight_version"), "restarted": restarted,
                        "launched": self._server is not None}

    async def _probe(self) -> None:
        """A real one-token generation: a model that cannot generate fails here, not mid-search."""
        out = await self._policy.generate([PROBE_STATE], 1, 0.0, max_new_tokens=1)
        if len(out) != 1:
            raise PolicyError(f"policy {self._policy.name}: the one-token check returned {len(out)} results")

    async def _close_policy(self) -> None:
        policy, self._policy, self._model = self._policy, None, None
        if policy is not None:
            await policy.close()

    async def _close_pool(self) -> None:
        pool, self._pool, self._pool_key = self._pool, None, None
        if pool is not None:
            await pool.close()

    @property
    def lean_started(self) -> bool:
        """Whether this runtime started a Lean pool that is still open."""
        return self._pool is not None

    def close(self) -> None:
        """Close what this runtime started (the policy, a launched server, the Lean pool, its own loop)."""
        if not self.runtime.loop.is_closed():
            if self._policy is not None:
                self.run(self._close_policy())
            if self._pool is not None:
                self.run(self._close_pool())
        server, self._server = self._server, None
        if server is not None:
            server.stop()
        self.runtime.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
