"""An exclusive lock on a file shared by processes (``flock``): one writer of an output at a time.

Two processes that compute the same output into the same place (two steps of one shard, two runs measuring
the same cached baseline) would otherwise write one directory at once. The second waits for the first, then
reads back or resumes what the first left. The kernel drops the lock of a killed process, so a crash never
leaves a stale lock behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = ("file_lock",)


@contextlib.asynccontextmanager
async def file_lock(path: Path, what: str) -> AsyncIterator[None]:
    """Hold the lock of ``path`` (created with its directory when absent) while the block runs; when another
    process holds it, log that ``what`` waits for it, then wait without blocking the event loop."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("%s: another process holds %s: waiting", what, path)
            await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
