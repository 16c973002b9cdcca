"""Start and stop an SGLang server process.

SGLang pins its own torch, transformers and CUDA build, so it runs from a
Python of its own (``policy.sglang.python``, e.g. a separate venv) as
``<python> -m sglang.launch_server --model-path M --host H --port P
[--is-embedding] <launch_args>``. The process gets its own process group
(SGLang forks a scheduler and a detokenizer) so that `SglangServer.stop`
ends all of it: SIGTERM to the group, then SIGKILL after a grace period.
Its output goes to a log file whose tail is quoted when it fails to start.
"Started" means healthy: a real one-token generation answers, not only
``/health`` (which can say 200 while generation is stuck).

The environment sets ``SGLANG_RETURN_ORIGINAL_LOGPROB=1`` (unless
``return_original_logprob`` is off) so that returned logprobs come from the
raw logits, as the local policy's do. ``launch_module`` names the module run
by ``-m``: tests start ``tests.fake_sglang`` in its place.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import urlparse

import httpx

from burnqed_core.config import SglangConfig
from burnqed_core.errors import PolicyError
from burnqed_core.policy.sglang_probe import health_request, health_response_ok

log = logging.getLogger(__name__)

POLL_S = 0.25


class SglangServer:
    """One SGLang server process for ``model_path`` (context manager: start/stop)."""

    def __init__(
        self,
        cfg: SglangConfig,
        model_path: str | Path,
        *,
        is_embedding: bool = False,
        log_path: str | Path | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cfg = cfg
        self.model_path = str(model_path)
        self.is_embedding = is_embedding
        self.host = urlparse(cfg.url).hostname or "127.0.0.1"
        self.port = cfg.port
        self.url = f"http://{self.host}:{self.port}"
        self.log_path = Path(log_path) if log_path else Path(f"sglang-{self.port}.log")
        self.extra_args = list(extra_args)
        self.env = dict(env) if env is not None else None
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        cmd = [self.cfg.python, "-m", self.cfg.launch_module, "--model-path", self.model_path,
               "--host", self.host, "--port", str(self.port)]
        if self.is_embedding:
            cmd.append("--is-embedding")
        elif self.cfg.deterministic and "--enable-deterministic-inference" not in self.cfg.launch_args:
            cmd.append("--enable-deterministic-inference")
        return [*cmd, *self.cfg.launch_args, *self.extra_args]

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start the server and wait until it generates (``startup_timeout_s``)."""
        if self.running:
            return
        env = dict(os.environ if self.env is None else self.env)
        if self.cfg.return_original_logprob:
            env["SGLANG_RETURN_ORIGINAL_LOGPROB"] = "1"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = self.command()
        log.info("starting SGLang: %s (log %s)", " ".join(cmd), self.log_path)
        with open(self.log_path, "ab") as logf:
            try:
                self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env,
                                             start_new_session=True)
            except OSError as e:
                raise PolicyError(f"cannot start the SGLang server ({cmd[0]}): {e}") from None
        try:
            self.wait_healthy(self.cfg.startup_timeout_s)
        except BaseException:
            self.stop()
            raise

    def wait_healthy(self, timeout_s: float) -> None:
        """Poll the generation probe until it answers; fail early if the process exits."""
        path, body = health_request(self.is_embedding)
        deadline = time.monotonic() + timeout_s
        with httpx.Client(base_url=self.url) as http:
            while True:
                if self.proc is not None and self.proc.poll() is not None:
                    raise PolicyError(f"the SGLang server exited with code {self.proc.returncode} while starting; "
                                      f"log {self.log_path}: {self.log_tail()}")
                try:
                    resp = http.post(path, json=body, timeout=self.cfg.health_timeout_s)
                    if resp.status_code == 200 and health_response_ok(self.is_embedding, resp.json()):
                        log.info("SGLang server healthy at %s", self.url)
                        return
                except (httpx.TransportError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    raise PolicyError(f"the SGLang server at {self.url} did not generate within {timeout_s:.0f} s; "
                                      f"log {self.log_path}: {self.log_tail()}")
                time.sleep(POLL_S)

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(text.strip().splitlines()[-lines:]) or "(empty log)"

    def stop(self, grace_s: float = 30.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace_s``."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    log.warning("SGLang server (pid %d) ignored %s", proc.pid, sig.name)
        else:  # the leader died; children may remain in its group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.info("SGLang server stopped (pid %d)", proc.pid)

    def restart(self, model_path: str | Path | None = None) -> None:
        """Stop, then start on ``model_path`` (default: the same model).
        ``model_path`` becomes the launcher's model only once the server
        started healthy on it: a path that fails to start is not kept for
        later restarts (the launcher stays on the last model that worked)."""
        self.stop()
        previous = self.model_path
        if model_path is not None:
            self.model_path = str(model_path)
        try:
            self.start()
        except BaseException:
            self.model_path = previous
            raise

    def __enter__(self) -> SglangServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

