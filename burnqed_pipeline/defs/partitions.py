"""The ``iteration`` partitions and where each stage runs.

Iterations are dynamic partitions (a user adds iteration N in the UI's "Add a
partition" or through `add_iteration`, no code change). Dagster keeps keys in
insertion order, so they must be added in numeric order: `add_iteration`
refuses a gap, and iteration N+1 is added once N is complete (the ``burnqed
loop`` command; a sensor can do the same).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import dagster as dg

from burnqed_core.loop.inputs import LoopError

ITERATIONS = "iteration"
iterations = dg.DynamicPartitionsDefinition(name=ITERATIONS)

# GPU stages (DESIGN.md's table): one at a time on a single box through the pool
# (`dagster instance concurrency set gpu 1`), a GPU node on Kubernetes, the gpu queue on celery.
# The op tags say what a GPU stage needs wherever it runs: one GPU (on Kubernetes, k8s_job_executor, the step's
# pod asks for one `nvidia.com/gpu`, which only GPU nodes offer) and the Celery queue of GPU workers. Where it is
# placed and how big its pod is (memory, the GPU nodes' taint and labels) depend on the cluster: the run
# config's per_step_k8s_config (deploy/k8s/run_config.yaml), which the executor merges over these tags.
GPU_POOL = "gpu"
GPU_QUEUE = "gpu"
GPU_OP_TAGS: Mapping[str, Any] = MappingProxyType({
    "dagster-k8s/config": {
        "container_config": {"resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}},
    },
    "dagster-celery/queue": GPU_QUEUE,
})


def iteration_keys(instance: dg.DagsterInstance) -> list[str]:
    return list(instance.get_dynamic_partitions(ITERATIONS))


def add_iteration(instance: dg.DagsterInstance, n: int) -> bool:
    """Add partition ``n`` (True) unless it exists (False); every iteration below ``n`` must exist already, so
    that keys stay in numeric order."""
    if n < 0:
        raise LoopError(f"iterations are non-negative integers, got {n}")
    keys = iteration_keys(instance)
    if str(n) in keys:
        return False
    missing = [k for k in range(n) if str(k) not in keys]
    if missing:
        raise LoopError(f"cannot add iteration {n} before iteration {missing[0]}: add iterations in order")
    instance.add_dynamic_partitions(ITERATIONS, [str(n)])
    return True


def partition_iteration(context: dg.AssetExecutionContext) -> int:
    """The iteration number of the partition being materialised."""
    key = context.partition_key
    if not key.isdigit():
        raise LoopError(f"iteration partition keys are non-negative integers, got {key!r}")
    return int(key)
