"""The code location: assets, partitions, GPU placement, jobs, and Dagster's own validators."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.tags import PRIORITY_TAG as DAGSTER_PRIORITY_TAG

from burnqed_core.loop.inputs import LoopError
from burnqed_core.loop.stages import BY_NAME
from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.partitions import GPU_POOL, ITERATIONS, add_iteration, iteration_keys
from burnqed_pipeline.factory import CELERY_DEFAULT_PRIORITY, CELERY_PRIORITY_TAG, PRIORITY_TAG, op_tags

ROOT = Path(__file__).resolve().parents[2]
BASE = {"base_tactic_pairs", "base_model", "automation_baselines", "premise_index"}
ITERATION = {"tactic_pairs", "lora_adapter", "merged_model", "trajectories", "eval_report"} | (
    {"embeddings", "ebm", "premise_reranker"})
NIGHTLY = {"nightly_eval"}
NO_DEPLOY = "dagster-celery is not installed: pip install 'burnqed[deploy]'"
GPU = {"lora_adapter", "merged_model", "embeddings", "ebm", "premise_reranker", "trajectories", "eval_report",
       "nightly_eval"}


def _assets() -> dict[str, dg.AssetsDefinition]:
    return {a.key.to_user_string(): a for a in defs().assets or []}  # type: ignore[union-attr]


def test_assets_partitions_and_graph() -> None:
    assets = _assets()
    assert set(assets) == BASE | ITERATION | NIGHTLY
    for name in BASE:
        assert assets[name].partitions_def is None
    for name in ITERATION | NIGHTLY:
        pd = assets[name].partitions_def
        assert isinstance(pd, dg.DynamicPartitionsDefinition) and pd.name == ITERATIONS
    graph = defs().resolve_asset_graph()

    def parents(name: str) -> set[str]:
        return {k.to_user_string() for k in graph.get(dg.AssetKey(name)).parent_keys}

    assert parents("tactic_pairs") == {"base_tactic_pairs", "base_model"}
    assert parents("lora_adapter") == {"tactic_pairs", "base_model"}
    assert parents("merged_model") == {"lora_adapter"}
    assert parents("premise_reranker") == {"merged_model", "premise_index"}
    assert parents("trajectories") == {"merged_model", "premise_index", "ebm", "premise_reranker"}
    assert parents("eval_report") == {"merged_model", "automation_baselines", "premise_index", "ebm",
                                      "premise_reranker"}


def _ops(a: dg.AssetsDefinition) -> list[dg.OpDefinition]:
    nd = a.node_def
    return list(nd.iterate_op_defs()) if isinstance(nd, dg.GraphDefinition) else [a.op]


def test_gpu_stages_are_placed_and_cpu_stages_are_not() -> None:
    for name, a in _assets().items():
        gpu_ops = [op for op in _ops(a) if op.pool == GPU_POOL]
        for op in _ops(a):
            if op.pool != GPU_POOL:
                assert "dagster-k8s/config" not in op.tags and "dagster-celery/queue" not in op.tags, (name, op.name)
        if name not in GPU:
            assert gpu_ops == [], name
            continue
        assert gpu_ops, name
        for op in gpu_ops:
            k8s = op.tags["dagster-k8s/config"]
            k8s = json.loads(k8s) if isinstance(k8s, str) else k8s  # op tag dicts are stored as JSON
            limits = k8s["container_config"]["resources"]["limits"]
            assert limits["nvidia.com/gpu"] == "1" and op.tags["dagster-celery/queue"] == "gpu", name


def test_search_stages_fan_out_over_shards() -> None:
    """trajectories and eval_report: split -> one GPU step per shard (mapped over a DynamicOut) -> merge."""
    assets = _assets()
    for name in ("trajectories", "eval_report"):
        split, shard, merge = f"split_{name}", f"{name}_shard", f"merge_{name}"
        graph = assets[name].node_def
        assert isinstance(graph, dg.GraphDefinition), name
        assert {n.name for n in graph.nodes} == {split, shard, merge}
        assert graph.node_named(split).definition.output_defs[0].is_dynamic
        assert [op.name for op in _ops(assets[name]) if op.pool == GPU_POOL] == [shard]
        assert graph.dependency_structure.is_dynamic_mapped(shard)


def test_the_priority_tags_are_dagster_s_and_dagster_celery_s() -> None:
    """The factory names dagster-celery's tag and default without importing it (the ``deploy`` extra)."""
    core = pytest.importorskip("dagster_celery.core_execution_loop", reason=NO_DEPLOY)
    defaults = pytest.importorskip("dagster_celery.defaults", reason=NO_DEPLOY)
    assert (PRIORITY_TAG, CELERY_PRIORITY_TAG) == (DAGSTER_PRIORITY_TAG, core.DAGSTER_CELERY_STEP_PRIORITY_TAG)
    assert defaults.task_default_priority == CELERY_DEFAULT_PRIORITY


def test_eval_report_steps_go_before_the_trajectory_search() -> None:
    """Both wait on the iteration's model; every step of the report carries Dagster's priority tag."""
    assets = _assets()
    # Celery's tag stays at its default (the broker orders: Redis and RabbitMQ in opposite senses)
    for tag, value in ((PRIORITY_TAG, "1"), (CELERY_PRIORITY_TAG, "5")):
        assert [op.tags.get(tag) for op in _ops(assets["eval_report"])] == [value] * 3
        for name in set(assets) - {"eval_report"}:
            assert all(tag not in op.tags for op in _ops(assets[name])), name


@pytest.mark.parametrize("priority", [0, 1])
def test_dagster_runs_the_ready_step_of_higher_priority_first(priority: int, tmp_path: Path) -> None:
    """A real in-process run of two assets ready together, tagged by `op_tags`: with no priority Dagster takes
    them by name (``a_...`` first), with one the tagged ``z_...`` goes first."""
    order: list[str] = []

    def leaf(name: str, spec_name: str, prio: int) -> dg.AssetsDefinition:
        spec = dataclasses.replace(BY_NAME[spec_name], gpu=False)

        @dg.asset(name=name, deps=["root"], op_tags=op_tags(spec, priority=prio))
        def body() -> None:
            order.append(name)

        return body

    @dg.asset
    def root() -> None:
        order.append("root")

    assets = [root, leaf("a_search", "trajectories", 0), leaf("z_report", "eval_report", priority)]
    with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
        assert dg.materialize(assets, instance=inst).success
    assert order == (["root", "z_report", "a_search"] if priority else ["root", "a_search", "z_report"])


def test_every_stage_has_its_vocabulary_and_its_code_version() -> None:
    """What the UI calls each stage is the pipeline's (`burnqed_pipeline.vocabulary`), and each asset carries its
    stage's code version, so that the UI marks a materialisation made by other code stale."""
    from burnqed_core.loop.stages import ALL
    from burnqed_pipeline.vocabulary import STYLES

    assert {s.name for s in ALL} == set(STYLES)
    for a in _assets().values():
        spec = BY_NAME[a.key.to_user_string()]
        assert a.code_versions_by_key[a.key] == spec.code_version and len(spec.code_version) == 16


def test_jobs_and_resources() -> None:
    d = defs()
    assert d.resolve_job_def("iteration").partitions_def.name == ITERATIONS  # type: ignore[union-attr]
    assert d.resolve_job_def("base").partitions_def is None
    assert d.resolve_job_def("nightly").partitions_def.name == ITERATIONS  # type: ignore[union-attr]
    assert set(d.resources or {}) >= {"profile", "event_loop", "lean", "policy"}


def test_iterations_are_added_in_numeric_order(tmp_path: Path) -> None:
    with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
        assert add_iteration(inst, 0) and not add_iteration(inst, 0)
        with pytest.raises(LoopError, match="before iteration 1"):
            add_iteration(inst, 2)
        for n in range(1, 12):
            add_iteration(inst, n)
        assert iteration_keys(inst) == [str(n) for n in range(12)]
        with pytest.raises(LoopError, match="non-negative"):
            add_iteration(inst, -1)


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [["dagster", "definitions", "validate", "-w", "workspace.yaml"],
                                 ["dg", "check", "defs"]])
def test_dagster_validators_pass(cmd: list[str], tmp_path: Path) -> None:
    exe = shutil.which(cmd[0], path=str(Path(sys.executable).parent))
    assert exe, f"{cmd[0]} is not installed in this venv"
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([exe, *cmd[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_checks_schedule_and_sensors() -> None:
    d = defs()
    checks = {(k.asset_key.to_user_string(), k.name): c for c in d.asset_checks or [] for k in c.check_keys}
    expected = {("tactic_pairs", "tactic_pairs_clean"), ("eval_report", "go_no_go")} | (
        {("embeddings", "no_collapse"), ("ebm", "ebm_healthy")})
    assert set(checks) == expected
    for (asset, name), c in checks.items():
        spec = c.get_spec_for_check_key(dg.AssetCheckKey(dg.AssetKey(asset), name))
        assert spec.blocking and c.partitions_def is not None, name
    # the iteration job runs the checks of its assets (a failed one stops the run)
    job_checks = d.resolve_job_def("iteration").asset_layer.asset_graph.asset_check_keys
    assert {(k.asset_key.to_user_string(), k.name) for k in job_checks} == expected
    assert d.resolve_schedule_def("nightly_eval_schedule").job_name == "nightly"
    sensor = d.resolve_sensor_def("next_iteration")
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED


def test_a_stop_before_the_end_keeps_what_later_iterations_read() -> None:
    from burnqed_core.config import load_profile
    from burnqed_pipeline.runner import carried_stages

    graph = defs().resolve_asset_graph()
    upstream = {k.to_user_string() for k in (dg.AssetSelection.groups("iteration")
                                             & dg.AssetSelection.assets("eval_report").upstream()).resolve(graph)}
    assert "trajectories" not in upstream  # iteration 0's eval needs no search of the corpus...
    profile = load_profile("tiny")
    carried = carried_stages(profile, upstream)
    assert "trajectories" in carried  # ...but iteration 1's tactic pairs, embeddings and EBM read it
    assert {"eval_report", "lora_adapter"} <= carried  # earlier evals; the warm start (the adapter by default)
    merged = load_profile("tiny", overrides={"training.warm_start": "merged"})
    # the warm start, and the trajectories the joint training (ebm.joint) reads
    assert carried_stages(merged, {"lora_adapter"}) == {"merged_model", "trajectories"}
    assert carried_stages(profile, {"base_model", "merged_model"}) == set()


BLOCK_DEPLOY = '''
import importlib.abc, sys

class NoDeployExtra(importlib.abc.MetaPathFinder):
    """As if `pip install burnqed` had run without the deploy extra."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("dagster_celery", "dagster_k8s", "celery", "kombu", "redis"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoDeployExtra())
'''


def _without_deploy(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "BURNQED_EXECUTOR"} | {"PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", BLOCK_DEPLOY + code], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=300)


def test_the_code_location_loads_with_only_the_base_dependencies() -> None:
    """``dagster dev`` on an install without the ``deploy`` extra: the definitions and the ``burnqed`` command
    load (dagster-celery and dagster-k8s are imported only where their executor is chosen), and choosing one
    of those executors there is one clear error naming the extra."""
    ok = _without_deploy("from burnqed_pipeline.definitions import defs\n"
                         "d = defs()\n"
                         "import sys\n"
                         "assert not any(m.split('.')[0] in ('dagster_celery', 'dagster_k8s', 'celery') "
                         "for m in sys.modules), 'an optional executor was imported'\n"
                         "from burnqed_pipeline.cli import make_app\n"
                         "make_app()\n"
                         "print(len(list(d.assets)))\n")
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert ok.stdout.strip() == str(len(_assets()))
    bad = _without_deploy("from burnqed_pipeline.definitions import defs\ndefs()\n", BURNQED_EXECUTOR="celery")
    assert bad.returncode != 0 and "pip install 'burnqed[deploy]'" in bad.stderr, bad.stderr[-3000:]
