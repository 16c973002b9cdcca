"""The Pantograph backend: one process of Pantograph's REPL executable (prod: native Lean + Mathlib).

Protocol (Pantograph ``doc/repl.md``): ``repl <modules...>`` with ``LEAN_PATH`` in the environment prints
``ready.`` once the modules are imported, then answers one JSON line per command line ``<cmd> <json>``. Failures of
a command come back as ``{"error": kind, "desc": text}`` (`ReplError`). What each version takes and answers is the
`Dialect` (`burnqed_core.lean.pantograph.dialect`); answers are read by
`burnqed_core.lean.pantograph.rendering`, the texts sent and read back by `burnqed_core.lean.pantograph.sources`.

A theorem is started by elaborating ``<preamble> theorem ... := sorry`` with ``frontend.process`` and ``"sorrys":
true`` (so the preamble's definitions and the statement's binders are in the goal's context, exactly as in a
file), not with ``goal.start``, which takes a closed type (``goal.start`` remains available as `start_expr`).
Versions after 0.3.7 dropped ``sorrys`` and the goal fields of units: there (known from the version, or from a
first answer that has the ``sorry`` warning but no ``goalStateId``) the statement is checked with
``frontend.process`` and its goal state made by ``frontend.distil``, whose goal is the closed statement; the
statement's binders are then introduced by name (``intro``) to reach the same state.

A ``GoalState.handle`` is a Pantograph ``stateId`` of *this* process. A state from another (crashed, recycled)
process is rebuilt by replaying its tactic path, so the search never sees the difference.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import psutil

from burnqed_core.config import LeanConfig
from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.judge import JudgeReport, ReportError, judge_command, judged, new_nonce, worker_header
from burnqed_core.lean.pantograph.dialect import (
    PROTOCOL_ERRORS,
    BackendTimeout,
    Dialect,
    PantographProtocolError,
    ReplError,
    goals_of_print,
)
from burnqed_core.lean.pantograph.rendering import first_error, interpret_tactic_result, parse_message, render_goals
from burnqed_core.lean.pantograph.sources import (
    MODULE_NAME,
    elaboration_source,
    read_elaboration,
    start_source,
    statement_binder_names,
    strip_imports,
)
from burnqed_core.lean.types import (
    BackendDied,
    CheckResult,
    Diagnostic,
    Elaboration,
    GoalState,
    Status,
    TacticResult,
)
from burnqed_core.lean.verdicts import elaboration_of
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

READY = "ready."
STDERR_TAIL = 50
OWN_TIMEOUT = 0.8  # Pantograph's `timeout` option, as a fraction of lean.tactic_timeout_s


def _limit_memory(limit_mb: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that caps the child's address space (RLIMIT_AS), as
    Kimina does: a REPL that grows is killed by the kernel, not the host."""
    if not limit_mb:
        return None
    limit = int(limit_mb) * 1024 * 1024

    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return preexec


class PantographBackend:
    """One Pantograph REPL process. Implements `LeanBackend`.

    Requests are serialised by a lock (the REPL answers in order, one line
    per command); a request that gets no answer within its timeout, a
    response that is not JSON, or a cancelled request (the answer would come
    later and desynchronise the stream) kills the whole process group.
    """

    def __init__(self, config: LeanConfig) -> None:
        from burnqed_core.lean.checker import PreambleDeclarations

        self.config = config
        self.pg = config.pantograph
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)
        self._stderr_task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        # what this Lean reports a preamble declares (`checker.check_proof` without the trusted checker)
        self.preamble_declarations = PreambleDeclarations()
        # stateId -> (preamble, statement, tactic path) of states alive in this process
        self._states: dict[int, tuple[str, str, tuple[str, ...]]] = {}
        self.version: str | None = None
        self.dialect = Dialect(None)
        self.startup_s = 0.0
        self.requests = 0
        # Beyond Pantograph's own timeout (which answers an error), how long a
        # request may go unanswered before the process counts as hung.
        self.request_grace_s = 5.0
        # Why this process takes no further request: a judged text ran code of its own, or the checker's answer
        # to it was unusable (a task the text left could read the next command, and its nonce, from stdin, or
        # write a forged answer to stdout). The process is killed then; the pool starts a fresh one.
        self.tainted = ""

    # -- process --------------------------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        """The REPL process exists and has not exited. A process that exited
        but is not reaped yet (asyncio's child watcher sets ``returncode`` a
        moment later, on a loaded machine much later) is a zombie: dead."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return False
        try:
            return psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    async def _reap(self, within_s: float = 5.0) -> None:
        """Wait (bounded) for a killed process's exit to be collected."""
        proc = self.proc
        if proc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(proc.wait()), within_s)

    def rss_mb(self) -> int:
        if not self.alive() or self.pid is None:
            return 0
        try:
            return int(psutil.Process(self.pid).memory_info().rss // (1024 * 1024))
        except psutil.Error:
            return 0

    def _argv(self) -> list[str]:
        exe = self.pg.executable
        path = exe if os.sep in exe else shutil.which(exe)
        if not path or not os.access(path, os.X_OK):
            raise LeanSetupError(f"Pantograph executable {exe!r} not found: build Pantograph's `repl` and set "
                                 "lean.pantograph.executable (or BURNQED_PANTOGRAPH)")
        return [path, *self.pg.modules]

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.pg.lean_path:
            env["LEAN_PATH"] = self.pg.lean_path
        return env

    async def start(self) -> None:
        """Start the REPL and wait for ``ready.`` (importing Mathlib is slow:
        up to ``lean.pantograph.ready_timeout_s``)."""
        if self.alive():
            return
        argv = self._argv()
        self.version = await self._probe_version(argv[0])
        self.dialect = Dialect(self.version)
        t0 = time.monotonic()
        self.stderr_tail.clear()
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=self._env(), start_new_session=True, preexec_fn=_limit_memory(self.pg.memory_limit_mb),
                limit=1 << 26,
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise LeanSetupError(f"cannot run Pantograph ({' '.join(argv)}): {e}") from None
        self._stderr_task = asyncio.create_task(self._drain_stderr(self.proc))
        try:
            await asyncio.wait_for(self._await_ready(), self.pg.ready_timeout_s)
        except TimeoutError:
            await self.close()
            raise LeanSetupError(f"Pantograph ({' '.join(argv)}) printed no `{READY}` line within "
                                 f"{self.pg.ready_timeout_s:.0f}s (lean.pantograph.ready_timeout_s){self._tail()}"
                                 ) from None
        except BaseException:  # a failed or cancelled start leaves no process behind
            self.kill()
            with contextlib.suppress(BaseException):
                await asyncio.shield(self.close())
            raise
        self.startup_s = time.monotonic() - t0
        self._states.clear()
        # Pantograph's own per-operation timeout (0.3.0+; older versions ignore the key), a little below
        # the pool's, so that a slow tactic is answered with an error and the process (its Mathlib import)
        # is kept, rather than killed by the pool's deadline.
        try:
            await self._call("options.set", {"timeout": int(self.config.tactic_timeout_s * 1000 * OWN_TIMEOUT),
                                             "automaticMode": True})
        except ReplError as e:
            log.warning("Pantograph refused options.set (%s): running without its own timeout", e)
        log.info("Pantograph %s pid %s ready in %.1fs (modules %s)", self.version or "?", self.pid, self.startup_s,
                 self.pg.modules)
        if not self.pg.trusted_checker:
            log.warning("lean.pantograph.trusted_checker is off: verdicts come from `#print axioms` appended to "
                        "the document under test, which that document can influence (docs/trusted-checker.md)")

    @staticmethod
    async def _probe_version(exe: str) -> str | None:
        """``repl --version`` (answered before any import, so cheap), for logs
        and run manifests; None if it cannot tell."""
        try:
            proc = await asyncio.create_subprocess_exec(exe, "--version", stdin=asyncio.subprocess.DEVNULL,
                                                        stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            log.debug("Pantograph --version failed: %s", e)
            return None
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 10)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            return None
        text = out.decode("utf-8", "replace").strip()
        return text.splitlines()[0] if proc.returncode == 0 and text else None

    async def _await_ready(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            raw = await self.proc.stdout.readline()
            if not raw:
                await self.proc.wait()
                raise LeanSetupError(f"Pantograph exited with code {self.proc.returncode} before `{READY}`"
                                     f"{self._tail()}")
            line = raw.decode("utf-8", "replace").strip()
            if line == READY:
                return
            if line.startswith("{"):
                with contextlib.suppress(json.JSONDecodeError):
                    obj = json.loads(line)
                    if isinstance(obj, dict) and "error" in obj:
                        raise LeanSetupError(f"Pantograph failed to start: {obj.get('error')}: {obj.get('desc')}"
                                             " (are lean.pantograph.modules on LEAN_PATH, built with the same Lean?)")
            log.debug("Pantograph before ready: %s", line[:200])

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        """Read stderr as it comes (a full pipe would block the REPL); keep
        the tail for error messages."""
        assert proc.stderr is not None
        with contextlib.suppress(Exception):
            while raw := await proc.stderr.readline():
                line = raw.decode("utf-8", "replace").rstrip()
                self.stderr_tail.append(line)
                log.debug("pantograph[%s] stderr: %s", proc.pid, line[:300])

    def _tail(self) -> str:
        tail = " | ".join(list(self.stderr_tail)[-5:])
        return f"; stderr: {tail}" if tail else ""

    def kill(self) -> None:
        """SIGKILL the whole process group (the REPL and anything it spawned)."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()

    async def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(BaseException):
                await self._stderr_task
            self._stderr_task = None
        self._states.clear()

    def _death(self) -> str:
        code = self.proc.returncode if self.proc else None
        return f"Pantograph process {self.pid} is gone (exit code {code}){self._tail()}"

    # -- one request ----------------------------------------------------------------------------------------------
    async def _call(self, cmd: str, payload: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send one command, read its one-line JSON answer. Raises `ReplError`
        for an error object, `BackendDied`/`BackendTimeout` when the process is
        gone, hangs or desynchronises (it is killed then)."""
        timeout_s = timeout_s if timeout_s is not None else self.config.tactic_timeout_s * 2 + self.request_grace_s
        async with self._lock:
            proc = self.proc
            if self.tainted:
                raise BackendDied(f"the Pantograph process is retired: {self.tainted}")
            if proc is None or proc.returncode is not None or proc.stdin is None or proc.stdout is None:
                raise BackendDied(self._death() if proc else "Pantograph not started")
            line = f"{cmd} {json.dumps(payload, ensure_ascii=False)}\n"
            self.requests += 1
            try:
                proc.stdin.write(line.encode("utf-8"))
                await proc.stdin.drain()
                raw = await asyncio.wait_for(proc.stdout.readline(), timeout_s)
            except TimeoutError:
                self.kill()
                await self._reap()
                raise BackendTimeout(f"Pantograph gave no answer to {cmd} within {timeout_s:.1f}s: killed") from None
            except (BrokenPipeError, ConnectionResetError):
                self.kill()
                await self._reap()
                raise BackendDied(self._death()) from None
            except asyncio.CancelledError:
                self.kill()  # the answer would arrive later and be read as the next one's
                raise
            if not raw:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(proc.wait(), 5)
                raise BackendDied(self._death())
            text = raw.decode("utf-8", "replace").strip()
            try:
                obj = json.loads(text)
            except json.JSONDecodeError:
                self.kill()
                await self._reap()
                raise BackendDied(f"Pantograph answered {cmd} with non-JSON {text[:200]!r}: killed (desync)") from None
            if not isinstance(obj, dict):
                self.kill()
                raise BackendDied(f"Pantograph answered {cmd} with {type(obj).__name__}, not an object: killed")
        if "error" in obj and "desc" in obj:
            raise ReplError(str(obj["error"]), str(obj["desc"]))
        return obj

    # -- commands -------------------------------------------------------------------------------------------------
    async def stat(self) -> int:
        """Number of goal states the REPL holds."""
        return int((await self._call("stat", {})).get("nGoals", 0))

    async def reset(self) -> None:
        """Drop every goal state of the REPL (handles become stale and are replayed)."""
        await self._call("reset", {})
        self._states.clear()

    async def start_expr(self, expr: str) -> TacticResult:
        """A proof of a closed type via ``goal.start`` (no preamble, no binders
        introduced: ``∀ (n : Nat), n + 0 = n`` stays one goal). ``goal.start``
        answers only a state id; its goals are Lean's pretty-printed ones from
        ``goal.print {"stateId", "goals": true}`` (Protocol.lean ``GoalPrint``,
        v0.2.23 and later: ``{"goals": [...], ...}``). A Pantograph before
        v0.2.23 answers ``goal.print`` without ``goals`` (only ``root``/``parent``):
        there the goals are read through ``skip``, as every tactic returns them."""
        t0 = time.monotonic()
        try:
            res = await self._call("goal.start", {"expr": expr})
        except ReplError as e:
            if e.kind in PROTOCOL_ERRORS:
                raise PantographProtocolError(f"Pantograph refused goal.start: {e.desc}") from None
            return TacticResult(status=Status.START_ERROR, message=e.desc, elapsed_s=time.monotonic() - t0)
        root = int(res["stateId"])
        th = Theorem(name="expr", statement=f": {expr}")
        try:
            printed = await self._call("goal.print", {"stateId": root, "goals": True})
        except ReplError as e:
            raise PantographProtocolError(f"Pantograph refused goal.print ({e.kind}): {e.desc}") from None
        sid: int | None = root
        printed_goals = goals_of_print(printed)
        if printed_goals is not None:
            goals = render_goals(printed_goals)
            if not goals:
                await self._call("goal.delete", {"stateIds": [root]})
                return TacticResult(status=Status.START_ERROR, message=f"no goal for {expr!r}",
                                    elapsed_s=time.monotonic() - t0)
        else:  # before v0.2.23: no goals in goal.print
            log.info("Pantograph %s: goal.print has no goals; start_expr reads them through `skip`",
                     self.version or "?")
            status, goals, msg, sid = await self._tactic(root, "skip")
            await self._call("goal.delete", {"stateIds": [root]})
            if status is not Status.OK or sid is None:
                return TacticResult(status=status if status.is_infra else Status.START_ERROR,
                                    message=f"no goal for {expr!r}: {msg}", elapsed_s=time.monotonic() - t0)
        self._states[sid] = ("", th.statement, ())
        state = GoalState(theorem=th, goals=goals, handle=sid)
        return TacticResult(status=Status.OK, state=state, elapsed_s=time.monotonic() - t0)

    async def process_file(self, text: str, *, sorrys: bool = False, new_constants: bool = False,
                           read_header: bool = False) -> list[dict[str, Any]]:
        """``frontend.process`` of a source text in a fresh environment of the
        process's modules (``inheritEnv: false``); its units. A protocol error
        (`PantographProtocolError`) is infrastructure; the one version
        difference an answer reveals (``invocations``) is corrected once."""
        timeout_s = max(self.config.tactic_timeout_s * 4, 60.0) + self.request_grace_s
        for attempt in (1, 2):
            payload = self.dialect.process_request(text, sorrys=sorrys, new_constants=new_constants,
                                                   read_header=read_header)
            try:
                res = await self._call("frontend.process", payload, timeout_s=timeout_s)
            except ReplError as e:
                if e.kind not in PROTOCOL_ERRORS:
                    raise
                if attempt == 1 and self.dialect.corrected_by(e):
                    log.info("Pantograph %s: frontend.process %s `invocations: Bool`", self.version or "?",
                             "needs" if self.dialect.invocations_bool else "does not take")
                    continue
                raise PantographProtocolError(f"Pantograph refused frontend.process ({e.kind}): {e.desc}") from None
            units = res.get("units")
            if not isinstance(units, list):
                raise PantographProtocolError(f"Pantograph frontend.process answer has no units: {str(res)[:200]}")
            return units
        raise AssertionError("unreachable")

    async def _start(self, theorem: Theorem) -> tuple[Status, int | None, tuple[str, ...], str]:
        source = start_source(theorem)
        try:
            units = await self.process_file(source, sorrys=self.dialect.sorrys)
        except ReplError as e:
            if e.is_interrupt:
                return Status.TIMEOUT, None, (), e.desc
            raise BackendDied(f"Pantograph frontend.process failed ({e.kind}): {e.desc}") from None
        diags = [parse_message(m, unprefixed=3) for u in units for m in u.get("messages") or []]
        errors = [d for d in diags if d.is_error]
        if errors:
            return Status.START_ERROR, None, (), first_error(errors)
        with_goal = [u for u in units if u.get("goalStateId") is not None]
        if with_goal:
            unit = with_goal[-1]
            sid = int(unit["goalStateId"])
            self._states[sid] = (theorem.preamble, theorem.statement, ())
            return Status.OK, sid, render_goals(unit.get("goals") or []), ""
        if self.dialect.sorrys and any("sorry" in d.message for d in diags if d.severity == 2):
            # the statement elaborated with its `sorry`, but no goal came back: a Pantograph without `sorrys`
            log.info("Pantograph %s has no frontend.process sorrys: starting theorems with frontend.distil",
                     self.version or "?")
            self.dialect.sorrys = False
        if not self.dialect.sorrys:
            return await self._start_distil(theorem, source)
        return Status.START_ERROR, None, (), "no goal state for the statement"

    async def _start_distil(self, theorem: Theorem, source: str) -> tuple[Status, int | None, tuple[str, ...], str]:
        """The statement's goal state from ``frontend.distil`` (after 0.3.7),
        the statement having elaborated cleanly (`_start`): its binders
        introduced by name, as ``sorrys`` gave them."""
        try:
            res = await self._call("frontend.distil", {"file": source, "ignoreValues": True})
        except ReplError as e:
            if e.is_interrupt:
                return Status.TIMEOUT, None, (), e.desc
            raise BackendDied(f"Pantograph frontend.distil failed on a statement that elaborates "
                              f"({e.kind}): {e.desc}") from None
        targets = res.get("targets")
        if not isinstance(targets, list) or not targets or "stateId" not in targets[-1]:
            raise PantographProtocolError(f"Pantograph frontend.distil answer has no target: {str(res)[:200]}")
        sid = int(targets[-1]["stateId"])
        goals = render_goals(targets[-1].get("goals") or [])
        names = statement_binder_names(theorem.statement)
        if names is None:
            log.warning("cannot read the binders of %r: its goal keeps them as a ∀", theorem.statement[:80])
            names = []
        if names:
            status, goals, msg, nxt = await self._tactic(sid, "intro " + " ".join(names))
            await self._call("goal.delete", {"stateIds": [sid]})
            if status is not Status.OK or nxt is None:
                return (status if status.is_infra else Status.START_ERROR), None, (), f"intro of the binders: {msg}"
            sid = nxt
        self._states[sid] = (theorem.preamble, theorem.statement, ())
        return Status.OK, sid, goals, ""

    async def _tactic(self, sid: int, tactic: str) -> tuple[Status, tuple[str, ...], str, int | None]:
        try:
            res = await self._call("goal.tactic", {"stateId": sid, "tactic": tactic})
        except ReplError as e:
            if e.is_interrupt:
                limit = self.config.tactic_timeout_s * OWN_TIMEOUT
                return Status.TIMEOUT, (), f"Pantograph interrupted the tactic after {limit:.1f}s", None
            if e.kind == "index":
                raise  # a stale handle: the caller replays
            if e.kind in PROTOCOL_ERRORS:
                raise PantographProtocolError(f"Pantograph refused goal.tactic ({e.kind}): {e.desc}") from None
            return Status.TACTIC_ERROR, (), f"{e.kind}: {e.desc}", None
        return interpret_tactic_result(res)

    async def _handle(self, state: GoalState) -> tuple[int | None, str]:
        """A stateId of this process for ``state``: its handle if it is one,
        else rebuilt by replaying the tactic path. (None, why) if that fails."""
        key = (state.theorem.preamble, state.theorem.statement, state.tactics)
        if state.handle is not None and self._states.get(state.handle) == key:
            return state.handle, ""
        status, sid, _, msg = await self._start(state.theorem)
        if status is not Status.OK or sid is None:
            return None, f"replay: {msg}"
        for i, tac in enumerate(state.tactics):
            status, _, msg, nxt = await self._tactic(sid, tac)
            if status is not Status.OK or nxt is None:
                return None, f"replay of tactic {i + 1} failed: {msg}"
            self._states[nxt] = (key[0], key[1], state.tactics[: i + 1])
            sid = nxt
        return sid, ""

    # -- ProofEnv -------------------------------------------------------------------------------------------------
    async def start_proof(self, theorem: Theorem) -> TacticResult:
        t0 = time.monotonic()
        status, sid, goals, msg = await self._start(theorem)
        dt = time.monotonic() - t0
        if status is not Status.OK:
            return TacticResult(status=status, message=msg, elapsed_s=dt)
        return TacticResult(status=Status.OK, state=GoalState(theorem=theorem, goals=goals, handle=sid), elapsed_s=dt)

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        """One ``goal.tactic`` per pair, in order (the REPL has no batch call)."""
        out: list[TacticResult] = []
        for state, tactic in items:
            t0 = time.monotonic()
            for attempt in (1, 2):
                try:
                    out.append(await self._apply_one(state, tactic, t0))
                    break
                except ReplError as e:
                    if e.kind in PROTOCOL_ERRORS:
                        raise PantographProtocolError(f"Pantograph refused a request ({e.kind}): {e.desc}") from None
                    # `index`: the REPL lost the state (a reset behind our back): forget it, replay once.
                    if state.handle is not None:
                        self._states.pop(state.handle, None)
                    if attempt == 2 or e.kind != "index":
                        out.append(TacticResult(status=Status.TACTIC_ERROR, message=f"{e.kind}: {e.desc}",
                                                elapsed_s=time.monotonic() - t0))
                        break
        return out

    async def _apply_one(self, state: GoalState, tactic: str, t0: float) -> TacticResult:
        sid, why = await self._handle(state)
        if sid is None:
            return TacticResult(status=Status.TACTIC_ERROR, message=why, elapsed_s=time.monotonic() - t0)
        status, goals, msg, nxt = await self._tactic(sid, tactic)
        dt = time.monotonic() - t0
        path = (*state.tactics, tactic)
        if status is Status.OK and nxt is not None:
            self._states[nxt] = (state.theorem.preamble, state.theorem.statement, path)
            return TacticResult(status=Status.OK, state=GoalState(theorem=state.theorem, tactics=path, goals=goals,
                                                                  handle=nxt), elapsed_s=dt)
        if nxt is not None:  # a state reached with `sorry`/unsafe: not kept
            await self._call("goal.delete", {"stateIds": [nxt]})
        return TacticResult(status=status, message=msg, elapsed_s=dt)

    async def free(self, states: Sequence[GoalState]) -> None:
        """Delete the states' goal states in the REPL. Only handles that are
        this process's own: a pool hands every process the same list, and
        stateId 7 of another process is not our 7."""
        ids = [s.handle for s in states if s.handle is not None
               and self._states.get(s.handle) == (s.theorem.preamble, s.theorem.statement, s.tactics)]
        if not ids or not self.alive():
            return
        await self._call("goal.delete", {"stateIds": ids})
        for i in ids:
            self._states.pop(i, None)

    async def check_source(self, text: str) -> list[Diagnostic]:
        """All messages of a whole source text (its ``import`` lines must be
        among the process's modules; they are blanked, lines keep their numbers)."""
        try:
            units = await self.process_file(strip_imports(text))
        except ReplError as e:
            if e.is_interrupt:
                raise BackendTimeout(f"Pantograph timeout on a whole-source check: {e.desc}") from None
            raise BackendDied(f"Pantograph frontend.process failed ({e.kind}): {e.desc}") from None
        return [parse_message(m, unprefixed=3) for u in units for m in u.get("messages") or []]

    async def elaborate(self, text: str, axioms_of: Sequence[str] = (), declared: bool = False) -> Elaboration:
        """Elaborate ``text`` in a fresh environment (``inheritEnv: false``)
        and report what Lean says it holds (`burnqed_core.lean.pantograph.sources`):
        diagnostics of the text, its declarations (``newConstants`` without
        auxiliary constants; None if this Pantograph does not report them),
        the axioms of each name in ``axioms_of`` by ``#print axioms``, and
        whether Lean reached the end of the text."""
        body = strip_imports(text)
        if not body.endswith("\n"):
            body += "\n"
        if self.trusted_checker and (axioms_of or declared):
            # One elaboration decides: the trusted checker's run (diagnostics, verdicts, declarations).
            try:
                report = await self.judge("", "", body, [] if declared else axioms_of,
                                          mode="list" if declared else "names")
            except ReportError as e:
                log.warning("the trusted checker's answer is unusable: %s", e)
                return Elaboration(diagnostics=[Diagnostic(severity=1, line=0, end_line=0, message=(
                    f"the trusted checker gave no usable answer: {e}"))])
            return elaboration_of(report, None if declared else axioms_of)
        source, offsets = elaboration_source(body, axioms_of)
        try:
            units = await self.process_file(source, new_constants=True)
        except ReplError as e:
            if e.is_interrupt:
                raise BackendTimeout(f"Pantograph timeout on a whole-source check: {e.desc}") from None
            raise BackendDied(f"Pantograph frontend.process failed ({e.kind}): {e.desc}") from None
        return read_elaboration(units, body, axioms_of, offsets)

    @property
    def trusted_checker(self) -> bool:
        return self.pg.trusted_checker

    def judge_header(self) -> str:
        """The checker's header (`judge.worker_header`) importing this
        process's modules too: the document is read with its own header
        (``readHeader``), so it states every import."""
        mods = [m for m in self.pg.modules if not m.startswith("-")]
        bad = [m for m in mods if not MODULE_NAME.match(m)]
        if bad:
            raise LeanSetupError(f"lean.pantograph.modules: not a module name: {bad[0]!r}")
        return worker_header(imports=mods)

    async def judge(self, preamble: str, expected: str, candidate: str, names: Sequence[str],
                    module: str = "", mode: str = "names", trusted: bool = False,
                    positions: Sequence[tuple[int, int]] = ()) -> JudgeReport:
        """The trusted checker's verdict (`burnqed_core.lean.judge`), as on the
        embedded backend: one ``frontend.process`` of a fresh document that
        is the checker's header (with this process's modules) and one
        ``burnqed_judge`` command whose candidate is a string literal. Read
        only from the one message that starts with this call's nonce; a Lean
        that cannot run the checker (no module system) gives no such message,
        and the error says what Lean answered."""
        nonce = new_nonce()
        doc = self.judge_header() + judge_command(nonce, preamble, expected, candidate, names, module, mode, trusted,
                                                  positions)
        try:
            units = await self.process_file(doc, read_header=True)
        except ReplError as e:
            if e.is_interrupt:
                self._retire(f"the checker ran out of time on a text ({e.desc})")
                raise ReportError(f"the checker ran out of time ({e.desc})") from None
            raise BackendDied(f"Pantograph frontend.process failed ({e.kind}): {e.desc}") from None
        diags = [parse_message(m, unprefixed=3) for u in units for m in u.get("messages") or []]

        def answer() -> str:
            answers = [d.message for d in diags if d.severity == 3 and d.message.startswith(nonce)]
            if len(answers) != 1:
                lean_said = "; ".join(d.message.splitlines()[0] for d in diags if d.is_error)[:300]
                raise ReportError(f"the checker answered {len(answers)} times (expected once)"
                                  + (f"; Lean: {lean_said}" if lean_said else ""))
            return answers[0]

        return judged(answer, nonce, None if mode == "list" else list(names), self._retire)

    def _retire(self, why: str) -> None:
        """`tainted`: the process is killed (with whatever the text started in it) and takes no further
        request."""
        self.tainted = why
        log.info("Pantograph process pid %s retired: %s", self.pid, why[:200])
        self.kill()

    @property
    def reads_goals(self) -> bool:
        """`check_proof(states=True)` reads the states from the checked run (the trusted checker's)."""
        return self.trusted_checker

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str], states: bool = False,
                          meaning: str = "refuse") -> CheckResult:
        from burnqed_core.lean.checker import check_proof

        return await check_proof(self, theorem, tactics, states=states, meaning=meaning)
