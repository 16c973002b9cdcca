"""Torch's per-thread intra-op count (`burnqed_core.torch_threads`): a block's count restored after, a thread
started on one torch thread that leaves the caller's count and the default of later threads alone, and no
OpenMP team in that thread after a parallel op (a team there is what slowed the main thread's training)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator

import pytest
import torch

from burnqed_core.torch_threads import intra_op_threads, start_one_thread_torch


@pytest.fixture
def two_threads() -> Iterator[None]:
    """This thread on two intra-op threads for the test (the suite runs on one, `OMP_NUM_THREADS=1`)."""
    with intra_op_threads(2):
        yield


def _in_new_thread(fn: Callable[[], object]) -> object:
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_a_block_runs_on_its_count_and_restores_the_callers(two_threads: None) -> None:
    with intra_op_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with intra_op_threads(None):
        assert torch.get_num_threads() == 2
    with pytest.raises(ValueError), intra_op_threads(1):
        raise ValueError("the count is restored on an error too")
    assert torch.get_num_threads() == 2
    assert _in_new_thread(torch.get_num_threads) == 2  # the default that later threads take


def test_a_thread_started_on_one_torch_thread_leaves_the_others_alone(two_threads: None) -> None:
    seen: list[int] = []
    stop = threading.Event()

    def body() -> None:
        seen.append(torch.get_num_threads())
        stop.wait(10)

    t = start_one_thread_torch(body, "test-one-thread")
    try:
        assert t.name == "test-one-thread" and t.daemon
        assert torch.get_num_threads() == 2  # the caller's
        assert _in_new_thread(torch.get_num_threads) == 2  # a thread started later
    finally:
        stop.set()
        t.join(10)
    assert seen == [1]


def _threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def _parallel_op() -> None:
    """An op that torch runs in parallel on more than one intra-op thread (a big copy)."""
    x = torch.ones(4_000_000)
    torch.cat([x, x]).sum()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="counts threads in /proc on a machine of 2 or more cores")
def test_a_parallel_op_in_the_one_thread_thread_starts_no_openmp_team(two_threads: None) -> None:
    """The pinned thread's op starts no OpenMP thread; the same op in a plain thread starts one, which lives as
    long as that thread (what the check sees, so it can fail)."""
    _parallel_op()  # this thread's own team first, so that only the other thread's can be counted below

    def measure(start: Callable[[Callable[[], None]], threading.Thread]) -> int:
        ran, stop = threading.Event(), threading.Event()
        before = _threads()

        def body() -> None:
            _parallel_op()
            ran.set()
            stop.wait(10)

        t = start(body)
        try:
            assert ran.wait(30)
            return len(_threads() - before - {str(t.native_id)})  # the threads it started
        finally:
            stop.set()
            t.join(10)

    def plain(body: Callable[[], None]) -> threading.Thread:
        t = threading.Thread(target=body, daemon=True)
        t.start()
        return t

    assert measure(plain) >= 1
    assert measure(lambda body: start_one_thread_torch(body, "test-one-thread")) == 0
