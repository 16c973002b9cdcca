"""Preemption of ``lora_adapter``: a real `dagster asset materialize` run process is SIGKILLed mid-training (as a
spot reclaim does), found dead, marked failed and its gpu pool slot freed (`recover_dead_runs`: what
``burnqed recover`` does), and re-executed from failure in a new process.
Training continues from its last checkpoint, and the adapter equals an uninterrupted run's. Real persistent
Dagster instance (the repository's dagster.yaml), real tiny model; no Lean."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import torch
from safetensors.torch import load_file

from burnqed_core.loop.layout import BaseLayout
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.sft import list_checkpoints
from burnqed_pipeline.cli import REPO_DAGSTER_YAML
from burnqed_pipeline.defs.partitions import GPU_POOL, add_iteration
from burnqed_pipeline.recovery import recover_dead_runs, run_pid
from tests.pipeline.helpers import materialize, metadata, resources
from tests.pipeline.profiles import leandojo_corpus, slice_set, write_profile

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STEPS, SAVE_EVERY = 24, 4
KILL_AT = 12  # SIGKILL once a checkpoint at or after this step exists


def _env(home: Path, profile: Path) -> dict[str, str]:
    return {**os.environ, "DAGSTER_HOME": str(home), "BURNQED_PROFILE": str(profile), "PYTHONPATH": str(ROOT),
            "OMP_NUM_THREADS": "1", "BURNQED_EXECUTOR": "in_process"}


def _step(ckpt: Path) -> int:
    return int(ckpt.name.split("-")[1])


def test_sigkilled_training_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    bench = slice_set("bundled:benchmark", 1, tmp_path / "bench" / "benchmark.jsonl")
    corpus = leandojo_corpus(tmp_path / "dojo")
    common = {"data.corpus": str(corpus), "data.benchmark": str(bench), "training.max_steps": STEPS,
              "training.save_every": SAVE_EVERY, "training.eval_every": SAVE_EVERY}
    prof = write_profile(tmp_path / "profile.yaml", {"paths.work_dir": str(tmp_path / "work"), **common})
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copyfile(REPO_DAGSTER_YAML, home / "dagster.yaml")  # run retries, gpu pool limit 1
    instance = dg.DagsterInstance.from_config(str(home))
    res = resources(prof)
    materialize(instance, res, ["base_tactic_pairs", "base_model"])
    add_iteration(instance, 0)
    materialize(instance, res, ["tactic_pairs"], "0")

    # an uninterrupted run on a copy of the same inputs (another work dir and instance)
    layout, straight_layout = BaseLayout(root=tmp_path / "work"), BaseLayout(root=tmp_path / "straight")
    shutil.copytree(layout.dir, straight_layout.dir)
    shutil.copytree(layout.iteration(0).pairs, straight_layout.iteration(0).pairs)

    # 1. the run process, killed mid-training once a checkpoint at >= KILL_AT is saved
    out = layout.iteration(0).adapter
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
    rec = subprocess.run([sys.executable, "-c", "from burnqed_pipeline.cli import main; main()", "recover",
                          "--profile", str(prof)], cwd=ROOT, env=_env(home, prof), capture_output=True, text=True,
                         timeout=300)
    assert rec.returncode == 0, rec.stdout[-2000:] + rec.stderr[-2000:]
    assert f"run {killed.run_id[:8]} (__ASSET_JOB, 0): run process {proc.pid} is gone" in rec.stdout
    assert "1 run(s) recovered" in rec.stdout
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
    mats = instance.fetch_materializations(dg.AssetKey("lora_adapter"), limit=10).records
    assert [m.run_id for m in mats] == [run_id]  # the killed run materialised nothing
    md = {k: getattr(v, "value", v) for k, v in mats[0].asset_materialization.metadata.items()}  # type: ignore
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

    resumed, straight = TrainingMetrics.load(out), TrainingMetrics.load(straight_layout.iteration(0).adapter)
    assert [p.step for p in resumed.loss_curve] == list(range(1, STEPS + 1))  # each step once
    for a, b in zip(resumed.loss_curve, straight.loss_curve, strict=True):
        assert a.loss == pytest.approx(b.loss, rel=1e-5, abs=1e-6), a.step
    assert resumed.best_step == straight.best_step
    wa = load_file(out / "adapter_model.safetensors")
    wb = load_file(straight_layout.iteration(0).adapter / "adapter_model.safetensors")
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=1e-5, atol=1e-6)
