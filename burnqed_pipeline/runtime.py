"""One asyncio event loop per run process, for the Lean pool and the policy.

The Lean pool's worker processes and the policy's HTTP clients belong to the
event loop that started them, while Dagster runs each step's body on its own
(an async asset gets a fresh loop). So the resources start them on one loop
running in a daemon thread for the whole run, and asset bodies submit the
stage coroutines to it (`AsyncRuntime.run`): the pool starts once per run
process and serves every stage of the run.

`attach` lets a caller that already has a started Lean environment on its
own running loop (a test session, a notebook) lend it to the pipeline: the
stages then run on that loop, and the pipeline never closes what it did not
start.

A step interrupted while it waits for its coroutine (Dagster raises SIGINT/SIGTERM as an exception in the
step's thread) cancels the coroutine: it does not go on unseen on the loop, holding a shard's lock and the
Lean pool while the command stops or the step is retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from burnqed_core.lean.types import ProofEnv

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
            self._thread = threading.Thread(target=loop.run_forever, name="burnqed-runtime", daemon=True)
            self._thread.start()
        self.loop = loop

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


@dataclass
class _Attached:
    runtime: AsyncRuntime
    env: ProofEnv | None


_attached: _Attached | None = None
_lock = threading.Lock()


@contextlib.contextmanager
def attach(loop: asyncio.AbstractEventLoop, env: ProofEnv | None = None) -> Iterator[AsyncRuntime]:
    """Within the block, run the pipeline's coroutines on ``loop`` (running in another thread than the
    materialisation) and use ``env`` as the Lean environment instead of starting a pool."""
    global _attached
    with _lock:
        if _attached is not None:
            raise RuntimeError("a runtime is already attached")
        _attached = _Attached(AsyncRuntime(loop), env)
    try:
        yield _attached.runtime
    finally:
        with _lock:
            _attached = None


def attached() -> tuple[AsyncRuntime, ProofEnv | None] | None:
    a = _attached
    return (a.runtime, a.env) if a is not None else None


_process_runtime: AsyncRuntime | None = None


def get_runtime() -> AsyncRuntime:
    """The attached runtime if any, else this process's own (started on first use; its idle daemon thread
    ends with the process)."""
    global _process_runtime
    a = attached()
    if a is not None:
        return a[0]
    with _lock:
        if _process_runtime is None or _process_runtime.loop.is_closed():
            _process_runtime = AsyncRuntime()
        return _process_runtime
