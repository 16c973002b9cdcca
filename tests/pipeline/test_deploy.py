"""Deployment pieces: the instance configs (run retries from failure, run monitoring), the executor chosen by
BURNQED_EXECUTOR, and the shipped Kubernetes / celery run configs, validated by Dagster's own config schemas
against the pipeline's jobs with the matching executor attached. The celery ones also run, on a real broker and
workers: tests/pipeline/test_distributed.py; the Kubernetes ones do not (no cluster here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from burnqed_core.errors import BurnqedError
from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.bindings import default_resources
from burnqed_pipeline.defs.jobs import RETRY_TAGS, base_job, iteration_job
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL
from burnqed_pipeline.executors import EXECUTORS, executor_for
from burnqed_pipeline.runner import REPO_DAGSTER_YAML, dagster_home

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


needs_k8s = pytest.mark.skipif(not _importable("dagster_k8s"), reason="dagster-k8s is not installed: "
                               "pip install 'burnqed[deploy]'")
needs_celery = pytest.mark.skipif(not _importable("dagster_celery"), reason="dagster-celery is not installed: "
                                  "pip install 'burnqed[deploy]'")


def _check_retries(inst: dg.DagsterInstance) -> None:
    assert inst.run_retries_enabled and inst.run_retries_max_retries >= 1
    assert inst.run_monitoring_enabled
    assert inst.run_monitoring_settings["free_slots_after_run_end_seconds"] > 0


@pytest.mark.parametrize("where", ["repository", "written by the CLI"])
def test_the_shipped_instance_config_retries_runs(where: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if where == "repository":
        home = tmp_path / "home"
        home.mkdir()
        shutil.copyfile(REPO_DAGSTER_YAML, home / "dagster.yaml")
    else:
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        home = dagster_home(tmp_path / "work")  # what `burnqed loop` does with a fresh work dir
        assert (home / "dagster.yaml").read_bytes() == REPO_DAGSTER_YAML.read_bytes()
    with dg.DagsterInstance.from_config(str(home)) as inst:  # Dagster validates the file against its schema
        _check_retries(inst)
        assert inst.event_log_storage.get_concurrency_info(GPU_POOL).limit == 1  # default_limit: one GPU step at a time


def test_retries_re_execute_from_failure() -> None:
    from dagster._core.execution.plan.resume_retry import ReexecutionStrategy
    from dagster._daemon.auto_run_reexecution.auto_run_reexecution import DEFAULT_REEXECUTION_POLICY

    assert {"dagster/retry_strategy": ReexecutionStrategy.FROM_FAILURE.value} == RETRY_TAGS
    for job in (base_job, iteration_job):
        assert job.tags["dagster/retry_strategy"] == "FROM_FAILURE"
    # runs of the UI's "Materialize" (the implicit asset job, without the tag) get the daemon's default
    assert DEFAULT_REEXECUTION_POLICY == ReexecutionStrategy.FROM_FAILURE


def test_executor_from_the_environment() -> None:
    assert executor_for("in_process") is dg.in_process_executor
    assert executor_for("multiprocess") is dg.multiprocess_executor
    with pytest.raises(BurnqedError, match="unknown executor 'spark', expected one of in_process"):
        executor_for("spark")
    assert set(EXECUTORS) == {"in_process", "multiprocess", "k8s", "celery"}


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _jobs_with(executor: str) -> list[dg.JobDefinition]:
    d = dg.Definitions(assets=list(defs().assets or []), resources=default_resources(), jobs=[base_job, iteration_job],
                       executor=executor_for(executor))
    return [d.resolve_job_def("base"), d.resolve_job_def("iteration"), d.resolve_implicit_global_asset_job_def()]


def _gpu_ops(job: dg.JobDefinition) -> set[str]:
    return {node.name for node in job.graph.nodes if node.definition.tags.get("dagster-celery/queue") == "gpu"} | {
        n.name for node in job.graph.nodes if isinstance(node.definition, dg.GraphDefinition)
        for n in node.definition.nodes if n.definition.tags.get("dagster-celery/queue") == "gpu"}


def test_the_profile_is_read_from_the_environment_when_a_run_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BURNQED_PROFILE`` is a ``dg.EnvVar``: the definitions load without it, a run's config names it, and its
    value is the one set when the run starts, not when the code location loaded."""
    monkeypatch.delenv("BURNQED_PROFILE", raising=False)
    (job,) = [j for j in _jobs_with("in_process") if j.name == "base"]
    with pytest.raises(dg.DagsterInvalidConfigError, match='environment variable "BURNQED_PROFILE"'):
        dg.validate_run_config(job, {})
    monkeypatch.setenv("BURNQED_PROFILE", "small")
    assert dg.validate_run_config(job, {})["resources"]["profile"]["config"]["profile"] == "small"


@needs_k8s
def test_k8s_run_config_validates_against_the_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_k8s import k8s_job_executor

    monkeypatch.setenv("BURNQED_PROFILE", "prod")  # the user code deployment's (deploy/k8s/values.yaml)
    assert executor_for("k8s") is k8s_job_executor
    run_config = _load(DEPLOY / "k8s" / "run_config.yaml")
    for job in _jobs_with("k8s"):
        assert job.executor_def is k8s_job_executor
        res = dg.validate_run_config(job, run_config)
        assert res["execution"]["k8s"]["job_namespace"] == "burnqed"
        with pytest.raises(dg.DagsterInvalidConfigError, match='unexpected config entry "gpus"'):
            dg.validate_run_config(job, {"execution": {"config": {"gpus": 1}}})
    per_step = run_config["execution"]["config"]["per_step_k8s_config"]
    assert set(per_step) <= _gpu_ops(_jobs_with("k8s")[1])  # node selectors only for GPU steps, by op name


@needs_k8s
def test_gpu_steps_ask_for_a_gpu_and_the_run_config_places_them() -> None:
    """The op tags hold what a GPU step needs anywhere (one GPU), never a placement value; the run config's
    per_step_k8s_config places every GPU step of the iteration job (memory, taint, node type), and what the
    executor makes of both (its own merge: the op's tags, then the step's run config) holds them all."""
    from dagster_k8s.container_context import K8sContainerContext
    from dagster_k8s.job import UserDefinedDagsterK8sConfig, get_user_defined_k8s_config

    tags = json.loads(json.dumps(dict(GPU_OP_TAGS)))["dagster-k8s/config"]
    assert tags == GPU_OP_TAGS["dagster-k8s/config"]
    assert "memory" not in json.dumps(tags) and "pod_spec_config" not in tags  # placement is the run config's
    per_step = _load(DEPLOY / "k8s" / "run_config.yaml")["execution"]["config"]["per_step_k8s_config"]
    job = _jobs_with("k8s")[1]
    ops = {n.name: n.definition for node in job.graph.nodes
           for n in ([*node.definition.nodes] if isinstance(node.definition, dg.GraphDefinition) else [node])}
    gpu = {name for name, op in ops.items() if op.tags.get("dagster-celery/queue") == "gpu"}
    assert set(per_step) == gpu, set(per_step) ^ gpu
    for name in gpu:
        merged = K8sContainerContext(run_k8s_config=get_user_defined_k8s_config(ops[name].tags)).merge(
            K8sContainerContext(run_k8s_config=UserDefinedDagsterK8sConfig.from_dict(per_step[name])))
        cfg = merged.run_k8s_config
        limits = cfg.container_config["resources"]["limits"]
        assert limits["nvidia.com/gpu"] == "1" and limits["memory"] == "96Gi", (name, limits)
        assert cfg.container_config["resources"]["requests"] == {"nvidia.com/gpu": "1", "memory": "64Gi"}, name
        assert cfg.pod_spec_config["tolerations"][0]["key"] == "nvidia.com/gpu", name


@needs_k8s
def test_k8s_instance_config_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster._config import process_config
    from dagster._core.instance.config import dagster_instance_config
    from dagster_k8s import K8sRunLauncher

    for var in ("DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_HOST", "DAGSTER_PG_DB"):
        monkeypatch.setenv(var, "x")
    shutil.copyfile(DEPLOY / "k8s" / "dagster.yaml", tmp_path / "dagster.yaml")
    config, _ = dagster_instance_config(str(tmp_path))  # raises on a key Dagster does not know
    launcher = config["run_launcher"]
    assert (launcher["module"], launcher["class"]) == ("dagster_k8s", "K8sRunLauncher")
    res = process_config(K8sRunLauncher.config_type(), launcher["config"])
    assert res.success, res.errors
    assert config["run_retries"]["enabled"] and config["run_monitoring"]["max_resume_run_attempts"] > 0
    values = _load(DEPLOY / "k8s" / "values.yaml")
    assert values["runLauncher"]["type"] == "K8sRunLauncher"


@needs_celery
def test_celery_run_config_validates_against_the_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_celery.cli import get_validated_config

    from burnqed_pipeline.celery_executor import celery_executor

    monkeypatch.setenv("BURNQED_CELERY_BROKER", "pyamqp://guest@localhost//")
    monkeypatch.setenv("BURNQED_CELERY_BACKEND", "rpc://")
    monkeypatch.setenv("BURNQED_PROFILE", "tiny")  # what `burnqed deploy celery up` sets (its env())
    path = DEPLOY / "celery" / "run_config.yaml"
    run_config = _load(path)
    for job in _jobs_with("celery"):
        assert job.executor_def is celery_executor
        res = dg.validate_run_config(job, run_config)
        assert res["resources"]["event_loop"]["config"]["keep"] is True  # steps use the worker's pool and policy
    # the workers read the same file (`dagster-celery worker start -y`)
    assert get_validated_config(str(path))["broker"] == "pyamqp://guest@localhost//"
    queues = {n.definition.tags.get("dagster-celery/queue") for n in _jobs_with("celery")[1].graph.nodes}
    assert "gpu" in queues and GPU_OP_TAGS["dagster-celery/queue"] == "gpu"


@needs_celery
def test_the_celery_run_polls_its_steps_at_its_own_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """`poll_s` of the run config is the executor's, and dagster-celery's core loop sleeps it between its looks
    at the steps (its own 1 s otherwise: each step of a chain waited up to a second before the next was sent)."""
    from dagster_celery import core_execution_loop

    from burnqed_pipeline.celery_executor import POLL_S, WatchedCeleryExecutor, celery_executor

    ticks: list[float] = []
    monkeypatch.setattr(core_execution_loop, "core_celery_execution_loop",
                        lambda *a, **k: ticks.append(core_execution_loop.TICK_SECONDS))
    monkeypatch.setattr(core_execution_loop, "TICK_SECONDS", 1)  # restored after the test
    for cfg, want in (({}, POLL_S), ({"poll_s": 0.05}, 0.05)):
        ex = celery_executor.executor_creation_fn(dg.InitExecutorContext(  # type: ignore[misc]
            job=dg.reconstructable(_celery_job), executor_def=celery_executor,
            executor_config=celery_executor.config_schema.config_type.post_process({"retries": {"enabled": {}},
                                                                                   **cfg}),
            instance=dg.DagsterInstance.ephemeral()))
        assert isinstance(ex, WatchedCeleryExecutor) and ex.poll_s == want
        ex.execute(None, None)
        assert ticks[-1] == want < 1


def _celery_job() -> dg.JobDefinition:
    return _jobs_with("celery")[0]


def test_the_celery_worker_command_in_the_docs_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    pytest.importorskip("dagster_celery", reason="dagster-celery is not installed: pip install 'burnqed[deploy]'")
    from dagster_celery.cli import worker_start_command

    text = (DEPLOY / "celery" / "run_config.yaml").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if "-q gpu" in ln).split("dagster-celery", 1)[1].split()
    assert line[:2] == ["worker", "start"]
    params = worker_start_command.make_context("start", line[2:]).params
    assert params["queue"] == ("gpu",) and params["additional_args"] == ("--concurrency=1",)
    assert params["app"] == "dagster_celery.app" and Path(ROOT / params["config_yaml"]).is_file()


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["k8s", "celery"])
def test_dg_check_defs_with_each_executor(executor: str, tmp_path: Path) -> None:
    if not _importable({"k8s": "dagster_k8s", "celery": "dagster_celery"}[executor]):
        pytest.skip(f"the {executor} executor's package is not installed: pip install 'burnqed[deploy]'")
    exe = shutil.which("dg", path=str(Path(sys.executable).parent))
    assert exe, "dg is not installed in this venv"
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "BURNQED_EXECUTOR": executor}
    proc = subprocess.run([exe, "check", "defs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_shard_steps_are_retried_on_both_engines() -> None:
    """A lost shard step (a preempted pod, a killed Celery worker) is sent again and resumes: the search and eval
    shard ops carry a RetryPolicy, and both cluster run configs enable step retries (which apply it)."""
    for engine in ("k8s", "celery"):
        assert "enabled" in _load(DEPLOY / engine / "run_config.yaml")["execution"]["config"]["retries"], engine
    (job,) = [j for j in _jobs_with("in_process") if j.name == "iteration"]
    retried = {n.name: n.definition.retry_policy for node in job.graph.nodes
               if isinstance(node.definition, dg.GraphDefinition) for n in node.definition.nodes}
    assert retried["trajectories_shard"] is not None and retried["trajectories_shard"].max_retries >= 1
    assert retried["eval_report_shard"] is not None and retried["eval_report_shard"].max_retries >= 1
    assert retried["split_trajectories"] is None and retried["merge_eval_report"] is None


def test_the_local_celery_deployment_refuses_what_it_cannot_run(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Clear errors, nothing started: a broker URL with a database number, no redis-server on PATH."""
    from burnqed_pipeline.deploy import local_celery as lc

    with pytest.raises(lc.DeployError, match="no database number"):
        lc.up(tmp_path / "a", broker="redis://broker:6390/0", dagster_home=str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(lc.DeployError, match="apt-get install redis-server"):
        lc.up(tmp_path / "b", workers=1, port=lc.free_port(), dagster_home=str(tmp_path / "home"))
    assert lc.load(tmp_path / "b") is None  # the failed up cleaned its state
