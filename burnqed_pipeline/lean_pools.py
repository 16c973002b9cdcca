"""The Lean pool a process keeps (`LeanPools`): started on first need for the given settings, reused while the
settings stay the same (another settings' pool is closed first), closed by its owner.

Its owner is a `burnqed_pipeline.resources.LeanPoolResource` (one run, or one step), or a `StageRuntime` that
outlives runs (a command, a Celery worker process: `burnqed_pipeline.services`). A caller with a started Lean
environment of its own (a test session) lends it: it is used for any settings and never closed here. Call its
coroutines on the event loop the pool belongs to (`burnqed_pipeline.runtime.AsyncRuntime`).
"""

from __future__ import annotations

import logging
from typing import Any

from burnqed_core.config import LeanConfig
from burnqed_core.lean.types import ProofEnv

log = logging.getLogger(__name__)


class LeanPools:
    """The started Lean environment of the last settings asked for (module docstring)."""

    def __init__(self, lent: ProofEnv | None = None) -> None:
        self._lent = lent
        self._pool: Any = None
        self._key: str | None = None

    async def env(self, settings: LeanConfig) -> ProofEnv:
        """The started Lean environment of ``settings``: the lent one, the running pool of the same settings, or a
        new pool (the running one, of other settings, closed first)."""
        if self._lent is not None:
            return self._lent
        key = settings.model_dump_json()
        if self._pool is not None and self._key == key:
            log.debug("Lean pool of this process reused (started by an earlier step)")
            return self._pool  # type: ignore[no-any-return]
        from burnqed_core.lean.pool import LeanPool

        await self.aclose()
        log.info("starting Lean (%s backend, %s workers)", settings.backend, settings.num_workers or "auto")
        pool = LeanPool(settings)
        await pool.start()
        self._pool, self._key = pool, key
        return pool

    @property
    def started(self) -> bool:
        """Whether a pool started here is open."""
        return self._pool is not None

    @property
    def settings_key(self) -> str | None:
        """The settings (as JSON) of the open pool, if any."""
        return self._key

    async def aclose(self) -> None:
        """Close the pool started here, if any (a lent environment is left alone)."""
        pool, self._pool, self._key = self._pool, None, None
        if pool is not None:
            await pool.close()
