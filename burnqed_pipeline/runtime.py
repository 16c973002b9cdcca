"""An asyncio event loop in a thread of its own (`AsyncRuntime`), for the Lean pool and the policy.

The Lean pool's worker processes and the policy's HTTP clients belong to the event loop that started them,
while Dagster runs each step's body on its own (an async asset gets a fresh loop). So the run's services
(`burnqed_pipeline.services.StageRuntime`) start them on one loop running in a daemon thread for as long as
the services live, and asset bodies submit the stage coroutines to it (`AsyncRuntime.run`). A caller that
already runs a loop in another thread (a test session, a notebook) lends it instead (``AsyncRuntime(loop)``):
nothing is started or closed on it.

A step interrupted while it waits for its coroutine (Dagster raises SIGINT/SIGTERM as an exception in the
step's thread) cancels the coroutine: it does not go on unseen on the loop, holding a shard's lock and the
Lean pool while the command stops or the step is retried.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from burnqed_core.torch_threads import start_one_thread_torch

T = TypeVar("T")

log = logging.getLogger(__name__)

CANCEL_WAIT_S = 15.0
"""How long an interrupted `AsyncRuntime.run` waits for its cancelled coroutine to end (a search saves what it
finished; a Lean call is abandoned within `burnqed_core.lean.pool.CANCEL_GRACE_S`)."""


class AsyncRuntime:
    """An event loop in a daemon thread (or a borrowed running loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._borrowed = loop is not None
        self._thread: threading.Thread | None = None
        if loop is None:
            loop = asyncio.new_event_loop()
            # one torch thread there: the policy's constructor and the EBM's head run on the loop, and more would
            # slow the main thread's training (burnqed_core.torch_threads)
            self._thread = start_one_thread_torch(loop.run_forever, "burnqed-runtime")
        self.loop = loop

    @property
    def borrowed(self) -> bool:
        return self._borrowed

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the runtime's loop and wait for its result (from any other thread). Interrupted while
        waiting (an exception raised in this thread by a signal handler), cancel ``coro`` and wait up to
        `CANCEL_WAIT_S` for it to end before the interruption goes on."""
        if self.loop.is_closed():
            coro.close()
            raise RuntimeError("the burnqed runtime loop is closed")
        started, ended = threading.Event(), threading.Event()

        async def tracked() -> T:
            started.set()
            try:
                return await coro
            finally:
                ended.set()

        fut = asyncio.run_coroutine_threadsafe(tracked(), self.loop)
        try:
            return fut.result()
        except BaseException:
            # cancel() is False once the coroutine has ended (its own error is being raised)
            if fut.cancel() and started.is_set() and not ended.wait(CANCEL_WAIT_S):
                log.warning("an interrupted coroutine did not end %.0f s after its cancellation; left behind",
                            CANCEL_WAIT_S)
            raise

    def close(self) -> None:
        if self._borrowed or self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.loop.close()
