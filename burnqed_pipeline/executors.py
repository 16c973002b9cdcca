"""Which Dagster executor runs the steps of a run: ``BURNQED_EXECUTOR`` in the code location's environment, read
when the location loads (an executor is part of the definitions, not of a run's config).

* ``in_process`` (default): every step of a run in the run process, so the Lean pool and the loaded policy
  serve all stages of the run (one box; the ``gpu`` pool keeps GPU stages one at a time).
* ``multiprocess``: a process per step (Dagster's default executor).
* ``k8s``: `dagster_k8s.k8s_job_executor`, a Kubernetes Job (pod) per step; GPU steps ask for a GPU through
  their ``dagster-k8s/config`` op tag (`burnqed_pipeline.defs.partitions.GPU_OP_TAGS`). Example run config:
  ``deploy/k8s/run_config.yaml``.
* ``celery``: dagster-celery's executor, a Celery task per step, that also notices lost workers
  (`burnqed_pipeline.celery_executor`); GPU steps go to the queue of their ``dagster-celery/queue`` op tag
  (``gpu``), the others to ``dagster``. Run config: ``deploy/celery/``; a local broker and workers:
  ``burnqed deploy celery up`` (`burnqed_pipeline.deploy.local_celery`).

The last two need the ``deploy`` extra (``pip install 'burnqed[deploy]'``).
"""

from __future__ import annotations

import os

import dagster as dg

from burnqed_core.errors import BurnqedError

EXECUTOR_ENV = "BURNQED_EXECUTOR"
EXECUTORS = ("in_process", "multiprocess", "k8s", "celery")


def executor_for(name: str) -> dg.ExecutorDefinition:
    """The executor called ``name`` (one of `EXECUTORS`)."""
    if name == "in_process":
        return dg.in_process_executor
    if name == "multiprocess":
        return dg.multiprocess_executor
    try:
        if name == "k8s":
            from dagster_k8s import k8s_job_executor

            return k8s_job_executor
        if name == "celery":
            from burnqed_pipeline.celery_executor import celery_executor

            return celery_executor
    except ImportError as e:
        raise BurnqedError(f"{EXECUTOR_ENV}={name} needs {e.name}: pip install 'burnqed[deploy]'") from e
    raise BurnqedError(f"{EXECUTOR_ENV}: unknown executor {name!r}, expected one of {', '.join(EXECUTORS)}")


def pipeline_executor() -> dg.ExecutorDefinition:
    """The executor named by ``BURNQED_EXECUTOR`` (default ``in_process``)."""
    return executor_for(os.environ.get(EXECUTOR_ENV, "in_process").strip() or "in_process")
