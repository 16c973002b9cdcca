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
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from burnqed_core.lean.types import ProofEnv

T = TypeVar("T")


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
        """Run ``coro`` on the runtime's loop and wait for its result (from any other thread)."""
        if self.loop.is_closed():
            coro.close()
            raise RuntimeError("the burnqed runtime loop is closed")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

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
