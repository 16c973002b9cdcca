"""``trajectories`` fanned out over theorem shards, on a real Dagster instance with the real embedded Lean and
the session's tiny search model (put in place as iteration 0's merged model, as the merged_model stage leaves
it): one shard fails (an injected fault) and re-execution from failure runs only that shard and the merge; a
real materialisation subprocess is SIGKILLed mid-search and re-executed from failure: only the unsaved
theorems are searched again. Both end with the trajectory set of an uninterrupted run: the same theorems, the
same nodes, proofs and labels, none twice."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import pytest_asyncio

from burnqed_core.loop import shards
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.markers import run_stage
from burnqed_core.loop.stages import trajectories as trajectories_stage
from burnqed_core.record_io import write_jsonl
from burnqed_core.records import StageResult, Theorem
from burnqed_core.search.trajectories import read_run_record
from burnqed_core.trajectory_io import finished_theorems, list_parts, read_trajectories
from burnqed_pipeline.defs.partitions import add_iteration
from tests.core.eval.test_run_faults import kill_tree
from tests.core.eval.test_run_lean import by_theorem
from tests.pipeline.helpers import iteration_job, lend, lent, materialize, metadata, resources, step_keys
from tests.pipeline.profiles import write_profile

pytestmark = [pytest.mark.lean, pytest.mark.slow, pytest.mark.own_lean]  # a subprocess with its own Lean

# Corpus theorems the search model proves or refutes within a few nodes; a known two-step proof each so the
# selection keeps them (no automation.json beside the file: none is left out as "easy").
CORPUS = [
    Theorem(name="add_zero_a", statement="(n : Nat) : n + 0 = n"),
    Theorem(name="two_two", statement=": 2 + 2 = 4"),
    Theorem(name="imp_self", statement="(p : Prop) : p → p"),
    Theorem(name="three_three", statement=": 3 * 3 = 9"),
    Theorem(name="imp_twice", statement="(p q : Prop) : p → q → p"),
    Theorem(name="false_succ", statement="(n : Nat) : n + 1 = n"),
    Theorem(name="comm", statement="(a b : Nat) : a + b = b + a"),
    Theorem(name="false_two", statement="(n : Nat) : n + 2 = n"),
]
CORPUS = [t.model_copy(update={"proof": ["skip", "rfl"]}) for t in CORPUS]
BENCH = [Theorem(name="four", statement=": 2 * 2 = 4", split="benchmark")]
SHARD = 3  # 8 theorems -> shards of 3, 3, 2
OUTPUTS = ("search.traj", "noisy.traj")  # iteration 0 searches twice
TRAJ = dg.AssetKey("trajectories")


def _profile(tmp: Path, name: str) -> Path:
    (tmp / "data").mkdir(parents=True, exist_ok=True)
    write_jsonl(CORPUS, tmp / "data" / "corpus.jsonl")
    write_jsonl(BENCH, tmp / "data" / "benchmark.jsonl")
    return write_profile(tmp / f"{name}.yaml", {
        "paths.work_dir": str(tmp / name), "data.corpus": str(tmp / "data" / "corpus.jsonl"),
        "data.benchmark": str(tmp / "data" / "benchmark.jsonl"), "data.search_theorems": len(CORPUS),
        "pipeline.shard_size": SHARD, "search.concurrency": 3, "search.frontier_batch": 6, "search.flush_every": 1,
        "search.max_depth": 6, "search.temperature": 1.0, "policy.max_new_tokens": 12,
        "search.noisy_pass": True,
    })


def _place_model(work: Path, model: Path) -> None:
    """Iteration 0's merged model: the session's tiny search model, marked done like the merged_model stage; and
    a finished base_model (the search reads its split for withheld exercises; this profile withholds none) and
    premise_index."""
    base = BaseLayout(root=work).stage("base_model")
    run_stage(base, "test-base-model", lambda: StageResult(stage="base_model", path=str(base)))
    index = BaseLayout(root=work).stage("premise_index")  # read only when the search takes premise steps
    run_stage(index, "test-premise-index", lambda: StageResult(stage="premise_index", path=str(index)))
    out = BaseLayout(root=work).iteration(0).stage("merged_model")
    run_stage(out, "test-merged-model", lambda: (shutil.copytree(model, out, dirs_exist_ok=True),
                                                 StageResult(stage="merged_model", iteration=0, path=str(out)))[1])


@dataclass
class Setup:
    tmp: Path
    profile: Path
    work: Path
    home: Path


def _setup(tmp: Path, name: str, model: Path) -> Setup:
    prof = _profile(tmp, name)
    work = tmp / name
    _place_model(work, model)
    home = tmp / f"{name}_dagster"
    home.mkdir()
    return Setup(tmp, prof, work, home)


def _trajectories(work: Path) -> dict[str, dict[str, list[dict[str, object]]]]:
    """Each output's rows by theorem (wall-clock fields left out); finished_theorems raises on a duplicate."""
    root = BaseLayout(root=work).iteration(0).stage("trajectories")
    out = {}
    for name in OUTPUTS:
        recs = read_trajectories(root / name)
        names = finished_theorems(root / name)
        assert sorted(names) == sorted(t.name for t in CORPUS), name
        keys = [(r.theorem, r.node_id) for r in recs]
        assert len(keys) == len(set(keys)), f"{name}: duplicate rows"
        out[name] = by_theorem(recs)
    return out


async def _in_thread(lean_pool: object, fn: Callable[[], Any]) -> Any:
    with lent(lend(lean_pool)):
        return await asyncio.to_thread(fn)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def reference(lean_pool: object, search_model: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uninterrupted materialisation of trajectories[0] (the same settings): its rows by theorem."""
    s = _setup(tmp_path_factory.mktemp("fanout_ref"), "ref", search_model)
    with dg.instance_for_test(temp_dir=str(s.home)) as inst:
        add_iteration(inst, 0)
        result = await _in_thread(lean_pool, lambda: materialize(inst, resources(s.profile), ["trajectories"], "0"))
        md = metadata(result)["trajectories"]
        assert md["shards"] == 3 and md["theorems"] == len(CORPUS) and md["skipped"] is False
        assert {k for k in step_keys(result) if "trajectories_shard" in k} == {
            f"trajectories.trajectories_shard[shard_0000{i}]" for i in range(3)}
    return _trajectories(s.work)


def _execute(inst: dg.DagsterInstance, parent: str | None = None) -> dg.ExecutionResult:
    job = dg.reconstructable(iteration_job)
    opts = dg.ReexecutionOptions.from_failure(parent, inst) if parent else None
    return dg.execute_job(job, inst, tags={"dagster/partition": "0"}, reexecution_options=opts,
                          asset_selection=None if parent else [TRAJ])


async def test_a_failed_shard_is_re_executed_alone_with_the_merge(
        lean_pool: object, search_model: Path, reference: dict[str, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    s = _setup(tmp_path, "fault", search_model)
    monkeypatch.setenv("BURNQED_PROFILE", str(s.profile))
    monkeypatch.setenv("DAGSTER_HOME", str(s.home))
    real = trajectories_stage.trajectories

    async def faulty(profile: Any, iteration: int, policy: Any, env: Any, theorems: Any, out_dir: Path, *a: Any,
                     **kw: Any) -> Any:
        if Path(out_dir).name == shards.partial_dir(Path("."), 1).name:  # shard 1's work dir
            raise RuntimeError("injected fault in shard 1")
        return await real(profile, iteration, policy, env, theorems, out_dir, *a, **kw)

    with dg.instance_for_test(temp_dir=str(s.home)) as inst:
        add_iteration(inst, 0)
        monkeypatch.setattr(trajectories_stage, "trajectories", faulty)
        first = await _in_thread(lean_pool, lambda: _execute(inst))
        assert not first.success
        assert step_keys(first, "STEP_FAILURE") == ["trajectories.trajectories_shard[shard_00001]"]
        assert sorted(step_keys(first, "STEP_SUCCESS")) == [
            "trajectories.split_trajectories", "trajectories.trajectories_shard[shard_00000]",
            "trajectories.trajectories_shard[shard_00002]"]
        root = BaseLayout(root=s.work).iteration(0).stage("trajectories")
        assert not shards.shard_dir(root, 1).exists() and not (root / "_done.json").exists()
        kept = {p: p.stat().st_ino for i in (0, 2) for p in shards.shard_dir(root, i).rglob("part-*.parquet")}
        assert kept

        monkeypatch.setattr(trajectories_stage, "trajectories", real)
        again = await _in_thread(lean_pool, lambda: _execute(inst, first.run_id))
        assert again.success
        ran = step_keys(again)
        print(f"re-execution from failure ran steps: {ran}")
        assert ran == ["trajectories.trajectories_shard[shard_00001]", "trajectories.merge_trajectories"]
        assert {p: p.stat().st_ino for p in kept} == kept  # the finished shards were not touched
        mats = [e for e in again.all_events if e.event_type_value == "ASSET_MATERIALIZATION"]
        assert len(mats) == 1 and mats[0].event_specific_data.materialization.partition == "0"
    assert _trajectories(s.work) == reference


def _subprocess(s: Setup, log: Path) -> subprocess.Popen[bytes]:
    code = ("import dagster as dg\n"
            "from tests.pipeline.helpers import iteration_job\n"
            "with dg.DagsterInstance.get() as inst:\n"
            "    r = dg.execute_job(dg.reconstructable(iteration_job), inst, tags={'dagster/partition': '0'},\n"
            "                       asset_selection=[dg.AssetKey('trajectories')])\n"
            "    print('RUN', r.run_id, r.success, flush=True)\n")
    env = {**os.environ, "DAGSTER_HOME": str(s.home), "BURNQED_PROFILE": str(s.profile), "PYTHONUNBUFFERED": "1",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                            cwd=Path(__file__).resolve().parents[2])


def _searched_by(root: Path, pid: int) -> int:
    """Theorems searched (written) by the sessions of process ``pid``, over every shard and output."""
    n = 0
    for d in sorted((root / shards.SHARDS_DIR).glob("shard-*")):
        for name in OUTPUTS:
            rec = read_run_record(d / name)
            n += sum(x.theorems_written for x in (rec.sessions if rec else []) if x.pid == pid)
    return n


async def test_sigkilled_materialisation_resumes_from_saved_shards_and_parts(
        lean_pool: object, search_model: Path, reference: dict[str, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    s = _setup(tmp_path, "kill", search_model)
    monkeypatch.setenv("BURNQED_PROFILE", str(s.profile))
    monkeypatch.setenv("DAGSTER_HOME", str(s.home))
    with dg.instance_for_test(temp_dir=str(s.home)) as inst:
        add_iteration(inst, 0)
    root = BaseLayout(root=s.work).iteration(0).stage("trajectories")
    log = tmp_path / "materialise.log"
    proc = _subprocess(s, log)
    try:
        t0 = time.monotonic()
        # kill once shard 0 is finished and shard 1 has saved a part (mid-shard)
        while not (shards.shard_dir(root, 0).is_dir()
                   and any(list_parts(shards.partial_dir(root, 1) / n) for n in OUTPUTS)):
            if proc.poll() is not None:
                pytest.fail(f"the run exited ({proc.returncode}) before the kill:\n{log.read_text()[-3000:]}")
            if time.monotonic() - t0 > 900:
                pytest.fail(f"no shard finished after 900 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)
    finally:
        kill_tree(proc)
    saved = sum(len(finished_theorems(d / n)) for d in [shards.shard_dir(root, 0), shards.partial_dir(root, 1)]
                for n in OUTPUTS if (d / n).is_dir())
    assert not (root / "_done.json").exists() and not shards.shard_dir(root, 2).exists()

    with dg.DagsterInstance.from_config(str(s.home)) as inst:
        (killed,) = inst.get_runs()
        assert killed.status == dg.DagsterRunStatus.STARTED  # SIGKILL: nobody reported the end
        inst.report_run_failed(killed)  # what run monitoring does for a run whose process died
        again = await _in_thread(lean_pool, lambda: _execute(inst, killed.run_id))
        assert again.success, log.read_text()[-3000:]
        ran = step_keys(again)
        inline = [r.user_message for r in inst.all_logs(again.run_id) if "did not run in this run" in r.user_message]
    print(f"re-execution after SIGKILL ran steps: {ran}; the merge ran {len(inline)} shard(s) that never started")
    # Dagster re-runs the interrupted shard step and the merge, not the finished shard; a shard step that never
    # started is not re-run by Dagster (see shards.missing): the merge runs it
    assert "trajectories.trajectories_shard[shard_00000]" not in ran and ran[-1] == "trajectories.merge_trajectories"
    assert len(inline) == 3 - sum(k.startswith("trajectories.trajectories_shard") for k in ran) - 1
    searched = _searched_by(root, os.getpid())
    fresh = len(CORPUS) * len(OUTPUTS)
    print(f"preemption: {saved} of {fresh} theorem searches saved before the SIGKILL; the re-execution searched "
          f"{searched} of {fresh}: recomputed fraction {searched / fresh:.2f}")
    assert searched == fresh - saved and searched < fresh
    assert _trajectories(s.work) == reference
