"""The Dagster assets of the loop, made from its stage specs (`burnqed_core.loop.stages`).

A spec becomes one asset: partitioned by iteration or shared, its graph edges (`Input.edge`), the ``gpu``
pool and op tags when it needs a GPU, eager automation when it asks for it. Its body resolves the spec's
inputs (a missing one fails naming the partition to materialise), fingerprints them with the settings
section, runs the stage under its marker (unchanged inputs are skipped) and shows the `StageResult` with
which partitions it read. A sharded spec becomes a graph asset: a split step (the plan: theorems cut into
shards), one mapped step per shard, and a merge step that materialises the asset.
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_celery.defaults import task_default_priority as celery_default_priority

from burnqed_core.loop import shards
from burnqed_core.loop.markers import run_stage, run_stage_async
from burnqed_core.loop.shards import ShardResult, ShardSpec
from burnqed_core.loop.spec import Resolved, StageContext, StageSpec, me, resolve
from burnqed_core.loop.spec import context as make_context
from burnqed_core.loop.stages import BY_NAME
from burnqed_core.records import StageResult
from burnqed_pipeline.defs.automation import EVAL_REPORT_CONDITION
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.metadata import eval_metadata, loss_curve, model_fingerprint, served_metadata, set_metadata
from burnqed_pipeline.ordering import wait_for_earlier_iterations
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import (
    first_served,
    logs_to,
    progress,
    refuse_if_interrupted,
    result,
    searched_progress,
    shard_workers,
    stage,
    stops_the_run,
    training_progress,
    worker_name,
)

RESOURCES = {"profile", "lean", "policy"}
# A shard step is resumable (its flushed parts stay): a failed attempt, or one whose Celery worker was lost
# (`burnqed_pipeline.celery_executor`), is sent again, to any worker, and continues where it stopped.
SHARD_RETRY = dg.RetryPolicy(max_retries=2, delay=1.0)

PRIORITY_TAG = "dagster/priority"  # Dagster orders the steps ready in a run by this op tag (default 0)
# dagster-celery reads only its own tag (default: its app's task_default_priority) and hands it to the broker,
# whose order it is: RabbitMQ takes higher first, Redis (burnqed deploy celery) lower first. So a stage's
# priority leaves the Celery tag at the default, said explicitly (else dagster-celery warns on every run).
CELERY_PRIORITY_TAG = "dagster-celery/priority"


def _first_of_iteration(spec: StageSpec) -> bool:
    """The stage that starts an iteration (no input of the same iteration) and reads earlier ones: under a
    backfill it waits for the runs of earlier iterations (`burnqed_pipeline.ordering`)."""
    return (spec.partitioned and spec.earlier is not None
            and not any(BY_NAME[i.asset].partitioned for i in spec.inputs))


def stage_context(context: Any, spec: StageSpec) -> tuple[Resolved, StageContext]:
    """The spec's inputs resolved for this partition and the context its functions receive."""
    refuse_if_interrupted(context)
    st = stage(context.resources.profile.load())
    n = partition_iteration(context) if spec.partitioned else None
    if n is not None and _first_of_iteration(spec):
        wait_for_earlier_iterations(context, st.layout, n, me(spec, n))
    res = resolve(spec, BY_NAME, st.profile, st.layout, n)
    ctx = context_for(context, spec, st.profile, st.layout, n, res)
    return res, ctx


def context_for(context: Any, spec: StageSpec, profile: Any, layout: Any, n: int | None,
                res: Resolved) -> StageContext:
    return make_context(spec, profile, layout, n, res, lean=context.resources.lean.env,
                   policy=context.resources.policy.for_model)


def _progress(context: Any, spec: StageSpec, out: Path) -> contextlib.AbstractContextManager[None]:
    if spec.progress == "training":
        return progress(context, training_progress(out))
    return contextlib.nullcontext()


def extras(spec: StageSpec, ctx: StageContext, res: StageResult) -> dict[str, Any]:
    """The metadata a spec asks for besides its result (`StageSpec.extras`)."""
    md: dict[str, Any] = {}
    for kind in spec.extras:
        if kind == "loss_curve":
            md |= loss_curve(ctx.out, spec.title(ctx.n))
        elif kind == "model_fingerprint" and (ctx.out / "config.json").exists():
            md |= model_fingerprint(ctx.out)
        elif kind == "served":
            md |= served_metadata(res.metrics.get("served", {}))
        elif kind == "eval_table":
            from burnqed_core.eval.report import read_summary
            from burnqed_core.eval.steps import eval_set_specs, set_out, set_slug

            md |= eval_metadata([read_summary(e.eval) for e in ctx.earlier] + [read_summary(ctx.out)])
            for spec in eval_set_specs(ctx.settings)[1:]:  # eval.also: each set's table and rates, apart
                md |= set_metadata(set_slug(spec), read_summary(set_out(ctx.out, ctx.settings, spec)))
    return md


def _run(ctx: StageContext, fp: str) -> StageResult:
    run = ctx.spec.run
    assert run is not None
    if inspect.iscoroutinefunction(run):
        return get_runtime().run(run_stage_async(ctx.out, fp, lambda: run(ctx)))  # type: ignore[arg-type,return-value]
    return run_stage(ctx.out, fp, lambda: run(ctx))  # type: ignore[arg-type,return-value]


def _asset_args(spec: StageSpec) -> dict[str, Any]:
    args: dict[str, Any] = {"group_name": spec.group_name, "kinds": set(spec.kinds), "description": spec.doc}
    if spec.partitioned:
        args["partitions_def"] = iterations
    if spec.eager:
        args["automation_condition"] = EVAL_REPORT_CONDITION
    return args


def _edges(spec: StageSpec) -> list[str]:
    return [i.asset for i in spec.inputs if i.edge]


def op_tags(spec: StageSpec, gpu: bool = True) -> dict[str, Any]:
    """A step's tags: GPU placement (`GPU_OP_TAGS`) on a GPU stage's working steps, and the step priority
    (steps ready together run highest first, in-process and multiprocess) on every step of a stage that has
    one."""
    tags: dict[str, Any] = dict(GPU_OP_TAGS) if gpu and spec.gpu else {}
    if spec.priority:
        tags[PRIORITY_TAG] = str(spec.priority)
        tags[CELERY_PRIORITY_TAG] = str(celery_default_priority)
    return tags


def stage_asset(spec: StageSpec) -> dg.AssetsDefinition:
    """One asset for a spec that runs in one step."""

    def body(context):
        res, ctx = stage_context(context, spec)
        with logs_to(context), _progress(context, spec, ctx.out):
            out = _run(ctx, res.fingerprint)
        return result(context, out, res.used, extras(spec, ctx, out))

    return dg.asset(name=spec.name, deps=_edges(spec), required_resource_keys=RESOURCES, op_tags=op_tags(spec),
                    pool=GPU_POOL if spec.gpu else None, **_asset_args(spec))(body)


def _shard_step(context: Any, spec: StageSpec, shard: ShardSpec) -> ShardResult:
    """Run one shard in a step: its log lines and progress go to the step, and one line says whether it
    was computed or read back."""
    assert spec.shards is not None
    _res, ctx = stage_context(context, spec)
    work = shards.partial_dir(Path(shard.stage_dir), shard.index)

    async def compute(path: Path) -> StageResult:
        return await spec.shards.shard(ctx, shard.theorems, path)  # type: ignore[union-attr]

    with logs_to(context), progress(context, searched_progress(work, len(shard.theorems))):
        out = get_runtime().run(shards.run_shard(shard, compute))
    out = out.model_copy(update={"worker": worker_name()})
    how = "finished earlier, read back" if out.skipped else f"{spec.shards.verb} in {out.seconds:.1f} s"
    context.log.info(f"{spec.name}[{shard.iteration}] shard {shard.index + 1}/{shard.count}: {how} on {out.worker}")
    return out


def sharded_asset(spec: StageSpec) -> dg.AssetsDefinition:
    """A graph asset for a sharded spec: split, one mapped step per shard, merge."""
    assert spec.shards is not None
    sh = spec.shards
    edges = _edges(spec)

    @dg.op(name=f"split_{spec.name}", ins={k: dg.In(dg.Nothing) for k in edges}, out=dg.DynamicOut(ShardSpec),
           required_resource_keys=RESOURCES, tags=op_tags(spec, gpu=False))
    def split(context):
        res, ctx = stage_context(context, spec)
        with logs_to(context):
            theorems = list(sh.select(ctx))
            planned, saved = shards.plan(spec.name, ctx.iteration, ctx.out, res.fingerprint, theorems,
                                         sh.size(context.resources.profile.load()))
            if saved is None and sh.prepare is not None:
                get_runtime().run(sh.prepare(ctx))
        context.log.info(f"{me(spec, ctx.n)}: {len(theorems)} theorems in {len(planned)} shard(s)"
                         f"{' (finished earlier: every shard is read back)' if saved else ''}")
        for s in planned:
            yield dg.DynamicOutput(s, mapping_key=s.key)

    @dg.op(name=f"{spec.name}_shard", required_resource_keys=RESOURCES, retry_policy=SHARD_RETRY,
           tags=op_tags(spec), pool=GPU_POOL if spec.gpu else None)
    def shard_op(context, shard: ShardSpec) -> dg.Output[ShardResult]:
        with stops_the_run(context):  # not retried when a signal stops the command
            out = _shard_step(context, spec, shard)
        return dg.Output(out, metadata={"worker": out.worker or "", "skipped": out.skipped, "seconds": out.seconds,
                                        "theorems": len(out.theorems)})

    @dg.op(name=f"merge_{spec.name}", required_resource_keys=RESOURCES, tags=op_tags(spec, gpu=False))
    def merge(context, results: list[ShardResult]) -> dg.MaterializeResult:
        res, ctx = stage_context(context, spec)
        if not shards.stage_done(ctx.out):
            for missing in shards.missing(ctx.out, res.fingerprint, results):
                context.log.warning(f"{me(spec, ctx.n)} shard {missing.index + 1}/{missing.count} did not run in "
                                    "this run (a re-execution from failure skips mapped steps that never "
                                    "started): running it")
                results = [*results, _shard_step(context, spec, missing)]

        def finish() -> StageResult:
            out = sh.merge(ctx, shards.gather(ctx.out, res.fingerprint, results))
            return out.model_copy(update={"seconds": round(sum(r.seconds for r in results), 1),
                                          "metrics": {**out.metrics, "served": first_served(results)}})

        with logs_to(context):
            out = shards.finish_stage(ctx.out, res.fingerprint, finish)
        plan = shards.read_plan(ctx.out)
        md = {"theorems": len(plan.theorems) if plan else 0, "shards": len(results), **shard_workers(results),
              **extras(spec, ctx, out)}
        return result(context, out, res.used, md)

    def compose(**ins: Any) -> Any:
        return merge(split(**ins).map(shard_op).collect())

    compose.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in edges])
    return dg.graph_asset(name=spec.name, ins={k: dg.AssetIn(dagster_type=dg.Nothing) for k in edges},
                          **_asset_args(spec))(compose)


def build(spec: StageSpec) -> dg.AssetsDefinition:
    return sharded_asset(spec) if spec.shards is not None else stage_asset(spec)

