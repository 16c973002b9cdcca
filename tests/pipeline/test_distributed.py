"""The pipeline on a real Celery deployment: Debian's redis-server as broker and two ``dagster-celery`` workers
started by `burnqed_pipeline.deploy.local_celery`, each building its own Lean pool (one Lean process per worker)
and policy from the profile. An iteration partition of a cheap profile through Celery (the whole job: the stages
before the search find their outputs and skip) equals the in-process run row for row (trajectories and eval); in
runs of the search and eval alone, a worker SIGKILLed mid-shard has its step retried on the other worker,
where the shard resumes from its flushed parts; then the broker SIGKILLed and restarted mid-run (on the surviving
worker) ends in a run that recovered, or failed cleanly and was re-executed from failure, with the same result;
`down` leaves no process.

These tests run first in the session (tests/conftest.py): two Celery workers with a Lean process each fit in
24 GB beside the test process only while the session's shared Lean worker is not started. Skipped, with the
reason, where redis-server is not installed (scripts/setup.sh installs it)."""

from __future__ import annotations

import importlib.util
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from burnqed_core.loop import shards
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.search.trajectories import read_run_record
from burnqed_core.trajectory_io import finished_theorems
from burnqed_pipeline.deploy import local_celery as lc
from tests.fixtures_lean import skip_unless_lean_installed, tiny_lean_config
from tests.pipeline import celery_harness as h

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

NO_BROKER = ("redis-server is not installed, so no broker can run here: apt-get install redis-server "
             "(scripts/setup.sh installs it)")
LOST_AFTER_S = 20.0  # the run process's lost-worker delay (the shipped default is 60 s)
TRAJ_SHARD = "trajectories.trajectories_shard[shard_{:05d}]"


def _needs_a_broker() -> None:
    if shutil.which("redis-server") is None:
        pytest.skip(NO_BROKER)
    for mod in ("dagster_celery", "redis"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed: pip install 'burnqed[deploy]'")


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> h.Reference:
    """The in-process run of iteration 0 (``burnqed loop``, a process and Lean of its own, gone when it ends)."""
    _needs_a_broker()
    skip_unless_lean_installed(tiny_lean_config())
    return h.reference(tmp_path_factory.mktemp("distributed"))


@pytest.fixture(scope="module")
def cluster(ref: h.Reference, tmp_path_factory: pytest.TempPathFactory) -> Iterator[lc.CeleryDeployment]:
    """A broker and two workers for the module's runs; `down` at the end must leave no process."""
    tmp = tmp_path_factory.mktemp("cluster")
    dep = lc.up(tmp / "celery", workers=2, port=lc.free_port(), profile=str(ref.profile), work_dir=str(ref.work),
                dagster_home=str(tmp / "dagster"))
    try:
        yield dep
    finally:
        lc.down(Path(dep.dir), grace_s=10)
        assert lc.leftovers(dep) == []


def _run(dep: lc.CeleryDeployment, ref: h.Reference, name: str,
         assets: tuple[str, ...] = ()) -> tuple[h.subprocess.Popen[bytes], Path, Path]:
    """A run of iteration 0 on the deployment: the whole job, or only ``assets``."""
    h.clear_outputs(ref.work)
    log = Path(dep.dir) / f"{name}.log"
    cfg = h.run_config(Path(dep.dir), LOST_AFTER_S)
    return h.launch(dep, Path(dep.dagster_home), cfg, log, ref.profile, assets=assets), log, cfg


def _mid_shard(proc: h.subprocess.Popen[bytes], log: Path, root: Path, timeout_s: float = 600) -> tuple[int, int]:
    """Wait until a search shard has saved at least one theorem and is not finished: (shard, theorems saved)."""
    t0 = time.monotonic()
    while True:
        for i in range(2):
            d = shards.partial_dir(root, i) / "search.traj"
            if d.is_dir() and (n := len(finished_theorems(d))) >= 1:
                return i, n
        if proc.poll() is not None:
            pytest.fail(f"the run ended ({proc.returncode}) before a shard was half done:\n{log.read_text()[-3000:]}")
        if time.monotonic() - t0 > timeout_s:
            pytest.fail(f"no shard saved a theorem within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


def _latest_run(dep: lc.CeleryDeployment) -> str:
    import dagster as dg

    with dg.DagsterInstance.from_config(dep.dagster_home) as inst:
        return inst.get_run_records(limit=1)[0].dagster_run.run_id


def test_an_iteration_on_two_celery_workers_equals_the_in_process_run(
        ref: h.Reference, cluster: lc.CeleryDeployment) -> None:
    proc, log, _ = _run(cluster, ref, "undisturbed")
    with h.MemorySampler(cluster) as mem:
        run_id, ok = h.finish(proc, log)
    assert ok, log.read_text()[-4000:]
    home = Path(cluster.dagster_home)
    ran_on = h.step_workers(home, run_id)
    names = {w.name for w in cluster.workers}
    # every step ran in a worker; the shard steps (2 search, 2 eval) were spread over both
    assert ran_on and set(ran_on.values()) <= names
    per_shard = {**{f"trajectories {k}": v for k, v in h.merge_metadata(home, "trajectories")["shard_workers"].items()},
                 **{f"eval {k}": v for k, v in h.merge_metadata(home, "eval_report")["shard_workers"].items()}}
    assert len(per_shard) == 4 and set(per_shard.values()) == names, per_shard
    assert h.outputs(ref.work) == h.reference_outputs(ref)
    print(f"iteration 0: in-process {ref.seconds:.0f} s (its Lean started by the base run), celery on 2 cold "
          f"workers {h.iteration_seconds(home):.0f} s (benchmarks/celery_iteration.py compares like with like); "
          f"shards ran on {per_shard}; peak memory per worker (with its Lean) "
          f"{ {k: round(v) for k, v in mem.peak_mb.items()} } MB, both {mem.total_peak_mb:.0f} MB")


def _left_after_kill(dep: lc.CeleryDeployment, workers: list[lc.Proc], limit_s: float = 30.0) -> list[psutil.Process]:
    """What is left of the SIGKILLed ``workers``' process groups after at most ``limit_s`` (their Lean processes
    included): a kill takes a moment to land."""
    only = dep.model_copy(update={"workers": workers, "broker": None})
    t0 = time.monotonic()
    while (left := lc.leftovers(only)) and time.monotonic() - t0 < limit_s:
        time.sleep(0.5)
    return left


def _forget_dead_workers(dep: lc.CeleryDeployment) -> None:
    """The deployment without its dead workers (the worker-kill test leaves its victim dead, and gone: checked
    there): the broker test runs on the survivor, whose Lean is warm, and its end checks that deployment healthy."""
    dead = [w for w in dep.workers if not w.alive()]
    assert dead and len(dead) < len(dep.workers) and not _left_after_kill(dep, dead)
    dep.workers = [w for w in dep.workers if w not in dead]
    dep.save()


def test_a_worker_killed_mid_shard_is_replaced_by_the_other_and_the_shard_resumes(
        ref: h.Reference, cluster: lc.CeleryDeployment) -> None:
    proc, log, _ = _run(cluster, ref, "worker_killed", h.RECOMPUTED)
    root = BaseLayout(root=ref.work).iteration(0).stage("trajectories")
    shard, _ = _mid_shard(proc, log, root)
    home = Path(cluster.dagster_home)
    step = TRAJ_SHARD.format(shard)
    victim = cluster.worker(h.step_workers(home, _latest_run(cluster))[step])
    lc.kill(cluster, victim, signal.SIGKILL)  # the worker's whole process group, as a reclaimed machine
    left = _left_after_kill(cluster, [victim])
    assert left == [], f"the killed worker left {[(p.pid, p.name()) for p in left]} (its Lean process?)"
    saved = len(finished_theorems(shards.partial_dir(root, shard) / "search.traj"))  # all it wrote before dying
    planned = len(shards.read_plan(root).shards[shard])  # type: ignore[union-attr]
    assert not shards.shard_dir(root, shard).exists() and saved < planned, "the shard ended before the kill"
    run_id, ok = h.finish(proc, log)
    assert ok, log.read_text()[-4000:]
    # Dagster's retry policy of the shard step sent it again; it ran on the surviving worker ...
    assert h.events(home, run_id, "STEP_UP_FOR_RETRY") == [step]
    other = next(w.name for w in cluster.workers if w.name != victim.name)
    assert h.merge_metadata(home, "trajectories")["shard_workers"][f"shard_{shard:05d}"] == other
    # ... and resumed: the theorems saved before the kill were not searched again
    rec = read_run_record(shards.shard_dir(root, shard) / "search.traj")
    assert rec is not None and len(rec.sessions) == 2
    assert rec.sessions[-1].theorems_written == planned - saved < planned
    assert h.outputs(ref.work) == h.reference_outputs(ref)
    print(f"worker {victim.name} SIGKILLed with {saved}/{planned} theorems of shard {shard} saved: retried on {other}, "
          f"which searched the other {planned - saved}")
    st = lc.status(Path(cluster.dir))
    assert [w.alive for w in st.workers] == [w.name != victim.name for w in cluster.workers]


def test_the_broker_killed_and_restarted_mid_run_ends_with_the_same_result(
        ref: h.Reference, cluster: lc.CeleryDeployment) -> None:
    _forget_dead_workers(cluster)
    proc, log, cfg = _run(cluster, ref, "broker_killed", h.RECOMPUTED)
    root = BaseLayout(root=ref.work).iteration(0).stage("trajectories")
    _mid_shard(proc, log, root)
    assert cluster.broker is not None
    lc.kill(cluster, cluster.broker)  # SIGKILL: what it had written to its append-only file survives
    time.sleep(5)
    assert not lc.broker_answers(cluster.broker_url)
    lc.start_broker(cluster)
    run_id, ok = h.finish(proc, log)
    how = "recovered"
    if not ok:  # failed cleanly: re-execute from failure, as run retries do
        how = "failed; re-executed from failure"
        again = Path(cluster.dir) / "broker_killed_reexecution.log"
        run_id, ok = h.finish(h.launch(cluster, Path(cluster.dagster_home), cfg, again, ref.profile, parent=run_id),
                              again)
        assert ok, again.read_text()[-4000:]
    print(f"broker SIGKILLed mid-shard and restarted: the run {how}")
    assert h.outputs(ref.work) == h.reference_outputs(ref)  # each theorem once, row for row
    assert lc.status(Path(cluster.dir)).healthy


def test_deploy_up_status_down_from_the_command_line(tmp_path: Path) -> None:
    """The commands a user types: up (a second up refuses), status (exit 1 once a worker is gone), down (no
    process of the deployment left, checked by process group)."""
    _needs_a_broker()
    from burnqed_pipeline.cli import make_app

    pipeline_app = make_app()

    d, port = tmp_path / "celery", lc.free_port()
    common = ["--dir", str(d), "--profile", "tiny"]
    runner = CliRunner()
    r = runner.invoke(pipeline_app, ["deploy", "celery", "up", "--workers", "1", "--port", str(port),
                                     "--dagster-home", str(tmp_path / "dagster"), *common])
    try:
        assert r.exit_code == 0, f"{r.output}\n{r.exception!r}"
        assert f"BURNQED_CELERY_BROKER=redis://127.0.0.1:{port}/0" in r.output
        again = runner.invoke(pipeline_app, ["deploy", "celery", "up", "--port", str(port), *common])
        assert again.exit_code != 0 and "down` first" in str(again.exception)
        st = runner.invoke(pipeline_app, ["deploy", "celery", "status", *common])
        assert st.exit_code == 0 and "w1@" in st.output and ": up;" in st.output, st.output
        dep = lc.load(d)
        assert dep is not None and len(dep.workers) == 1
        lc.kill(dep, dep.workers[0])
        time.sleep(1)
        st = runner.invoke(pipeline_app, ["deploy", "celery", "status", *common])
        assert st.exit_code == 1 and "GONE" in st.output, st.output
    finally:
        down = runner.invoke(pipeline_app, ["deploy", "celery", "down", "--grace", "5", *common])
    assert down.exit_code == 0, f"{down.output}\n{down.exception!r}"
    assert lc.leftovers(dep) == []
    assert lc.load(d) is None and not lc.broker_answers(dep.broker_url)
