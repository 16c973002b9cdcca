"""An iteration partition run through a real local Celery deployment (Redis broker, dagster-celery workers), for
the distributed tests and `benchmarks/celery_iteration.py`.

The in-process reference is ``burnqed loop --iterations 0`` of a cheap profile, in a process of its own (its
own Lean, gone when it exits). A Celery run then materialises the same partition of the ``iteration`` job in
the same work directory with its trajectories and eval removed: the stages before them find their finished
outputs (fingerprints unchanged) and are skipped, the search and eval shards are computed again on the workers,
and the outputs are compared row for row with the reference's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import yaml

from burnqed_core.eval.run import read_eval_results
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.trajectory_io import finished_theorems, read_trajectories
from burnqed_pipeline.deploy.local_celery import RUN_CONFIG, CeleryDeployment
from tests.core.eval.test_run_lean import by_theorem, strip
from tests.pipeline.profiles import slice_set, write_profile

ROOT = Path(__file__).resolve().parents[2]
SEARCH_OUTPUTS = ("search.traj",)


@dataclass
class Reference:
    profile: Path
    work: Path
    saved: Path  # the reference's trajectories and eval, copied out
    seconds: float  # wall time of the iteration partition's run (base assets excluded)
    log: Path


def cheap_profile(tmp: Path) -> Path:
    corpus = slice_set("bundled:corpus", 1, tmp / "corpus" / "corpus.jsonl")
    bench = slice_set("bundled:benchmark", 1, tmp / "bench" / "benchmark.jsonl")
    return write_profile(tmp / "profile.yaml", {
        "paths.work_dir": str(tmp / "work"), "data.corpus": str(corpus), "data.benchmark": str(bench),
        "data.search_theorems": 8, "pipeline.shard_size": 4,
        # the eval: 4 theorems in 2 shards (the runs compare its rows; the kill tests stop a search shard)
        "eval.max_theorems": 4, "pipeline.eval_shard_size": 2,
        "search.flush_every": 1, "search.max_nodes": 10,
        # one theorem at a time: a shard's four searches end one after the other, not together, so that the
        # worker-kill test's SIGKILL, sent once a shard has saved a theorem, lands before the shard ends
        "search.concurrency": 1,
        # no verdict cache: a worker's pool keeps the verdicts of the module's earlier runs, and answered from
        # them a 4-theorem shard took 1 s, so the worker-kill test's SIGKILL could land after the shard ended
        "lean.verdict_cache": 0,
    })


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    for k in ("BURNQED_EXECUTOR",):
        env.pop(k, None)
    return {**env, **(extra or {})}


def iteration_seconds(home: Path, partition: str = "0") -> float:
    """Wall time of the newest finished run of ``partition`` in the instance at ``home``."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as inst:
        recs = inst.get_run_records(dg.RunsFilter(tags={"dagster/partition": partition}), limit=1)
        r = recs[0]
        return float((r.end_time or time.time()) - (r.start_time or r.create_timestamp.timestamp()))


def reference(tmp: Path) -> Reference:
    """``burnqed loop --iterations 0`` in-process (its own process and Lean); its outputs copied out (a
    reference already in ``tmp`` is reused)."""
    prof = cheap_profile(tmp)
    home = tmp / "ref_dagster"
    log = tmp / "reference.log"
    work, saved = tmp / "work", tmp / "reference_outputs"
    if saved.is_dir():
        return Reference(prof, work, saved, iteration_seconds(home), log)
    with log.open("wb") as out:
        rc = subprocess.run([sys.executable, "-m", "burnqed_pipeline.cli", "loop", "--profile", str(prof),
                             "--iterations", "0"], env=_env({"DAGSTER_HOME": str(home)}), cwd=ROOT,
                            stdout=out, stderr=subprocess.STDOUT, timeout=1200).returncode
    if rc != 0:
        raise RuntimeError(f"the in-process reference failed ({rc}):\n{log.read_text()[-4000:]}")
    it = BaseLayout(root=work).iteration(0)
    for d in (it.stage("trajectories"), it.stage("eval_report")):
        shutil.copytree(d, saved / d.name)
    return Reference(prof, work, saved, iteration_seconds(home), log)


def clear_outputs(work: Path) -> None:
    """Remove iteration 0's trajectories and eval: the next run computes them again."""
    it = BaseLayout(root=work).iteration(0)
    for d in (it.stage("trajectories"), it.stage("eval_report")):
        shutil.rmtree(d, ignore_errors=True)


def run_config(tmp: Path, lost_worker_after_s: float | None = None) -> Path:
    """The shipped celery run config (as the workers read it), plus the run process's own settings."""
    cfg = yaml.safe_load(RUN_CONFIG.read_text(encoding="utf-8"))
    if lost_worker_after_s is not None:
        cfg["execution"]["config"]["lost_worker_after_s"] = lost_worker_after_s
    path = tmp / f"run_config_{lost_worker_after_s}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


RUN = """
import sys, yaml
import dagster as dg
from burnqed_pipeline.defs.jobs import RETRY_TAGS
from burnqed_pipeline.defs.partitions import add_iteration
from tests.pipeline.helpers import iteration_job
cfg = yaml.safe_load(open(sys.argv[1]))
parent = sys.argv[2] or None
assets = [dg.AssetKey(a) for a in sys.argv[3].split(",") if a] or None
with dg.DagsterInstance.get() as inst:
    add_iteration(inst, 0)
    opts = dg.ReexecutionOptions.from_failure(parent, inst) if parent else None
    r = dg.execute_job(dg.reconstructable(iteration_job), inst, run_config=cfg, reexecution_options=opts,
                       asset_selection=None if parent else assets, tags={"dagster/partition": "0", **RETRY_TAGS})
    print("RUN", r.run_id, r.success, flush=True)
"""

#: The assets a run computes again (`clear_outputs`): a run of only these, the stages before them not even
#: asked (the whole job's run finds them finished and skips each, a Celery task apiece).
RECOMPUTED = ("trajectories", "eval_report")


def launch(dep: CeleryDeployment | None, home: Path, config: Path | None, log: Path, profile: Path,
           parent: str | None = None, assets: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """The run process of partition 0 of the ``iteration`` job (celery executor with ``dep``, else in-process);
    ``parent``: re-execute that run from failure (what run retries do), with its selection; ``assets``: only
    these assets of the job (every one when empty)."""
    home.mkdir(parents=True, exist_ok=True)
    extra = {"DAGSTER_HOME": str(home), "BURNQED_PROFILE": str(profile)}
    if dep is not None:
        extra = {**dep.env(), **extra}
    cfg = config if config is not None else _empty_config(log.parent)
    argv = [sys.executable, "-c", RUN, str(cfg), parent or "", ",".join(assets)]
    return subprocess.Popen(argv, env=_env(extra), cwd=ROOT, stdout=log.open("ab"), stderr=subprocess.STDOUT)


def _empty_config(d: Path) -> Path:
    p = d / "run_config_in_process.yaml"
    p.write_text("{}\n", encoding="utf-8")
    return p


def finish(proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 900) -> tuple[str, bool]:
    """Wait for a run process; its run id and success."""
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the run did not end within {timeout_s:.0f} s:\n{log.read_text()[-4000:]}") from None
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith("RUN ")]
    if not lines:
        raise AssertionError(f"the run process exited ({proc.returncode}) without a run:\n"
                             f"{log.read_text()[-4000:]}")
    _, run_id, ok = lines[-1].split()
    return run_id, ok == "True"


def outputs(work: Path) -> dict[str, Any]:
    """Iteration 0's merged trajectories and eval, without wall-clock fields; a duplicate theorem fails."""
    it = BaseLayout(root=work).iteration(0)
    return _read(it.stage("trajectories"), it.stage("eval_report"))


def reference_outputs(ref: Reference) -> dict[str, Any]:
    return _read(ref.saved / "trajectories", ref.saved / "eval_report")


def _read(traj: Path, ev: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SEARCH_OUTPUTS:
        recs = read_trajectories(traj / name)
        finished_theorems(traj / name)  # raises on a theorem saved twice
        keys = [(r.theorem, r.node_id) for r in recs]
        assert len(keys) == len(set(keys)), f"{traj / name}: duplicate rows"
        out[name] = by_theorem(recs)
    rows = read_eval_results(ev)
    keys = [(r.theorem, r.budget, r.attempt, r.search_automation, r.ebm) for r in rows]
    assert len(keys) == len(set(keys)), f"{ev}: duplicate eval rows"
    out["eval"] = sorted(strip(rows), key=lambda r: tuple(str(r[k]) for k in ("theorem", "budget", "attempt",
                                                                                  "search_automation", "ebm")))
    return out


def step_workers(home: Path, run_id: str) -> dict[str, str]:
    """Step key -> the Celery worker that last executed it (dagster-celery's engine event)."""
    import dagster as dg

    out: dict[str, str] = {}
    with dg.DagsterInstance.from_config(str(home)) as inst:
        for rec in inst.all_logs(run_id):
            ev = rec.dagster_event
            if ev is None or "Executing steps" not in (ev.message or ""):
                continue
            md = ev.engine_event_data.metadata if ev.engine_event_data else {}
            worker = md.get("Celery worker")
            if worker is not None and ev.step_key:
                out[ev.step_key] = str(getattr(worker, "value", getattr(worker, "text", worker)))
    return out


def events(home: Path, run_id: str, kind: str) -> list[str]:
    """Step keys of a run's events of type ``kind`` (STEP_START, STEP_UP_FOR_RETRY, ...), in order."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as inst:
        return [r.dagster_event.step_key or "" for r in inst.all_logs(run_id)
                if r.dagster_event is not None and r.dagster_event.event_type_value == kind]


def merge_metadata(home: Path, asset: str) -> dict[str, Any]:
    """The newest materialisation metadata of ``asset``[0], values unwrapped."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as inst:
        recs = inst.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset),
                                                                 asset_partitions=["0"]), limit=1).records
        md = recs[0].asset_materialization.metadata  # type: ignore[union-attr]
        return {k: getattr(v, "value", getattr(v, "data", v)) for k, v in md.items()}


@dataclass
class MemorySampler:
    """Peak resident memory of each worker's process tree (Lean included) while the block runs."""

    dep: CeleryDeployment
    every_s: float = 0.5
    peak_mb: dict[str, float] = field(default_factory=dict)
    total_peak_mb: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _tree_mb(self, pid: int, started: float) -> float:
        try:
            p = psutil.Process(pid)
            if abs(p.create_time() - started) > 1.0:
                return 0.0
            procs = [p, *p.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0.0
        total = 0
        for q in procs:
            try:
                total += q.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total / 2**20

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            total = 0.0
            for w in self.dep.workers:
                mb = self._tree_mb(w.pid, w.started)
                self.peak_mb[w.name] = max(self.peak_mb.get(w.name, 0.0), mb)
                total += mb
            self.total_peak_mb = max(self.total_peak_mb, total)

    def __enter__(self) -> MemorySampler:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
