"""A Celery deployment on this machine: a Redis broker and N ``dagster-celery`` workers, started and stopped
by the project (``burnqed deploy celery up|status|down``).

* The broker is Debian's ``redis-server`` on 127.0.0.1 with a port of its own (default 6390, not Redis's
  6379), its data in ``<dir>/redis`` with the append-only file fsynced on every write, so that queued
  tasks and results survive a broker killed and restarted. Database 0 carries the tasks, 1 the results.
* Each worker is ``dagster-celery worker start`` on the queues of the run config (``gpu`` for GPU steps,
  ``dagster`` for the others; by default every worker takes both), ``--concurrency`` processes (1: one step,
  hence one Lean process, at a time), in a process group of its own, logging to ``<dir>/<name>.log``.
  Workers run with ``BURNQED_EXECUTOR=celery`` and the broker in ``BURNQED_CELERY_BROKER`` /
  ``BURNQED_CELERY_BACKEND`` (what ``deploy/celery/run_config.yaml`` reads), the run's ``DAGSTER_HOME``,
  profile and work directory: a step builds its own Lean pool and policy from the profile, and the worker
  process keeps them for its later steps (``-i burnqed_pipeline.deploy.worker``, and the run config's
  ``resources.event_loop.config.keep: true``: one Lean process per worker process, started once, not once
  per step).
* ``<dir>/deploy.json`` records every process (pid, process group, start time): `status` checks them and
  pings the workers through the broker; `down` stops the workers (SIGTERM, then SIGKILL of the group after
  a grace period), then the broker, and checks that no process of theirs is left, Lean processes included
  (they run in sessions of their own and die with their parent: they are tracked by pid).

Workers on other machines point at a shared broker with ``up --broker redis://HOST:PORT`` (no local
broker is started) and must see the same run storage: the same ``DAGSTER_HOME`` (Postgres storage for
several machines) and the work directory on a shared file system at the same path.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
from pydantic import BaseModel, Field

from burnqed_core.errors import BurnqedError

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
RUN_CONFIG = REPO / "deploy" / "celery" / "run_config.yaml"
STATE_FILE = "deploy.json"
DEFAULT_PORT = 6390
QUEUES = ("gpu", "dagster")
WORKER_MODULE = "burnqed_pipeline.deploy.worker"  # what a worker imports at its start: its kept runtime
BROKER_ENV = "BURNQED_CELERY_BROKER"
BACKEND_ENV = "BURNQED_CELERY_BACKEND"


class DeployError(BurnqedError):
    """The local Celery deployment cannot be started, found or stopped as asked."""


class Proc(BaseModel):
    """A process the deployment started: the leader of its own process group."""

    name: str
    pid: int
    started: float = Field(description="the process's creation time (a later process may reuse the pid)")
    log: str
    argv: list[str]
    tracked: list[tuple[int, float]] = Field(default_factory=list,
                                             description="descendants seen (pid, creation time), for `leftovers`")

    def process(self) -> psutil.Process | None:
        return _same_process(self.pid, self.started)

    def alive(self) -> bool:
        p = self.process()
        return p is not None and p.status() != psutil.STATUS_ZOMBIE


class CeleryDeployment(BaseModel):
    """What `up` started, saved as ``<dir>/deploy.json``."""

    dir: str
    broker_url: str
    backend_url: str
    port: int | None = Field(None, description="the local broker's port (None: an external broker)")
    config: str
    dagster_home: str
    profile: str
    work_dir: str | None = None
    queues: list[str]
    concurrency: int
    broker: Proc | None = None
    workers: list[Proc] = Field(default_factory=list)

    @property
    def state_file(self) -> Path:
        return Path(self.dir) / STATE_FILE

    def save(self) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(self.model_dump_json(indent=1), encoding="utf-8")
        os.replace(tmp, self.state_file)

    def env(self) -> dict[str, str]:
        """The environment of a worker, and of a code location or run process that sends steps to them."""
        env = {"BURNQED_EXECUTOR": "celery", BROKER_ENV: self.broker_url, BACKEND_ENV: self.backend_url,
               "DAGSTER_HOME": self.dagster_home, "BURNQED_PROFILE": self.profile, "PYTHONUNBUFFERED": "1"}
        if self.work_dir:
            env["BURNQED_WORK_DIR"] = self.work_dir
        return env

    def worker(self, name: str) -> Proc:
        for w in self.workers:
            if w.name == name or w.name.split("@")[0] == name:
                return w
        raise DeployError(f"no worker {name!r} in {self.state_file} (workers: {[w.name for w in self.workers]})")

    def processes(self) -> list[Proc]:
        return [*self.workers, *([self.broker] if self.broker else [])]


def _same_process(pid: int, started: float) -> psutil.Process | None:
    try:
        p = psutil.Process(pid)
        return p if abs(p.create_time() - started) < 1.0 else None
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for tests: a broker of their own)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn(name: str, argv: list[str], log_path: Path, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> Proc:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=env, cwd=cwd, start_new_session=True)
    return Proc(name=name, pid=p.pid, started=psutil.Process(p.pid).create_time(), log=str(log_path), argv=argv)


def _redis(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def broker_answers(url: str) -> bool:
    try:
        return bool(_redis(url).ping())
    except Exception:
        return False


def start_broker(dep: CeleryDeployment, timeout_s: float = 30.0) -> Proc:
    """Start (or restart, after a crash) the local ``redis-server`` of ``dep`` on its port and data directory;
    returns when it answers PING."""
    exe = shutil.which("redis-server")
    if exe is None:
        raise DeployError("redis-server is not installed: `apt-get install redis-server` (scripts/setup.sh "
                          "installs it), or point the workers at a broker with --broker")
    assert dep.port is not None
    data = Path(dep.dir) / "redis"
    data.mkdir(parents=True, exist_ok=True)
    argv = [exe, "--bind", "127.0.0.1", "--port", str(dep.port), "--dir", str(data), "--appendonly", "yes",
            "--appendfsync", "always", "--save", "", "--daemonize", "no", "--protected-mode", "yes",
            "--loglevel", "notice"]
    proc = _spawn("broker", argv, Path(dep.dir) / "broker.log")
    deadline = time.monotonic() + timeout_s
    while not broker_answers(dep.broker_url):
        if not proc.alive():
            raise DeployError(f"redis-server exited at start (port {dep.port} taken?): see {proc.log}")
        if time.monotonic() > deadline:
            raise DeployError(f"redis-server does not answer on port {dep.port} after {timeout_s:.0f} s: "
                              f"see {proc.log}")
        time.sleep(0.1)
    dep.broker = proc
    dep.save()
    return proc


def _celery_app(dep: CeleryDeployment) -> Any:
    from celery import Celery

    return Celery("burnqed-deploy", broker=dep.broker_url, backend=dep.backend_url)


def ping_workers(dep: CeleryDeployment, timeout_s: float = 2.0) -> set[str]:
    """The node names (``name@host``) of the workers that answer a ping through the broker (tried twice: the
    first ping after a broker restart may go out on a connection the restart closed)."""
    for attempt in range(2):
        if not broker_answers(dep.broker_url):
            return set()
        app = _celery_app(dep)
        try:
            return {name for r in app.control.ping(timeout=timeout_s) or [] for name in r}
        except Exception as e:  # the broker went away meanwhile, or a stale connection
            log.info("ping through %s failed (attempt %d): %s", dep.broker_url, attempt + 1, e)
        finally:
            app.close()
    return set()


def queued(url: str, queues: Iterable[str]) -> dict[str, int]:
    """Tasks waiting in each queue (kombu keeps one Redis list per queue and priority level)."""
    r = _redis(url)
    out = {}
    for q in queues:
        n = 0
        for key in r.scan_iter(match=f"{q}*"):
            k = key.decode(errors="replace")
            if (k == q or k.startswith(q + "\x06\x16")) and r.type(key) == b"list":
                n += int(r.llen(key))
        out[q] = n
    return out


def start_worker(dep: CeleryDeployment, name: str) -> Proc:
    """One ``dagster-celery`` worker called ``name`` on ``dep``'s queues (not waited for)."""
    exe = shutil.which("dagster-celery") or str(Path(sys.executable).parent / "dagster-celery")
    if not Path(exe).exists():
        raise DeployError("dagster-celery is not installed: pip install 'burnqed[deploy]'")
    # -i: each worker process keeps one runtime (Lean pool, policy) for its steps (`burnqed_pipeline.deploy.worker`)
    argv = [exe, "worker", "start", "-A", "dagster_celery.app", "-y", dep.config, "-n", name, "-l", "INFO",
            "-i", WORKER_MODULE]
    # one -q: dagster-celery passes each as celery's -Q, of which only the last would count
    argv += ["-q", ",".join(dep.queues), "--", f"--concurrency={dep.concurrency}", "--without-gossip"]
    env = {**os.environ, **dep.env()}
    host = socket.gethostname()
    proc = _spawn(f"{name}@{host}", argv, Path(dep.dir) / f"{name}.log", env=env, cwd=REPO)
    dep.workers.append(proc)
    dep.save()
    return proc


def wait_for_workers(dep: CeleryDeployment, names: Iterable[str], timeout_s: float = 120.0) -> None:
    want = set(names)
    deadline = time.monotonic() + timeout_s
    while True:
        seen = ping_workers(dep)
        if want <= seen:
            return
        for w in dep.workers:
            if w.name in want and not w.alive():
                raise DeployError(f"worker {w.name} exited at start: see {w.log}")
        if time.monotonic() > deadline:
            raise DeployError(f"workers {sorted(want - seen)} do not answer after {timeout_s:.0f} s: see their logs "
                              f"in {dep.dir}")
        time.sleep(0.5)


def init_instance(home: Path, gpu_slots: int | None) -> None:
    """Create the Dagster instance at ``home`` once, before any worker opens it (its SQLite storage is set up
    by the first process that opens it: workers starting together would race), and size the ``gpu`` pool: the
    pipeline's GPU steps may run as many at once as there are worker processes on the gpu queue."""
    import dagster as dg

    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists() and (REPO / "dagster.yaml").is_file():
        shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as inst:
        if gpu_slots is not None:
            inst.event_log_storage.set_concurrency_slots("gpu", gpu_slots)


def load(dir: Path) -> CeleryDeployment | None:
    path = Path(dir) / STATE_FILE
    if not path.is_file():
        return None
    return CeleryDeployment.model_validate_json(path.read_text(encoding="utf-8"))


def up(dir: Path, *, workers: int = 2, port: int = DEFAULT_PORT, profile: str = "tiny",
       work_dir: str | None = None, dagster_home: str | None = None, queues: Iterable[str] = QUEUES,
       concurrency: int = 1, broker: str | None = None, config: Path = RUN_CONFIG, prefix: str = "w",
       gpu_slots: int | None = None, timeout_s: float = 120.0) -> CeleryDeployment:
    """Start the broker (unless ``broker`` names one) and ``workers`` workers; returns once all answer. The
    Dagster instance at ``dagster_home`` is created first (the repository's dagster.yaml), with
    ``gpu_slots`` slots in the ``gpu`` pool (default, with a local broker: one per worker process taking the gpu
    queue; with ``broker``, left as it is: set it to the GPU workers of all machines)."""
    queues = list(queues)
    dir = Path(dir).resolve()
    old = load(dir)
    if old is not None:
        alive = [p.name for p in old.processes() if p.alive()]
        if alive:
            raise DeployError(f"a deployment is running from {dir} ({', '.join(alive)}): `burnqed deploy celery "
                              "down` first, or use another --dir")
    if workers < 0 or concurrency < 1:
        raise DeployError(f"--workers must be >= 0 and --concurrency >= 1, got {workers} and {concurrency}")
    if not Path(config).is_file():
        raise DeployError(f"no run config at {config}")
    dir.mkdir(parents=True, exist_ok=True)
    if broker is None:
        broker_url, backend_url, own_port = f"redis://127.0.0.1:{port}/0", f"redis://127.0.0.1:{port}/1", port
    else:
        if not broker.startswith(("redis://", "rediss://")) or urlsplit(broker).path.strip("/"):
            raise DeployError(f"--broker: expected redis://HOST:PORT (no database number: tasks go to /0, results "
                              f"to /1), got {broker!r}")
        broker_url, backend_url, own_port = broker.rstrip("/") + "/0", broker.rstrip("/") + "/1", None
    home = Path(dagster_home or os.environ.get("DAGSTER_HOME") or dir / "dagster").resolve()
    # the gpu pool counts every machine's workers: sized here only for a deployment of this machine alone
    local_gpu = workers * concurrency if "gpu" in queues and broker is None else None
    gpu = gpu_slots if gpu_slots is not None else local_gpu
    init_instance(home, gpu)
    dep = CeleryDeployment(dir=str(dir), broker_url=broker_url, backend_url=backend_url, port=own_port,
                           config=str(Path(config).resolve()), dagster_home=str(home), profile=profile,
                           work_dir=work_dir, queues=list(queues), concurrency=concurrency)
    dep.save()
    try:
        if own_port is not None:
            start_broker(dep)
        elif not broker_answers(broker_url):
            raise DeployError(f"the broker at {broker_url} does not answer")
        names = [f"{prefix}{i + 1}" for i in range(workers)]
        for n in names:
            start_worker(dep, n)
        wait_for_workers(dep, [w.name for w in dep.workers], timeout_s)
    except BaseException:
        down(dir, grace_s=5)
        raise
    log.info("celery deployment up in %s: broker %s, workers %s", dir, broker_url, [w.name for w in dep.workers])
    return dep


def _track(proc: Proc) -> None:
    p = proc.process()
    if p is None:
        return
    try:
        kids = p.children(recursive=True)
    except psutil.NoSuchProcess:
        return
    seen = set(map(tuple, proc.tracked))
    for k in kids:
        try:
            seen.add((k.pid, k.create_time()))
        except psutil.NoSuchProcess:
            pass
    proc.tracked = sorted(seen)


def kill(dep: CeleryDeployment, proc: Proc, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group of ``proc`` (a fault injected for real: SIGKILL by default)."""
    _track(proc)
    dep.save()
    if proc.alive():
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass


def leftovers(dep: CeleryDeployment) -> list[psutil.Process]:
    """Processes of the deployment still running: in a recorded process group, or a recorded descendant."""
    groups = {p.pid for p in dep.processes()}
    out: dict[int, psutil.Process] = {}
    for p in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(p.pid) in groups and p.status() != psutil.STATUS_ZOMBIE:
                out[p.pid] = p
        except (ProcessLookupError, psutil.NoSuchProcess, PermissionError):
            continue
    for proc in dep.processes():
        for pid, started in proc.tracked:
            q = _same_process(pid, started)
            if q is not None and q.status() != psutil.STATUS_ZOMBIE:
                out[pid] = q
    return list(out.values())


def _stop(dep: CeleryDeployment, procs: list[Proc], grace_s: float) -> None:
    for p in procs:
        kill(dep, p, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(p.alive() for p in procs) and time.monotonic() < deadline:
        time.sleep(0.2)
    for p in procs:
        kill(dep, p, signal.SIGKILL)


def down(dir: Path, grace_s: float = 20.0) -> list[str]:
    """Stop the workers (warm shutdown, SIGKILL of the group after ``grace_s``), then the broker; raises if any
    process of the deployment is left. Returns one line per process."""
    dep = load(Path(dir))
    if dep is None:
        return [f"no deployment in {dir}"]
    lines = [f"{p.name} (pid {p.pid}): {'stopped' if p.alive() else 'was not running'}" for p in dep.processes()]
    for p in dep.processes():
        _track(p)
    _stop(dep, dep.workers, grace_s)
    if dep.broker is not None:
        _stop(dep, [dep.broker], grace_s)
    deadline = time.monotonic() + 10
    while (left := leftovers(dep)) and time.monotonic() < deadline:
        time.sleep(0.2)
    if left:
        for q in left:
            try:
                q.kill()
            except psutil.NoSuchProcess:
                pass
        raise DeployError(f"processes of the deployment outlived SIGKILL: {[q.pid for q in left]}")
    dep.state_file.rename(Path(dep.dir) / "deploy.stopped.json")
    return lines


class WorkerStatus(BaseModel):
    name: str
    pid: int
    alive: bool
    answers: bool
    log: str


class DeployStatus(BaseModel):
    dir: str
    broker_url: str
    broker_alive: bool | None = Field(description="the local broker's process (None: external broker)")
    broker_answers: bool
    queued: dict[str, int] = Field(default_factory=dict, description="tasks waiting per queue")
    workers: list[WorkerStatus]

    @property
    def healthy(self) -> bool:
        return self.broker_answers and all(w.alive and w.answers for w in self.workers)

    def lines(self) -> list[str]:
        b = "answers" if self.broker_answers else "DOES NOT ANSWER"
        out = [f"broker {self.broker_url}: {b}"
               + (f", queued {json.dumps(self.queued)}" if self.queued else "")]
        for w in self.workers:
            state = "up" if w.alive and w.answers else ("running, not answering" if w.alive else "GONE")
            out.append(f"worker {w.name} (pid {w.pid}): {state}; log {w.log}")
        return out


def status(dir: Path) -> DeployStatus:
    dep = load(Path(dir))
    if dep is None:
        raise DeployError(f"no deployment in {dir} (`burnqed deploy celery up`)")
    answers = broker_answers(dep.broker_url)
    waiting: dict[str, int] = {}
    if answers:
        try:
            waiting = queued(dep.broker_url, dep.queues)
        except Exception as e:
            log.warning("cannot read the queues: %s", e)
    seen = ping_workers(dep) if answers else set()
    return DeployStatus(dir=dep.dir, broker_url=dep.broker_url,
                        broker_alive=dep.broker.alive() if dep.broker else None, broker_answers=answers,
                        queued=waiting,
                        workers=[WorkerStatus(name=w.name, pid=w.pid, alive=w.alive(), answers=w.name in seen,
                                              log=w.log) for w in dep.workers])
