"""Driver of the Lean 4 LSP file worker (``lean --worker``) over stdio.

One worker process holds one open document. Every check replaces the whole
text (``textDocument/didChange``); Lean re-elaborates only what changed after
the longest unchanged prefix, so a fixed preamble stays elaborated. Facts this
relies on (measured on the embedded WebAssembly build):

* ``initialize`` is never answered by the file worker: do not wait for it.
* A version is elaborated when ``$/lean/fileProgress`` reports an empty
  ``processing`` list for it; its last ``publishDiagnostics`` may come later,
  so ``textDocument/waitForDiagnostics`` is awaited before reading them.
* ONE request at a time: concurrent requests make Lean start more threads,
  and in this build every new pthread is a new Worker (~5 CPU-s, ~0.5 GB,
  never freed). A lock serialises everything sent to the worker.
* Server-to-client requests (``workspace/*/refresh``) must be answered
  (with null); the build prints ``[DEBUG:...]`` lines on stdout, skipped.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import json
import logging
import os
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from burnqed_core.lean.types import BackendDied, Diagnostic

log = logging.getLogger(__name__)

ERROR, WARNING = 1, 2


def diagnostic_of(d: dict[str, Any]) -> Diagnostic:
    r = d.get("fullRange") or d["range"]
    return Diagnostic(severity=int(d.get("severity", ERROR)), line=r["start"]["line"],
                      end_line=r["end"]["line"], message=str(d["message"]))


def is_sorry_warning(d: Diagnostic) -> bool:
    """Lean reports `sorry` only as a warning: "declaration uses `sorry`"
    (backticks since 4.2x; older versions wrote 'sorry')."""
    return d.severity == WARNING and d.message.startswith("declaration uses") and "sorry" in d.message


def failures(diags: Sequence[Diagnostic]) -> list[Diagnostic]:
    """What makes a proof not accepted: any error, and a `sorry` warning."""
    return [d for d in diags if d.is_error or is_sorry_warning(d)]


def process_rss_mb(pid: int | None) -> int:
    """Resident memory of a process in MB (0 if it is gone)."""
    if pid is None:
        return 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0
    return 0


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the parent dies (the Lean
    worker does not exit when its stdin closes, and it runs in a session of
    its own, so nothing else would stop it)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


PR_SET_PDEATHSIG = 1


def kill_group(pid: int | None) -> None:
    """SIGKILL a process and everything in its process group (it was started
    in a session of its own)."""
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class LspWorker:
    """One ``lean --worker`` process and its open document."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None, timeout_s: float = 120.0,
                 cwd: str | None = None) -> None:
        self.argv = list(argv)
        self.env = env
        self.timeout_s = timeout_s
        # Run from a directory without a lakefile (the worker would look for one).
        self.cwd = cwd or tempfile.gettempdir()
        self.uri = f"file://{self.cwd}/burnqed-{os.getpid()}-{id(self)}.lean"  # need not exist
        self.version = 0
        self.proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._diags: dict[int, list[dict[str, Any]]] = {}
        self._done: dict[int, asyncio.Future[None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._dead: str | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)

    # -- process ------------------------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and self._dead is None

    async def start(self, text: str = "", timeout_s: float | None = None) -> list[Diagnostic]:
        """Start the process, open the document with ``text``; its diagnostics.
        ``timeout_s`` bounds each wait of the start-up (default: the request
        timeout); loading the library takes ~20 s on an idle machine."""
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=self.env, cwd=self.cwd, start_new_session=True, preexec_fn=_die_with_parent, limit=1 << 26,
        )
        log.debug("started lean worker pid %s", self.proc.pid)
        self._tasks = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": "initialize",
                    "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}}})
        async with self._lock:
            self.version = 1
            self._done[1] = asyncio.get_running_loop().create_future()
            self._send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                        "params": {"textDocument": {"uri": self.uri, "languageId": "lean4",
                                                    "version": 1, "text": text}}})
            request_timeout, self.timeout_s = self.timeout_s, timeout_s or self.timeout_s
            try:
                return await self._wait(1)
            finally:
                self.timeout_s = request_timeout

    async def close(self) -> None:
        """Kill the process group and stop the readers."""
        if self.proc is not None and self.proc.returncode is None:
            kill_group(self.proc.pid)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 10)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(BaseException):
                await t
        self._tasks = []
        self._fail_all(BackendDied("worker closed"))

    # -- framing ------------------------------------------------------------------------------------------------
    def _send(self, msg: dict[str, Any]) -> None:
        if self.proc is None or self.proc.stdin is None or not self.alive():
            raise BackendDied(self._death_message())
        body = json.dumps(msg).encode()
        try:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise BackendDied(f"worker stdin closed: {e}") from None

    def _death_message(self) -> str:
        why = self._dead or (f"exit code {self.proc.returncode}" if self.proc else "not started")
        tail = " | ".join(list(self.stderr_tail)[-5:])
        return f"lean worker died ({why})" + (f": {tail}" if tail else "")

    def _fail_all(self, err: BaseException) -> None:
        for f in [*self._pending.values(), *self._done.values()]:
            if not f.done():
                f.set_exception(err)
                f.exception()  # mark retrieved: nobody may be waiting on it

    async def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while line := await out.readline():
                if not line.startswith(b"Content-Length:"):
                    continue  # "[DEBUG:...]" lines of the build
                n = int(line.split(b":")[1])
                while (await out.readline()).strip():
                    pass
                self._dispatch(json.loads(await out.readexactly(n)))
            self._dead = self._dead or "stdout closed"
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a broken frame: the stream is out of sync, the worker is unusable
            self._dead = f"bad output: {e}"
            log.warning("lean worker %s: %s", self.pid, self._dead)
        finally:
            if self._dead is None and self.proc is not None and self.proc.returncode is not None:
                self._dead = f"exit code {self.proc.returncode}"
            self._fail_all(BackendDied(self._death_message()))

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            text = line.decode(errors="replace").rstrip()
            if not text.startswith("[DEBUG"):
                self.stderr_tail.append(text)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:  # a response to one of our requests
            fut = self._pending.pop(msg.get("id", -1), None)
            if fut is not None and not fut.done():
                if "error" in msg:
                    fut.set_exception(LspError(str(msg["error"].get("message", msg["error"]))))
                else:
                    fut.set_result(msg.get("result"))
        elif "id" in msg:  # a server -> client request
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif method == "textDocument/publishDiagnostics":
            p = msg["params"]
            self._diags[p.get("version", self.version)] = p["diagnostics"]
        elif method == "$/lean/fileProgress":
            p = msg["params"]
            fut = self._done.get(p["textDocument"]["version"])
            if not p["processing"] and fut is not None and not fut.done():
                fut.set_result(None)

    # -- requests -----------------------------------------------------------------------------------------------
    async def _await(self, fut: asyncio.Future[Any]) -> Any:
        try:
            return await asyncio.wait_for(fut, self.timeout_s)
        except TimeoutError:
            raise BackendDied(f"lean worker gave no answer in {self.timeout_s}s") from None

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return await self._await(fut)

    async def _wait(self, version: int) -> list[Diagnostic]:
        try:
            await self._await(self._done[version])
            await self._request("textDocument/waitForDiagnostics", {"uri": self.uri, "version": version})
        finally:
            self._done.pop(version, None)
        for v in [v for v in self._diags if v < version]:
            del self._diags[v]
        return [diagnostic_of(d) for d in self._diags.get(version, [])]

    async def check(self, text: str, timeout_s: float | None = None) -> list[Diagnostic]:
        """Replace the document by ``text``; its diagnostics once elaborated.
        ``timeout_s``: this request's limit instead of the worker's (the
        caller's own limit, so that no silent limit sits under it)."""
        async with self._lock:
            self.version += 1
            v = self.version
            self._done[v] = asyncio.get_running_loop().create_future()
            self._send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                        "params": {"textDocument": {"uri": self.uri, "version": v},
                                   "contentChanges": [{"text": text}]}})
            limit, self.timeout_s = self.timeout_s, timeout_s or self.timeout_s
            try:
                return await self._wait(v)
            finally:
                self.timeout_s = limit

    async def goals(self, line: int, character: int) -> list[str] | None:
        """Goals at a position of the current document (None: no tactic there)."""
        async with self._lock:
            r = await self._request("$/lean/plainGoal", {"textDocument": {"uri": self.uri},
                                                          "position": {"line": line, "character": character}})
        return None if r is None else [str(g) for g in r["goals"]]

    async def document_symbols(self) -> list[Symbol]:
        """The declarations Lean's own parse found in the current document
        (``textDocument/documentSymbol``), flattened in source order; a
        declaration inside ``namespace A`` is named ``A.name``."""
        async with self._lock:
            r = await self._request("textDocument/documentSymbol", {"textDocument": {"uri": self.uri}})
        out: list[Symbol] = []

        def walk(items: Sequence[dict[str, Any]], prefix: str) -> None:
            for s in items:
                rng = s.get("range") or s.get("location", {}).get("range")
                name = str(s.get("name", ""))
                full = f"{prefix}{name}"
                out.append(Symbol(name=full, kind=int(s.get("kind", 0)), line=rng["start"]["line"],
                                  end_line=rng["end"]["line"], end_col=rng["end"]["character"]))
                # An anonymous `section` (the documents' `public section`) adds no name part.
                walk(s.get("children") or [], prefix if name.startswith("<") else f"{full}.")

        walk(r or [], "")
        return sorted(out, key=lambda s: (s.line, s.end_line))

    async def goals_many(self, positions: Sequence[tuple[int, int]]) -> list[list[str] | None]:
        """`goals` at several positions, one request after the other under one lock."""
        out: list[list[str] | None] = []
        async with self._lock:
            for line, character in positions:
                r = await self._request("$/lean/plainGoal", {"textDocument": {"uri": self.uri},
                                                              "position": {"line": line, "character": character}})
                out.append(None if r is None else [str(g) for g in r["goals"]])
        return out


@dataclass(frozen=True)
class Symbol:
    """A document symbol: a declaration (or namespace) and its command's
    range, 0-based lines, end exclusive in characters (LSP)."""

    name: str
    kind: int
    line: int
    end_line: int
    end_col: int


class LspError(RuntimeError):
    """The worker answered a request with an LSP error object."""
