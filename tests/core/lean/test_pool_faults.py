"""Fault handling with real processes: a killed worker, a tactic that never
ends, recycling. These tests start their own one-worker pool (they kill its
processes), shared by the module to pay the ~20 s start-up as few times as
possible: every restart below is a real new Lean process."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

import psutil
import pytest
import pytest_asyncio

from burnqed_core.lean.pool import InfraFailure, LeanPool
from burnqed_core.lean.types import BackendDied, Status
from burnqed_core.records import Theorem
from tests.fixtures_lean import own_lean_pool, skip_unless_lean_installed, tiny_lean_config

pytestmark = [pytest.mark.lean, pytest.mark.slow, pytest.mark.own_lean]  # never the session's worker

THM = Theorem(name="comm", statement="(a b : Nat) : a + b = b + a")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def own_pool() -> AsyncIterator[LeanPool]:
    # no verdict cache: every call below must reach a (killed, restarted, recycled) Lean process
    async with own_lean_pool(tactic_timeout_s=8.0, self_test=False, verdict_cache=0) as pool:
        yield pool  # type: ignore[misc]


def pid_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped while read
        return True


async def gone_soon(pid: int, limit_s: float = 5.0) -> bool:
    """Whether ``pid`` is gone within ``limit_s`` (a SIGKILL just sent takes a
    moment to land, longer on a loaded machine)."""
    for _ in range(int(limit_s / 0.05)):
        if pid_gone(pid):
            return True
        await asyncio.sleep(0.05)
    return pid_gone(pid)


async def test_sigkill_mid_tactic_is_retried_on_a_fresh_process(own_pool: LeanPool) -> None:
    start = await own_pool.start_proof(THM)
    assert start.ok and start.state is not None
    old_pid = own_pool.pids[0]
    assert old_pid is not None
    before = own_pool.stats()
    # `sleep 1500` keeps the tactic in flight long enough to kill Lean under it.
    task = asyncio.create_task(own_pool.apply(start.state, "(sleep 1500; omega)"))
    await asyncio.sleep(0.7)
    os.kill(old_pid, signal.SIGKILL)
    r = await task
    # the caller gets a clean, real answer from the fresh process
    assert r.status is Status.OK and r.retried and r.state is not None and r.state.is_proved
    new_pid = own_pool.pids[0]
    assert new_pid is not None and new_pid != old_pid and await gone_soon(old_pid)
    after = own_pool.stats()
    assert after.crashes == before.crashes + 1 and after.restarts == before.restarts + 1
    nxt = await own_pool.apply(start.state, "omega")
    assert nxt.ok and not nxt.retried


async def test_lsp_error_is_retried_on_a_fresh_process(own_pool: LeanPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """An LSP error object from the real worker (a request it does not know)
    is an infrastructure failure of that request: restart, one retry, a real
    answer; never an exception that ends the job."""
    start = await own_pool.start_proof(THM)
    assert start.ok and start.state is not None
    backend = own_pool.backend(0)
    old_pid = backend.pid
    real_apply = backend.apply_many

    async def poisoned(items):  # type: ignore[no-untyped-def]
        await backend.worker._request("burnqed/noSuchMethod", {})  # the worker answers with an error object
        return await real_apply(items)

    monkeypatch.setattr(backend, "apply_many", poisoned)
    before = own_pool.stats()
    r = await own_pool.apply(start.state, "omega")
    assert r.status is Status.OK and r.retried and r.state is not None and r.state.is_proved
    after = own_pool.stats()
    assert after.lsp_errors == before.lsp_errors + 1 and after.restarts == before.restarts + 1
    assert own_pool.pids[0] != old_pid and old_pid is not None and await gone_soon(old_pid)


async def test_cancelled_start_leaves_no_worker() -> None:
    """Cancelling a pool's start mid-way kills the half-started worker (5-6.5 GB otherwise left behind)."""
    config = tiny_lean_config(self_test=False)
    skip_unless_lean_installed(config)
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    pool = LeanPool(config)
    task = asyncio.create_task(pool.start())
    new: set[int] = set()
    for _ in range(200):  # until the worker process exists (a real `node` running Lean)
        await asyncio.sleep(0.05)
        new = {p.pid for p in me.children(recursive=True)} - before
        if new:
            break
    assert new, "the worker did not start"
    await asyncio.sleep(1.0)  # well inside its ~20 s start
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if all(pid_gone(pid) for pid in new):
            break
        await asyncio.sleep(0.1)
    assert all(pid_gone(pid) for pid in new), f"left behind: {[p for p in new if not pid_gone(p)]}"
    assert pool.pids == [None] * pool.num_workers


async def test_endless_tactic_times_out_without_failing_the_others(own_pool: LeanPool,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from burnqed_core.lean import pool as pool_mod

    monkeypatch.setattr(pool_mod, "load_factor", lambda: 1.0)  # the configured limit, however busy the box
    start = await own_pool.start_proof(THM)
    assert start.state is not None
    before = own_pool.stats()
    pid0 = own_pool.pids[0]
    endless, good, bad = await own_pool.apply_many(
        [(start.state, "repeat (sleep 500)"), (start.state, "omega"), (start.state, "rfl")])
    # infrastructure failure, not a tactic verdict
    assert endless.status is Status.TIMEOUT and endless.status.is_infra and endless.retried
    assert good.status is Status.OK and good.retried
    assert bad.status is Status.TACTIC_ERROR
    after = own_pool.stats()
    assert after.timeouts == before.timeouts + 2  # the batch, then the pair alone on the fresh process
    assert own_pool.pids[0] != pid0 and pid0 is not None and await gone_soon(pid0)
    again = await own_pool.apply(start.state, "omega")
    assert again.ok


async def test_recycle_after_max_requests(own_pool: LeanPool) -> None:
    start = await own_pool.start_proof(THM)
    assert start.state is not None
    slot_requests = own_pool._slots[0].requests
    own_pool.config = own_pool.config.model_copy(update={"max_requests_per_worker": slot_requests + 2})
    try:
        pid0 = own_pool.pids[0]
        recycles0 = own_pool.stats().recycles
        for _ in range(2):
            assert (await own_pool.apply(start.state, "omega")).ok
        assert own_pool.pids[0] == pid0
        r = await own_pool.apply(start.state, "omega")  # over the limit: served by a new process
        assert r.ok and not r.retried
        assert own_pool.pids[0] != pid0 and own_pool.stats().recycles == recycles0 + 1
    finally:
        own_pool.config = own_pool.config.model_copy(update={"max_requests_per_worker": 1000})


def test_worker_processes_die_with_their_parent() -> None:
    """A backend process runs in its own session (so the pool can kill its
    group) and would outlive a crashed parent: it must be killed with it."""
    import subprocess
    import sys
    import time

    script = (
        "import asyncio, os\n"
        "from burnqed_core.lean.lsp import _die_with_parent\n"
        "async def main():\n"
        "    p = await asyncio.create_subprocess_exec('sleep', '120', start_new_session=True,\n"
        "                                             preexec_fn=_die_with_parent)\n"
        "    print(p.pid, flush=True)\n"
        "    os._exit(0)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    child = int(out.stdout.strip())
    for _ in range(50):
        if pid_gone(child):
            break
        time.sleep(0.1)
    assert pid_gone(child)


class _DeafBackend:
    """A backend over a real process (`sleep`) whose calls ignore their
    cancellation for as long as the process lives: what a call on the
    embedded worker does when Python 3.11's nested `asyncio.wait_for`
    swallows a cancellation (an answer landing in the same loop turn), seen
    once as a 12-minute stall on `repeat (sleep 500)`. Everything else is
    real: the pool, its timeouts, the process it must kill and replace."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def rss_mb(self) -> int:
        return 0

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec("sleep", "600", start_new_session=True)

    async def close(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    async def check_source(self, text: str) -> list[object]:
        while True:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass  # swallowed
            if not self.alive():
                raise BackendDied("the process died")


async def _within(coro: object, limit_s: float) -> object:
    """``coro``'s outcome, failing the test if it takes longer than ``limit_s``
    (not `asyncio.wait_for`, which would wait on the same cancellation)."""
    task = asyncio.ensure_future(coro)  # type: ignore[arg-type]
    done, _ = await asyncio.wait({task}, timeout=limit_s)
    assert done, f"no answer in {limit_s}s"
    return task.result()


async def test_a_call_that_ignores_its_cancellation_still_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from burnqed_core.lean import pool as pool_mod

    monkeypatch.setattr(pool_mod, "load_factor", lambda: 1.0)
    backends: list[_DeafBackend] = []

    def factory() -> _DeafBackend:
        backends.append(_DeafBackend())
        return backends[-1]

    pool = LeanPool(tiny_lean_config(self_test=False), backend_factory=factory, num_workers=1)  # type: ignore[arg-type]
    await pool.start()
    try:
        first = pool.pids[0]
        assert first is not None
        with pytest.raises(InfraFailure) as e:
            await _within(pool.check_source("theorem t : True := trivial", timeout_s=1.0), 20)
        assert e.value.status is Status.TIMEOUT
        assert pool.stats().timeouts == 1 and pool.stats().restarts == 1
        assert await gone_soon(first) and pool.pids[0] not in (None, first)

        # a caller that gives up is not held either, and leaves no live call on a live process behind
        second = pool.pids[0]
        task = asyncio.ensure_future(pool.check_source("theorem t : True := trivial", timeout_s=60.0))
        await asyncio.sleep(0.3)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=pool_mod.CANCEL_GRACE_S + 5)
        assert done and task.cancelled()
        assert second is not None and await gone_soon(second)
    finally:
        await pool.close()
    await asyncio.sleep(0.2)  # the left-behind call sees its process gone (and ends) before the loop does
    assert len(backends) == 2 and all(not b.alive() for b in backends)
