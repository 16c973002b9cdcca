"""Preemption of ``lora_adapter`` (real persistent Dagster instance with the repository's dagster.yaml, real tiny
model; no Lean):

* a real `dagster asset materialize` run process is SIGKILLed mid-training (as a spot reclaim does), found dead
  by ``burnqed recover`` (marked failed, its gpu pool slot freed) and re-executed from failure in a new process:
  training continues from its last checkpoint and the adapter equals an uninterrupted run's;
* under `dagster dev`, every process of the box is SIGKILLed mid-training; after a restart ``burnqed recover``
  marks the run failed and the daemon's run retry re-executes it from failure, resuming the training.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dagster as dg
import psutil
import pytest
import torch
from safetensors.torch import load_file

from burnqed_core.loop.layout import BaseLayout
from burnqed_core.training.checkpoints import list_checkpoints
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_pipeline.defs.partitions import GPU_POOL, add_iteration
from burnqed_pipeline.recovery import recover_dead_runs, run_pid
from burnqed_pipeline.runner import REPO_DAGSTER_YAML
from tests.pipeline.helpers import materialize, metadata, resources
from tests.pipeline.profiles import leandojo_corpus, slice_set, write_profile
from tests.pipeline.test_ui_browser import _gql, dagster_dev

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STEPS, SAVE_EVERY = 24, 4
KILL_AT = 12  # SIGKILL once a checkpoint at or after this step exists


def _env(home: Path, profile: Path) -> dict[str, str]:
    return {**os.environ, "DAGSTER_HOME": str(home), "BURNQED_PROFILE": str(profile), "PYTHONPATH": str(ROOT),
            "OMP_NUM_THREADS": "1", "BURNQED_EXECUTOR": "in_process"}


def _step(ckpt: Path) -> int:
    return int(ckpt.name.split("-")[1])


def _prepare(tmp_path: Path) -> tuple[dict[str, Any], Path, Path, dg.DagsterInstance]:
    """The profile's overrides, the profile, DAGSTER_HOME (the repository's dagster.yaml: run retries, run
    monitoring, gpu pool limit 1) and its instance, with the base assets and tactic_pairs[0] materialised."""
    bench = slice_set("bundled:benchmark", 1, tmp_path / "bench" / "benchmark.jsonl")
    corpus = leandojo_corpus(tmp_path / "dojo")
    common = {"data.corpus": str(corpus), "data.benchmark": str(bench), "training.max_steps": STEPS,
              "training.save_every": SAVE_EVERY, "training.eval_every": SAVE_EVERY}
    prof = write_profile(tmp_path / "profile.yaml", {"paths.work_dir": str(tmp_path / "work"), **common})
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copyfile(REPO_DAGSTER_YAML, home / "dagster.yaml")
    instance = dg.DagsterInstance.from_config(str(home))
    res = resources(prof)
    materialize(instance, res, ["base_tactic_pairs", "premise_index", "base_model"])
    add_iteration(instance, 0)
    materialize(instance, res, ["tactic_pairs"], "0")
    return common, prof, home, instance


def _recover(home: Path, prof: Path) -> str:
    """``burnqed recover`` in a process of its own; its output."""
    rec = subprocess.run([sys.executable, "-c", "from burnqed_pipeline.cli import main; main()", "recover",
                          "--profile", str(prof)], cwd=ROOT, env=_env(home, prof), capture_output=True, text=True,
                         timeout=300)
    assert rec.returncode == 0, rec.stdout[-2000:] + rec.stderr[-2000:]
    return rec.stdout


def _lora_metadata(instance: dg.DagsterInstance, run_id: str) -> dict[str, Any]:
    mats = instance.fetch_materializations(dg.AssetKey("lora_adapter"), limit=10).records
    assert [m.run_id for m in mats] == [run_id]  # the killed run materialised nothing
    md = {k: getattr(v, "value", v) for k, v in mats[0].asset_materialization.metadata.items()}  # type: ignore
    table = mats[0].asset_materialization.metadata.get("metrics")  # type: ignore[union-attr]
    for r in getattr(table, "records", []):  # numbers past the flat limit are in one table (as text)
        name, value = r.data["name"], r.data["value"]
        md.setdefault(name, None if value in ("None", "") else json.loads(value) if value[:1].isdigit() else value)
    return md


def test_sigkilled_training_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    common, prof, home, instance = _prepare(tmp_path)

    # an uninterrupted run on a copy of the same inputs (another work dir and instance)
    layout, straight_layout = BaseLayout(root=tmp_path / "work"), BaseLayout(root=tmp_path / "straight")
    shutil.copytree(layout.dir, straight_layout.dir)
    shutil.copytree(layout.iteration(0).stage("tactic_pairs"), straight_layout.iteration(0).stage("tactic_pairs"))

    # 1. the run process, killed mid-training once a checkpoint at >= KILL_AT is saved
    out = layout.iteration(0).stage("lora_adapter")
    cmd = [str(Path(sys.executable).parent / "dagster"), "asset", "materialize", "--select", "lora_adapter",
           "--partition", "0", "-m", "burnqed_pipeline.definitions"]
    log_path = tmp_path / "killed.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(home, prof), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    deadline = time.monotonic() + 600
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            ckpts = list_checkpoints(out)
            if ckpts and _step(ckpts[-1]) >= KILL_AT:
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.02)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, log_path.read_text(errors="replace")[-3000:]
    killed_at = _step(list_checkpoints(out)[-1])
    assert KILL_AT <= killed_at < STEPS and not (out / "metrics.json").exists()

    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": "0"}))
    killed = next(r for r in runs if r.asset_selection == {dg.AssetKey("lora_adapter")})
    # nobody reported the end of the killed run: it stays STARTED and keeps its gpu slot
    assert killed.status == dg.DagsterRunStatus.STARTED
    assert killed.run_id in instance.event_log_storage.get_concurrency_info(GPU_POOL).active_run_ids
    assert run_pid(instance, killed.run_id) == proc.pid
    # `burnqed recover` (also done by `burnqed loop` before it starts): the run is failed, its slot freed
    out_text = _recover(home, prof)
    assert f"run {killed.run_id[:8]} (__ASSET_JOB, 0): run process {proc.pid} is gone" in out_text
    assert "1 run(s) recovered" in out_text
    failed = instance.get_run_by_id(killed.run_id)
    assert failed is not None and failed.status == dg.DagsterRunStatus.FAILURE
    assert not instance.event_log_storage.get_concurrency_info(GPU_POOL).active_run_ids
    assert recover_dead_runs(instance) == []

    # 2. re-execution from failure in a new run process
    reexec = subprocess.run([sys.executable, "-c", "from tests.pipeline.reexecute import main; main()",
                             killed.run_id], cwd=ROOT, env=_env(home, prof), capture_output=True, text=True,
                            timeout=900)
    assert reexec.returncode == 0, reexec.stdout[-3000:] + reexec.stderr[-3000:]
    run_id, status = reexec.stdout.strip().splitlines()[-1].split()[1:]
    assert status == "SUCCESS", reexec.stdout[-3000:] + reexec.stderr[-3000:]
    run = instance.get_run_by_id(run_id)
    assert run is not None and run.parent_run_id == killed.run_id and run.tags["dagster/partition"] == "0"
    md = _lora_metadata(instance, run_id)
    assert md["skipped"] is False and md["steps"] == STEPS and md["resumed_from_step"] == killed_at

    recomputed = STEPS - killed_at
    assert recomputed < STEPS
    print(f"\nlora_adapter preemption: killed after the checkpoint at step {killed_at}/{STEPS}; the re-execution "
          f"ran {recomputed}/{STEPS} optimizer steps (recomputed fraction {recomputed / STEPS:.2f}, "
          f"a fresh run 1.00)")

    # 3. the uninterrupted run gives the same adapter
    sprof = write_profile(tmp_path / "straight.yaml", {"paths.work_dir": str(tmp_path / "straight"), **common})
    (tmp_path / "dagster2").mkdir()
    other = dg.DagsterInstance.local_temp(tempdir=str(tmp_path / "dagster2"))
    add_iteration(other, 0)
    smd = metadata(materialize(other, resources(sprof), ["lora_adapter"], "0"))["lora_adapter"]
    assert smd.get("resumed_from_step") is None and smd["steps"] == STEPS

    resumed = TrainingMetrics.load(out)
    straight = TrainingMetrics.load(straight_layout.iteration(0).stage("lora_adapter"))
    assert [p.step for p in resumed.loss_curve] == list(range(1, STEPS + 1))  # each step once
    for a, b in zip(resumed.loss_curve, straight.loss_curve, strict=True):
        assert a.loss == pytest.approx(b.loss, rel=1e-5, abs=1e-6), a.step
    assert resumed.best_step == straight.best_step
    wa = load_file(out / "adapter_model.safetensors")
    wb = load_file(straight_layout.iteration(0).stage("lora_adapter") / "adapter_model.safetensors")
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=1e-5, atol=1e-6)


def _launch_lora_run(url: str) -> str:
    """Launch ``lora_adapter[0]`` through the webserver, as the UI's "Materialize" does; the run id."""
    query = """mutation { launchRun(executionParams: {
        selector: {repositoryLocationName: "burnqed", repositoryName: "__repository__", jobName: "__ASSET_JOB",
                   assetSelection: [{path: ["lora_adapter"]}]},
        executionMetadata: {tags: [{key: "dagster/partition", value: "0"}]}, runConfigData: "{}"}) {
      __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
      ... on RunConfigValidationInvalid { errors { message } } } }"""
    res = _gql(url, query)["data"]["launchRun"]
    assert res["__typename"] == "LaunchRunSuccess", res
    return str(res["run"]["runId"])


def _kill_box(pid: int) -> None:
    """SIGKILL everything of the `dagster dev` that runs process ``pid``: webserver, daemon, code server and run
    process die at once, as on a reclaimed spot box."""
    proc = psutil.Process(pid)
    top = next(p for p in proc.parents() if "dev" in p.cmdline() and any("dagster" in a for a in p.cmdline()))
    for p in [top, *top.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.send_signal(signal.SIGKILL)
    psutil.wait_procs([top], timeout=30)


def test_a_preempted_box_is_recovered_and_the_run_retried_from_failure(tmp_path: Path) -> None:
    """The single-box story end to end: `dagster dev` (webserver, daemon, code server) launches the run as the
    UI does; mid-training everything is SIGKILLed; after `dagster dev` starts again the run is still STARTED;
    `burnqed recover` marks it failed, and the daemon's run retry (dagster.yaml) re-executes it from failure:
    training continues from its last checkpoint."""
    _, prof, home, instance = _prepare(tmp_path)
    out = BaseLayout(root=tmp_path / "work").iteration(0).stage("lora_adapter")
    with dagster_dev(home, prof, tmp_path / "dagster_dev.log") as url:
        run_id = _launch_lora_run(url)
        deadline = time.monotonic() + 600
        pid = None
        while time.monotonic() < deadline:
            ckpts = list_checkpoints(out)
            if ckpts and _step(ckpts[-1]) >= KILL_AT:
                pid = run_pid(instance, run_id)
                assert pid is not None
                _kill_box(pid)
                break
            run = instance.get_run_by_id(run_id)
            assert run is not None and run.status not in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.SUCCESS)
            time.sleep(0.02)
        assert pid is not None, "no checkpoint in time"
    killed_at = _step(list_checkpoints(out)[-1])
    assert KILL_AT <= killed_at < STEPS and not (out / "metrics.json").exists()

    with dagster_dev(home, prof, tmp_path / "dagster_dev_again.log"):
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.STARTED  # nobody saw the box go
        assert f"run {run_id[:8]} (__ASSET_JOB, 0): run process {pid} is gone" in _recover(home, prof)
        deadline = time.monotonic() + 600
        retry = None
        while time.monotonic() < deadline:
            retry = next(iter(instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": run_id}))), None)
            if retry is not None and retry.status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE):
                break
            time.sleep(2)
    assert retry is not None, "the daemon did not retry the failed run"
    assert retry.status == dg.DagsterRunStatus.SUCCESS, (tmp_path / "dagster_dev_again.log").read_text()[-3000:]
    assert retry.tags["dagster/retry_number"] == "1" and retry.tags["dagster/partition"] == "0"
    md = _lora_metadata(instance, retry.run_id)
    assert md["skipped"] is False and md["steps"] == STEPS and md["resumed_from_step"] == killed_at
    print(f"\nlora_adapter on a preempted box: killed after the checkpoint at step {killed_at}/{STEPS}; the "
          f"daemon's retry {retry.run_id[:8]} ran {STEPS - killed_at}/{STEPS} optimizer steps")
