"""A pool of Lean processes behind the `ProofEnv` interface.

What the pool guarantees to the search:

* requests to one process are serialised (Lean must see one at a time);
* a request goes to a process that last ran the same preamble when one is
  free (its imports and definitions stay elaborated, as Kimina reuses REPLs
  by header);
* a call that times out kills and restarts its process; a process that dies,
  or answers a request with an LSP error object (`LspError`: the worker's
  state is not trusted any more), is restarted; either way the call is
  retried ONCE on the fresh process
  (states are rebuilt from their tactic path), and if it fails again the
  caller gets Status.TIMEOUT / CRASHED, an infrastructure failure that never
  counts as a failed tactic or an unprovable theorem;
* a process is recycled after ``max_requests_per_worker`` calls, after
  ``worker_ttl_s``, or past ``worker_rss_limit_mb`` of resident memory
  (the embedded worker grows with every new Lean thread);
* tactics refused by the sandbox never reach Lean (Status.REJECTED);
* where a state is its text (embedded), a tactic on a state Lean has
  already answered for is answered from memory (`VerdictCache`; whole-proof
  checks always go to Lean);
* at start-up it proves one known-good theorem and fails to prove one
  known-bad one, and refuses to run if either answer is wrong.

Embedded workers get no RLIMIT_AS: WebAssembly reserves a large virtual
address space up front (guard regions around the 2 GiB heap, one per
thread), so an address-space cap kills it long before it uses much memory;
the RSS limit above bounds them instead. Each backend process runs in a
session of its own and is killed as a group; a backend whose start fails or
is cancelled is closed at once (no half-started 5-6.5 GB worker is left).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import statistics
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from burnqed_core.config import LeanConfig
from burnqed_core.errors import LeanSetupError
from burnqed_core.lean import trust
from burnqed_core.lean.checker import sandbox_module, static_problems
from burnqed_core.lean.judge import JudgeReport, StoreStats
from burnqed_core.lean.lsp import LspError, kill_group
from burnqed_core.lean.types import (
    BackendDied,
    CheckResult,
    Diagnostic,
    Elaboration,
    GoalState,
    LeanBackend,
    Status,
    TacticResult,
)
from burnqed_core.lean.verdict_cache import VerdictCache
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)
T = TypeVar("T")

EMBEDDED_WORKER_GB = 2.0
"""An embedded worker's memory for the default worker count: 1.2-1.5 GB resident in the tiny main job (the
checker compiled into a module; 5-6.5 GB when each worker elaborated it from text), with room to grow."""

SELF_TEST_GOOD = Theorem(name="burnqed_selftest_good", statement="(p q : Prop) (hp : p) (hq : q) : p ∧ q",
                         proof=["constructor", "exact hp", "exact hq"])
SELF_TEST_BAD = Theorem(name="burnqed_selftest_bad", statement="(n : Nat) : n + 1 = n", proof=["omega"])


def available_memory_gb() -> float:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 8.0


def default_num_workers(config: LeanConfig) -> int:
    """Embedded: one worker per core, bounded by memory. Measured in the tiny main job on 2 cores, two workers
    against one: the trace 1.65x the theorems/s, the searches 1.1-1.3x, every figure the same (a worker uses
    ~1.1 cores with its V8 threads, and the Python side waits on it). Until the checker was compiled into a
    module, two workers had given 0.80-0.93x of one: each started by elaborating the checker. Pantograph: one
    worker per 2 cores (not measured here), bounded by its memory limit."""
    if config.num_workers:
        return config.num_workers
    cores = os.cpu_count() or 2
    if config.backend == "embedded":
        per_core, per_worker_gb = cores, EMBEDDED_WORKER_GB
    else:
        per_core, per_worker_gb = cores // 2, (config.pantograph.memory_limit_mb or 16000) / 1024
    return max(1, min(per_core, int(available_memory_gb() // per_worker_gb)))


def load_factor(cap: float = 8.0) -> float:
    """How oversubscribed the CPUs are (1-minute load / cores), at least 1."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return min(cap, max(1.0, load / (os.cpu_count() or 1)))


PREAMBLE_S_PER_LINE = 0.1
"""A call's limit grows by this much per line of its preamble (a user's file of 100 definitions is elaborated,
and replayed, in a request that holds it), stretched by the machine's load."""


def preamble_limit(preamble: str) -> float:
    """The extra seconds a call with ``preamble`` may take (`PREAMBLE_S_PER_LINE`)."""
    return PREAMBLE_S_PER_LINE * preamble.count("\n") * load_factor() if preamble.strip() else 0.0


CANCEL_GRACE_S = 5.0
"""How long a timed-out (or cancelled) call may take to end once its process is killed."""


async def _bounded(call: Awaitable[T], timeout_s: float, pid: int | None) -> T:
    """``call``'s result, or TimeoutError after ``timeout_s``, never later.

    Not `asyncio.wait_for`: that waits, after its timeout, until the call has
    handled its cancellation, so a call that swallows it (Python 3.11's nested
    ``wait_for`` does when an answer lands in the same loop turn) holds its
    caller for as long as Lean runs: a search stalled 12 minutes on an endless
    tactic. Here the process is killed first (its readers then fail every
    pending request, which ends the call whatever it does with the
    cancellation), the call gets `CANCEL_GRACE_S` to end, and is left behind
    otherwise: its process is dead and the pool replaces it. The same holds
    when the caller itself is cancelled."""
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        await _abandon(task, pid, kill=False)
        raise
    if done:
        return task.result()
    await _abandon(task, pid, kill=True)
    raise TimeoutError


async def _abandon(task: asyncio.Future[T], pid: int | None, kill: bool) -> None:
    """Cancel ``task`` and wait for it at most `CANCEL_GRACE_S`; kill the
    process ``pid`` first when ``kill``, or when the task does not end in time
    (then the pool restarts it before its next call)."""
    task.cancel()
    if kill:
        kill_group(pid)
    await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
    if not task.done():
        log.warning("a Lean call did not end %.0fs after its cancellation: process %s killed, call left behind",
                    CANCEL_GRACE_S, pid)
        kill_group(pid)
    task.add_done_callback(_retrieve)


def _retrieve(task: asyncio.Future[object]) -> None:
    """Mark an abandoned call's outcome as seen (no 'exception never retrieved')."""
    if not task.cancelled():
        task.exception()


def make_backend(config: LeanConfig) -> LeanBackend:
    """A new (not started) backend of the configured kind."""
    if config.backend == "embedded":
        from burnqed_core.lean.embedded import EmbeddedBackend

        return EmbeddedBackend(config)
    try:
        from burnqed_core.lean.pantograph import PantographBackend
    except ImportError as e:
        raise LeanSetupError(f"the Pantograph backend is not available: {e}") from None
    return PantographBackend(config)  # type: ignore[no-any-return]


class PoolStats(BaseModel):
    """Counters of a pool since it started."""

    workers: int = 0
    requests: int = Field(0, description="backend calls (one call may carry a batch of tactics)")
    tactics: int = Field(0, description="tactic applications asked for")
    by_status: dict[str, int] = Field(default_factory=dict, description="tactic and start results by status")
    rejected: int = 0
    cached: int = Field(0, description="tactic and start results answered from the verdict cache (no Lean call)")
    timeouts: int = 0
    crashes: int = 0
    lsp_errors: int = Field(0, description="requests the worker answered with an LSP error (restart + retry)")
    retries: int = 0
    restarts: int = Field(0, description="processes replaced after a timeout or crash")
    recycles: int = Field(0, description="processes replaced by policy (requests, TTL, RSS)")
    latency_p50_s: float = 0.0
    latency_p95_s: float = 0.0
    rss_mb: list[int] = Field(default_factory=list)


class InfraFailure(Exception):
    """A call could not complete (timeout or dead process): no verdict."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class _Slot:
    index: int
    backend: LeanBackend | None = None
    busy: bool = False
    preamble: str | None = None
    requests: int = 0
    started_at: float = 0.0
    last_used: float = 0.0
    history: list[str] = field(default_factory=list)


def _percentile(xs: Sequence[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


class LeanPool:
    """N Lean backends behind one `ProofEnv`. Use ``async with LeanPool(cfg) as pool``."""

    def __init__(self, config: LeanConfig, backend_factory: Callable[[], LeanBackend] | None = None,
                 num_workers: int | None = None) -> None:
        self.config = config
        self.factory = backend_factory or (lambda: make_backend(config))
        self.num_workers = num_workers or default_num_workers(config)
        self._slots = [_Slot(i) for i in range(self.num_workers)]
        self._cond = asyncio.Condition()
        self._latencies: deque[float] = deque(maxlen=20000)
        self._status: Counter[str] = Counter()
        self._stats = PoolStats(workers=self.num_workers)
        self._started = False
        # Only where a state is its text can an answer be reused (Pantograph states are handles in a process).
        self.verdicts = VerdictCache(config.verdict_cache if config.backend == "embedded" else 0)
        # (preamble, statement, module) -> why the trusted checker refuses the preamble ([]: it does not)
        self._audits: dict[tuple[str, str, str], list[str]] = {}

    # -- life cycle ---------------------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._started:
            return
        log.info("starting %d Lean %s worker(s)", self.num_workers, self.config.backend)
        starts = [asyncio.ensure_future(self._start_slot(s)) for s in self._slots]
        try:
            try:
                await asyncio.gather(*starts)
            except BaseException:
                for t in starts:  # one failed (or we were cancelled): stop the other starts too
                    t.cancel()
                await asyncio.gather(*starts, return_exceptions=True)
                raise
            if self.config.self_test:
                await self.self_test()
        except BaseException:
            await self.close()
            raise
        self._started = True

    async def close(self) -> None:
        for s in self._slots:
            if s.backend is not None:
                with contextlib.suppress(Exception):
                    await s.backend.close()
                s.backend = None
        if self._started and self._stats.tactics:
            log.info("Lean pool closed: %d tactics asked, %d answers (tactics and starts) from the verdict cache, "
                     "%d backend calls",
                     self._stats.tactics, self.verdicts.hits, self._stats.requests)
        self._started = False

    async def __aenter__(self) -> LeanPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _start_slot(self, slot: _Slot) -> None:
        backend = self.factory()
        try:
            await backend.start()
        except BaseException:
            # a failed or cancelled start: kill whatever was started (shielded: a second
            # cancellation must not leave the process behind either)
            closing = asyncio.ensure_future(backend.close())
            with contextlib.suppress(BaseException):
                await asyncio.shield(closing)
            raise
        slot.backend = backend
        slot.preamble = ""
        slot.requests = 0
        slot.started_at = time.monotonic()

    async def _replace(self, slot: _Slot, why: str) -> None:
        """Kill the slot's process (its whole group) and start a fresh one."""
        old = slot.backend
        slot.backend = None
        log.info("worker %d (pid %s): %s; restarting", slot.index, old.pid if old else None, why)
        slot.history.append(why)
        if old is not None:
            with contextlib.suppress(Exception):
                await old.close()
        await self._start_slot(slot)

    def _recycle_reason(self, slot: _Slot) -> str | None:
        b = slot.backend
        if b is None:
            return "not running"
        if getattr(b, "tainted", ""):
            return f"retired: {b.tainted[:100]}"
        if not b.alive():
            return "process died"
        if slot.requests >= self.config.max_requests_per_worker:
            return f"recycled after {slot.requests} requests"
        if time.monotonic() - slot.started_at > self.config.worker_ttl_s:
            return f"recycled after {self.config.worker_ttl_s:.0f}s"
        rss = b.rss_mb()
        if rss > self.config.worker_rss_limit_mb:
            return f"recycled at {rss} MB RSS (limit {self.config.worker_rss_limit_mb})"
        return None

    # -- routing ------------------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _lease(self, preamble: str | None) -> AsyncIterator[_Slot]:
        """A free slot, preferring one whose process last ran ``preamble``."""
        async with self._cond:
            while True:
                free = [s for s in self._slots if not s.busy]
                if free:
                    same = [s for s in free if s.preamble == preamble]
                    slot = min(same or free, key=lambda s: s.last_used)
                    slot.busy = True
                    break
                await self._cond.wait()
        try:
            yield slot
        finally:
            slot.last_used = time.monotonic()
            async with self._cond:
                slot.busy = False
                self._cond.notify()

    async def _call(self, preamble: str | None, fn: Callable[[LeanBackend], Awaitable[T]], timeout_s: float) -> T:
        """Run ``fn`` on a backend; `InfraFailure` (after replacing the process)
        on timeout or death."""
        async with self._lease(preamble) as slot:
            reason = self._recycle_reason(slot)
            if reason is not None:
                if slot.backend is not None and slot.backend.alive():
                    self._stats.recycles += 1
                else:
                    self._stats.restarts += 1
                try:
                    await self._replace(slot, reason)
                except (LeanSetupError, BackendDied, OSError) as e:
                    raise InfraFailure(Status.CRASHED, f"worker could not be restarted: {e}") from None
            backend = slot.backend
            assert backend is not None
            t0 = time.monotonic()
            self._stats.requests += 1
            slot.requests += 1
            if hasattr(backend, "call_limit_s"):
                # The worker's own wait follows this call's limit (a little after it: this bound fires first).
                backend.call_limit_s = timeout_s + CANCEL_GRACE_S
            try:
                result = await _bounded(fn(backend), timeout_s, backend.pid)
            except TimeoutError:
                self._stats.timeouts += 1
                self._stats.restarts += 1
                await self._replace_quietly(slot, f"no answer in {timeout_s:.1f}s")
                raise InfraFailure(Status.TIMEOUT, f"Lean gave no answer in {timeout_s:.1f}s") from None
            except BackendDied as e:
                self._stats.crashes += 1
                self._stats.restarts += 1
                await self._replace_quietly(slot, f"crashed: {e}")
                raise InfraFailure(Status.CRASHED, f"the Lean process died: {e}") from None
            except LspError as e:
                self._stats.lsp_errors += 1
                self._stats.restarts += 1
                await self._replace_quietly(slot, f"LSP error: {e}")
                raise InfraFailure(Status.CRASHED, f"the Lean worker answered an LSP error: {e}") from None
            self._latencies.append(time.monotonic() - t0)
            slot.preamble = getattr(backend, "last_preamble", preamble)
            if getattr(backend, "tainted", ""):
                # The text ran code of its own, or its answer was unusable: the process takes no further
                # request (nor nonce); the next call on this slot starts a fresh one.
                self._stats.recycles += 1
                slot.history.append(f"retired: {backend.tainted[:100]}")  # type: ignore[attr-defined]
                slot.backend = None
                with contextlib.suppress(Exception):
                    await backend.close()
            return result

    async def _replace_quietly(self, slot: _Slot, why: str) -> None:
        try:
            await self._replace(slot, why)
        except Exception as e:  # the next call on this slot tries again
            log.error("worker %d could not be restarted: %s", slot.index, e)
            slot.backend = None

    def _timeout(self, n: int, retry: bool = False) -> float:
        """Per-call limit: the tactic timeout plus a little per extra block;
        doubled for a retry, which runs on a fresh process whose first use of
        each tactic is slow (up to ~4 s measured); stretched by the machine's
        load (a shared box 10x oversubscribed must not turn every slow answer
        into a timeout and a restart)."""
        base = (self.config.tactic_timeout_s + 0.5 * max(0, n - 1)) * (2 if retry else 1)
        return base * load_factor()

    def _count(self, results: Sequence[TacticResult]) -> None:
        for r in results:
            self._status[r.status.value] += 1

    # -- ProofEnv -----------------------------------------------------------------------------------------------
    async def _audit(self, theorem: Theorem) -> TacticResult | None:
        """The trusted checker's audit of a theorem's preamble (`checker.audit_theorem`), once per preamble and
        statement: a START_ERROR when the preamble is refused, None when it is fine (or the backend has no
        trusted checker, or the preamble is the package's own)."""
        from burnqed_core.lean.checker import audit_preamble, audit_theorem

        if not theorem.preamble.strip() or trust.is_trusted(theorem.preamble):
            return None
        # The replay of the preamble's declarations once per preamble (a file's theorems share one), the
        # statement's meaning once per statement; each with a limit that grows with the preamble.
        limit = preamble_limit(theorem.preamble)
        steps: list[tuple[tuple[str, str, str], Callable[[LeanBackend], Awaitable[list[str]]]]] = [
            ((theorem.preamble, "", theorem.module),
             lambda b: audit_preamble(b, theorem.preamble, theorem.module)),
            ((theorem.preamble, theorem.statement, theorem.module),
             lambda b: audit_theorem(b, theorem, replay=False)),
        ]
        for key, fn in steps:
            if key not in self._audits:
                for attempt in range(2):
                    try:
                        self._audits[key] = await self._call(theorem.preamble, fn,
                                                             self._timeout(1, retry=attempt > 0) + limit)
                        break
                    except InfraFailure as e:
                        if attempt:
                            return TacticResult(status=e.status, message=e.message, retried=True)
                        self._stats.retries += 1
            if self._audits[key]:
                return TacticResult(status=Status.START_ERROR, message=self._audits[key][0])
        return None

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        kept = self.verdicts.get(theorem, ())
        if kept is not None:
            self._count([kept])
            return kept
        refused = await self._audit(theorem)
        if refused is not None:
            if refused.status is Status.START_ERROR:
                self.verdicts.put(theorem, (), refused)
            self._count([refused])
            return refused
        last: InfraFailure | None = None
        for attempt in range(2):
            try:
                r = await self._call(theorem.preamble, lambda b: b.start_proof(theorem),
                                     self._timeout(1, retry=attempt > 0) + preamble_limit(theorem.preamble))
                r = r.model_copy(update={"retried": attempt > 0})
                self.verdicts.put(theorem, (), r)
                self._count([r])
                return r
            except InfraFailure as e:
                last = e
                if attempt == 0:
                    self._stats.retries += 1
        assert last is not None
        r = TacticResult(status=last.status, message=last.message, retried=True)
        self._count([r])
        return r

    async def apply(self, state: GoalState, tactic: str) -> TacticResult:
        return (await self.apply_many([(state, tactic)]))[0]

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        """Apply each tactic to its state; results in order. Pairs are grouped
        by preamble and sent in chunks of ``batch_size`` (one document edit
        each), chunks in parallel over the workers."""
        self._stats.tactics += len(items)
        results: list[TacticResult | None] = [None] * len(items)
        sb = sandbox_module()
        todo: dict[str, list[int]] = {}
        for i, (state, tactic) in enumerate(items):
            reason = sb.check_tactic(tactic, self.config.max_tactic_chars) if sb is not None else None
            if reason is None and not tactic.strip():
                reason = "empty tactic"
            if reason is not None:
                results[i] = TacticResult(status=Status.REJECTED, message=reason)
                self._stats.rejected += 1
            elif (kept := self.verdicts.get(state.theorem, (*state.tactics, tactic))) is not None:
                results[i] = kept
            else:
                todo.setdefault(state.theorem.preamble, []).append(i)
        chunks = [(pre, idx[k:k + self.config.batch_size]) for pre, idx in todo.items()
                  for k in range(0, len(idx), self.config.batch_size)]
        outs = await asyncio.gather(*(self._apply_chunk(pre, [items[i] for i in idx]) for pre, idx in chunks))
        for (_, idx), out in zip(chunks, outs, strict=True):
            for i, r in zip(idx, out, strict=True):
                results[i] = r
                state, tactic = items[i]
                self.verdicts.put(state.theorem, (*state.tactics, tactic), r)
        final = [r for r in results if r is not None]
        self._count(final)
        return final

    async def _apply_chunk(self, preamble: str, items: list[tuple[GoalState, str]]) -> list[TacticResult]:
        try:
            return await self._call(preamble, lambda b: b.apply_many(items),
                                    self._timeout(len(items)) + preamble_limit(preamble))
        except InfraFailure:
            self._stats.retries += 1
        # The retry: each pair alone on the fresh process, so that one slow
        # tactic does not take the others of its batch down with it again.
        out = []
        for item in items:
            try:
                r = (await self._call(preamble, lambda b, it=item: b.apply_many([it]),
                                      self._timeout(1, retry=True) + preamble_limit(preamble)))[0]
                out.append(r.model_copy(update={"retried": True}))
            except InfraFailure as e:
                out.append(TacticResult(status=e.status, message=e.message, retried=True))
        return out

    @property
    def reads_goals(self) -> bool:
        """Whether `check_proof` can return the proof's states (``states=True``): a backend whose trusted
        checker reads them from the checked run (the embedded one; Pantograph with its checker on)."""
        return self.config.backend == "embedded" or self.config.pantograph.trusted_checker

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str], states: bool = False,
                          meaning: str = "refuse") -> CheckResult:
        """Whole-proof re-check (see `checker`); infra failures are retried once
        and then reported with ``infra=True``, never as a rejection. ``states``:
        with the goals before each tactic (`CheckResult.states`) where the
        backend `reads_goals`."""
        from burnqed_core.lean.checker import check_proof, proof_text

        problems = static_problems(theorem, proof_text("burnqed_checked", theorem.statement, tactics or ["skip"],
                                                      strict=False))
        if problems:
            return CheckResult(ok=False, errors=problems)
        last: InfraFailure | None = None
        for attempt in range(2):
            try:
                return await self._call(theorem.preamble,
                                        lambda b: check_proof(b, theorem, tactics, states=states, meaning=meaning),
                                        self._timeout(len(tactics) + 1, retry=attempt > 0)
                                        + preamble_limit(theorem.preamble))
            except InfraFailure as e:
                last = e
                if attempt == 0:
                    self._stats.retries += 1
        assert last is not None
        return CheckResult(ok=False, errors=[last.message], infra=True)

    async def check_source(self, text: str, timeout_s: float | None = None) -> list[Diagnostic]:
        """Elaborate a whole source on some worker (no retry: raises
        `InfraFailure` on timeout or crash). The text is the worker's document,
        one snapshot per command: keep it to a few hundred commands (the
        embedded worker's next document change cancels the last one's snapshots
        recursively, and after ~460 commands that overflows Node's stack and
        ends the process). A user's file goes through `elaborate`/`judge`, one
        command whatever its size."""
        return await self._call(None, lambda b: b.check_source(text), timeout_s or max(60.0, self._timeout(1)))

    async def elaborate(self, text: str, axioms_of: Sequence[str] = (), timeout_s: float | None = None,
                        declared: bool = False, retry: bool = True) -> Elaboration:
        """`LeanBackend.elaborate` on some worker (``declared``: every theorem of the text, listed and judged);
        an infrastructure failure (timeout, crash, protocol error) is retried once on a fresh process with a
        doubled limit (``retry``; without it, at once), then raised as `InfraFailure` (never a verdict). A text
        whose own code hangs the worker costs a limit and a restart per attempt: ``retry=False`` pays once."""
        def go(b: LeanBackend) -> Awaitable[Elaboration]:
            return b.elaborate(text, axioms_of, declared=True) if declared else b.elaborate(text, axioms_of)
        for attempt in range(2 if retry else 1):
            try:
                return await self._call(None, go, timeout_s or max(60.0, self._timeout(1, retry=attempt > 0)))
            except InfraFailure:
                if attempt or not retry:
                    raise
                self._stats.retries += 1
        raise AssertionError("unreachable")

    async def judge(self, preamble: str, expected: str, candidate: str, names: Sequence[str],
                    timeout_s: float | None = None, **options: Any) -> JudgeReport:
        """The trusted checker's report (`burnqed_core.lean.judge`) from some
        worker whose backend has one; ``options``: ``module``, ``mode``,
        ``trusted``, ``positions`` (`judge.judge_command`); no retry."""
        async def go(b: LeanBackend) -> JudgeReport:
            fn = getattr(b, "judge", None)
            if fn is None:
                raise LeanSetupError(f"{type(b).__name__} has no trusted checker")
            return await fn(preamble, expected, candidate, names, **options)  # type: ignore[no-any-return]
        return await self._call(None, go, timeout_s or max(60.0, self._timeout(1)))

    async def store_stats(self, timeout_s: float = 60.0) -> StoreStats | None:
        """The trusted checker's preamble store on some worker (`judge.lean`); None when its backend keeps
        none."""
        async def go(b: LeanBackend) -> StoreStats | None:
            fn = getattr(b, "store_stats", None)
            return None if fn is None else await fn()  # type: ignore[no-any-return]
        return await self._call(None, go, timeout_s)

    async def free(self, states: Sequence[GoalState]) -> None:
        handles = [s for s in states if s.handle is not None]
        if not handles:
            return
        for slot in self._slots:
            if slot.backend is not None and not slot.busy:
                with contextlib.suppress(Exception):
                    await slot.backend.free(handles)

    # -- self-test and statistics -------------------------------------------------------------------------------
    async def self_test(self) -> None:
        """Prove a known-good theorem step by step and as a whole, and fail on
        a known-bad one; `LeanSetupError` if any answer is wrong (a broken
        install or a Lean version the pool does not understand shows here)."""
        problems: list[str] = []
        good, bad = SELF_TEST_GOOD, SELF_TEST_BAD
        r = await self.start_proof(good)
        state = r.state
        if not r.ok or state is None or len(state.goals) != 1 or "⊢ p ∧ q" not in state.goals[0]:
            problems.append(f"start of `{good.statement}` gave {r.status.value} {r.message or state}")
        else:
            for tactic in good.proof:
                r = await self.apply(state, tactic)
                if not r.ok or r.state is None:
                    problems.append(f"`{tactic}` failed on a known-good proof: {r.status.value} {r.message}")
                    break
                state = r.state
            else:
                if state.goals:
                    problems.append(f"known-good proof left goals: {state.goals}")
        c = await self.check_proof(good, good.proof)
        if not c.ok:
            problems.append(f"known-good proof rejected by the checker: {c.errors[:1]}")
        c = await self.check_proof(bad, bad.proof)
        if c.ok:
            problems.append(f"known-bad proof `{bad.statement}` := by omega was accepted")
        r = await self.start_proof(bad)
        if r.ok and r.state is not None:
            r2 = await self.apply(r.state, "omega")
            if r2.ok:
                problems.append("`omega` closed the known-bad goal `n + 1 = n`")
        if problems:
            raise LeanSetupError("Lean self-test failed (broken install or unsupported Lean version): "
                                 + "; ".join(problems))
        log.info("Lean self-test passed")

    def stats(self) -> PoolStats:
        lat = list(self._latencies)
        s = self._stats.model_copy(update={
            "by_status": dict(self._status),
            "cached": self.verdicts.hits,
            "latency_p50_s": round(statistics.median(lat), 4) if lat else 0.0,
            "latency_p95_s": round(_percentile(lat, 0.95), 4),
            "rss_mb": [s.backend.rss_mb() if s.backend else 0 for s in self._slots],
        })
        return s

    @property
    def pids(self) -> list[int | None]:
        return [s.backend.pid if s.backend else None for s in self._slots]

    def backend(self, index: int = 0) -> Any:
        """The backend of a slot (tests and benchmarks)."""
        return self._slots[index].backend
