"""Torch's intra-op thread count, which is per thread.

``torch.set_num_threads`` sets the calling thread's count (OpenMP's, and MKL's) and a process-wide default,
which a thread takes at its first parallel op. A thread that runs a parallel op with more than one thread gets
an OpenMP team of its own, whose threads live as long as it does. Once the process holds more OpenMP threads
than cores, libgomp stops spinning between parallel regions in every team and puts its threads to sleep at
once, so a training step of many small ops in the main thread waits for its helper to wake at each op: the main
job's iteration-1 LoRA trained at 2100-2500 tokens/s after the search had run the policy's constructor on the
event loop's thread (a team of two there), 4500 alone (docs/profiles.md). Threads that live long and run only
small torch work (the event loop's thread, the inference worker threads) therefore run it on one thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def intra_op_threads(n: int | None) -> Iterator[None]:
    """``n`` intra-op threads in the calling thread for the block, its count restored after (which also sets
    the process-wide default back); nothing when ``n`` is None or already the count."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    if before == n:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def start_one_thread_torch(target: Callable[[], object], name: str) -> threading.Thread:
    """Start ``target`` in a daemon thread whose torch ops run on one intra-op thread. The calling thread's
    count stays, and so does the process-wide default that threads started later take (it is set back to the
    caller's count once the new thread has taken its own)."""
    import torch

    caller = torch.get_num_threads()
    ready = threading.Event()

    def run() -> None:
        try:
            torch.get_num_threads()  # the thread's first call takes the process default: before ours, not after
            torch.set_num_threads(1)
        finally:
            ready.set()
        target()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    ready.wait()
    torch.set_num_threads(caller)
    return thread
