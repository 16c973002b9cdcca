"""The Dagster assets of the stages, made from their specs (`burnqed_core.loop.stages`).

A spec becomes one asset: partitioned by iteration or shared, its graph edges (`Input.edge`), the ``gpu``
pool and op tags when it needs a GPU, and what the UI calls and shows of it (`burnqed_pipeline.vocabulary`).
Its code version is the spec's (`burnqed_core.code_graph`): the UI marks a materialisation made by other code
stale. Its body resolves the spec's inputs (a missing one fails naming the partition to materialise),
fingerprints them with the settings and the code, runs the stage under its marker (skipped when nothing it
depends on changed: `burnqed_core.loop.markers`) and shows the `StageResult` with which partitions it read;
the materialisation's data version is the fingerprint with the digests of the files the stage read. A
sharded spec becomes a graph asset: a split step (the plan: theorems cut into shards), one mapped step per
shard, and a merge step that materialises the asset. Every step takes the run's resources as typed parameters
(`Services`: `burnqed_pipeline.resources`); what a stage shows besides its result comes from its vocabulary's
extras (`burnqed_pipeline.extras`): the factory knows no stage by name.
"""

# No ``from __future__ import annotations`` here nor in burnqed_pipeline/resources/: Dagster reads the bodies'
# and the resources' annotations as objects to find their typed resources and resource dependencies.

import contextlib
import datetime as dt
import hashlib
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_core.errors import BurnqedError
from burnqed_core.loop import shards
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.markers import run_stage, run_stage_async
from burnqed_core.loop.shards import ShardResult, ShardSpec
from burnqed_core.loop.spec import Resolved, StageContext, StageSpec, me, resolve
from burnqed_core.loop.spec import context as make_context
from burnqed_core.loop.stages import BY_NAME
from burnqed_core.loop.stages.nightly_eval import report_day
from burnqed_core.records import StageResult
from burnqed_pipeline.defs.automation import EVAL_REPORT_CONDITION
from burnqed_pipeline.defs.jobs import NIGHTLY_DATE_TAG
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.extras import Finished, extras
from burnqed_pipeline.ordering import wait_for_earlier_iterations
from burnqed_pipeline.resources import EventLoopResource, LeanPoolResource, PolicyResource, ProfileResource
from burnqed_pipeline.stage import (
    first_served,
    logs_to,
    progress,
    refuse_if_interrupted,
    result,
    searched_progress,
    shard_workers,
    stops_the_run,
    training_progress,
    worker_name,
)
from burnqed_pipeline.vocabulary import style

RESOURCES = ("profile", "event_loop", "lean", "policy")
"""The resource keys every stage's steps take (typed parameters of their bodies)."""
# A shard step is resumable (its flushed parts stay): a failed attempt, or one whose Celery worker was lost
# (`burnqed_pipeline.celery_executor`), is sent again, to any worker, and continues where it stopped.
SHARD_RETRY = dg.RetryPolicy(max_retries=2, delay=1.0)

PRIORITY_TAG = "dagster/priority"  # Dagster orders the steps ready in a run by this op tag (default 0)
# dagster-celery reads only its own tag (default: its app's task_default_priority) and hands it to the broker,
# whose order it is: RabbitMQ takes higher first, Redis (burnqed deploy celery) lower first. So a stage's
# priority leaves the Celery tag at the default, said explicitly (else dagster-celery warns on every run).
CELERY_PRIORITY_TAG = "dagster-celery/priority"
CELERY_DEFAULT_PRIORITY = 5  # dagster_celery.defaults.task_default_priority (dagster-celery is optional here)


def _first_of_iteration(spec: StageSpec[Any]) -> bool:
    """The stage that starts an iteration (no input of the same iteration) and reads earlier ones: under a
    backfill it waits for the runs of earlier iterations (`burnqed_pipeline.ordering`)."""
    return (spec.partitioned and spec.earlier is not None
            and not any(BY_NAME[i.asset].partitioned for i in spec.inputs))


def _day(context: Any, timezone: str) -> str:
    day = context.run.tags.get(NIGHTLY_DATE_TAG) or report_day(timezone)
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise BurnqedError(f"run tag {NIGHTLY_DATE_TAG}={day!r}: expected a date YYYY-MM-DD") from None
    return day


@dataclass(frozen=True)
class Services:
    """The resources a stage's step runs with."""

    profile: ProfileResource
    event_loop: EventLoopResource
    lean: LeanPoolResource
    policy: PolicyResource


def stage_context(context: Any, spec: StageSpec[Any], sv: Services) -> tuple[Resolved, StageContext[Any]]:
    """The spec's inputs resolved for this partition and the context its functions receive."""
    refuse_if_interrupted(context)
    profile = sv.profile.load()
    layout = BaseLayout(root=Path(profile.paths.work_dir))
    n = partition_iteration(context) if spec.partitioned else None
    day = _day(context, profile.nightly.timezone) if spec.dated else None
    if n is not None and _first_of_iteration(spec):
        wait_for_earlier_iterations(context, layout, n, me(spec, n))
    res = resolve(spec, BY_NAME, profile, layout, n, day)

    async def lean() -> Any:
        return await sv.lean.env(profile.lean)

    async def policy(model: Path, iteration: int) -> Any:
        return await sv.policy.policy(profile, model, iteration)

    return res, make_context(spec, profile, layout, n, res, lean=lean, policy=policy, day=day)


def _progress(context: Any, spec: StageSpec[Any], out: Path) -> contextlib.AbstractContextManager[None]:
    if style(spec.name).progress == "training":
        return progress(context, training_progress(out))
    return contextlib.nullcontext()


def stage_extras(spec: StageSpec[Any], ctx: StageContext[Any], res: StageResult) -> dict[str, Any]:
    """The metadata a stage's style asks for besides its result (`burnqed_pipeline.extras`)."""
    st = style(spec.name)
    return extras(st.extras, Finished(title=st.title(spec.name, ctx.n), out=ctx.out, result=res))


def data_version(res: StageResult) -> dg.DataVersion:
    """The materialisation's data version: its fingerprint (settings, code, inputs) and the files it read."""
    payload = json.dumps({"fingerprint": res.fingerprint, "reads": res.reads}, sort_keys=True)
    return dg.DataVersion(hashlib.sha256(payload.encode()).hexdigest()[:16])


def _run(ctx: StageContext[Any], fp: str, loop: EventLoopResource) -> StageResult:
    run = ctx.spec.run
    assert run is not None
    if inspect.iscoroutinefunction(run):
        return loop.run(run_stage_async(ctx.out, fp, lambda: run(ctx)))  # type: ignore[no-any-return]
    return run_stage(ctx.out, fp, lambda: run(ctx))  # type: ignore[arg-type,return-value]


def _asset_args(spec: StageSpec[Any]) -> dict[str, Any]:
    st = style(spec.name)
    args: dict[str, Any] = {"group_name": st.group, "kinds": set(st.kinds), "description": spec.doc,
                            "code_version": spec.code_version}
    if spec.partitioned:
        args["partitions_def"] = iterations
    if st.eager:
        args["automation_condition"] = EVAL_REPORT_CONDITION
    return args


def _edges(spec: StageSpec[Any]) -> list[str]:
    return [i.asset for i in spec.inputs if i.edge]


def op_tags(spec: StageSpec[Any], gpu: bool = True, priority: int | None = None) -> dict[str, Any]:
    """A step's tags: GPU placement (`GPU_OP_TAGS`) on a GPU stage's working steps, and the step priority
    (steps ready together run highest first, in-process and multiprocess; default: the stage's style's) on
    every step of a stage that has one."""
    tags: dict[str, Any] = dict(GPU_OP_TAGS) if gpu and spec.gpu else {}
    priority = style(spec.name).priority if priority is None else priority
    if priority:
        tags[PRIORITY_TAG] = str(priority)
        tags[CELERY_PRIORITY_TAG] = str(CELERY_DEFAULT_PRIORITY)
    return tags


def _materialized(context: Any, out: StageResult, res: Resolved, md: dict[str, Any]) -> dg.MaterializeResult:
    return result(context, out, res.used, md, data_version=data_version(out))


def stage_asset(spec: StageSpec[Any]) -> dg.AssetsDefinition:
    """One asset for a spec that runs in one step."""

    def body(context: dg.AssetExecutionContext, profile: ProfileResource, event_loop: EventLoopResource,
             lean: LeanPoolResource, policy: PolicyResource) -> dg.MaterializeResult:
        sv = Services(profile, event_loop, lean, policy)
        res, ctx = stage_context(context, spec, sv)
        with logs_to(context), _progress(context, spec, ctx.out):
            out = _run(ctx, res.fingerprint, event_loop)
        return _materialized(context, out, res, stage_extras(spec, ctx, out))

    return dg.asset(name=spec.name, deps=_edges(spec), op_tags=op_tags(spec), pool=GPU_POOL if spec.gpu else None,
                    **_asset_args(spec))(body)


def _shard_step(context: Any, spec: StageSpec[Any], shard: ShardSpec, sv: Services) -> ShardResult:
    """Run one shard in a step: its log lines and progress go to the step, and one line says whether it
    was computed or read back."""
    assert spec.shards is not None
    _res, ctx = stage_context(context, spec, sv)
    work = shards.partial_dir(Path(shard.stage_dir), shard.index)

    async def compute(path: Path) -> StageResult:
        return await spec.shards.shard(ctx, shard.theorems, path)  # type: ignore[union-attr]

    with logs_to(context), progress(context, searched_progress(work, len(shard.theorems))):
        out = sv.event_loop.run(shards.run_shard(shard, compute))
    out = out.model_copy(update={"worker": worker_name()})
    how = "finished earlier, read back" if out.skipped else f"{style(spec.name).shard_verb} in {out.seconds:.1f} s"
    context.log.info(f"{spec.name}[{shard.iteration}] shard {shard.index + 1}/{shard.count}: {how} on {out.worker}")
    return out


def _merge_op(spec: StageSpec[Any]) -> dg.OpDefinition:
    """The merge step of a sharded spec: runs a shard that never ran (a re-execution from failure skips mapped
    steps that never started), merges the shards and materialises the asset."""
    sh = spec.shards
    assert sh is not None

    @dg.op(name=f"merge_{spec.name}", tags=op_tags(spec, gpu=False))
    def merge(context: dg.OpExecutionContext, results: list[ShardResult], profile: ProfileResource,
              event_loop: EventLoopResource, lean: LeanPoolResource, policy: PolicyResource) -> dg.MaterializeResult:
        sv = Services(profile, event_loop, lean, policy)
        res, ctx = stage_context(context, spec, sv)
        if not shards.stage_done(ctx.out):
            for missing in shards.missing(ctx.out, res.fingerprint, results):
                context.log.warning(f"{me(spec, ctx.n)} shard {missing.index + 1}/{missing.count} did not run in "
                                    "this run (a re-execution from failure skips mapped steps that never "
                                    "started): running it")
                results = [*results, _shard_step(context, spec, missing, sv)]

        def finish() -> StageResult:
            out = sh.merge(ctx, shards.gather(ctx.out, res.fingerprint, results))
            return out.model_copy(update={"seconds": round(sum(r.seconds for r in results), 1),
                                          "metrics": {**out.metrics, "served": first_served(results)}})

        with logs_to(context):
            out = shards.finish_stage(ctx.out, res.fingerprint, finish)
        plan = shards.read_plan(ctx.out)
        md = stage_extras(spec, ctx, out)  # the stage's own view first, then how it was sharded
        md.setdefault("theorems", len(plan.theorems) if plan else 0)
        md |= {"shards": len(results), **shard_workers(results)}
        return _materialized(context, out, res, md)

    return merge


def sharded_asset(spec: StageSpec[Any]) -> dg.AssetsDefinition:
    """A graph asset for a sharded spec: split, one mapped step per shard, merge."""
    assert spec.shards is not None
    sh = spec.shards
    edges = _edges(spec)
    merge = _merge_op(spec)

    @dg.op(name=f"split_{spec.name}", ins={k: dg.In(dg.Nothing) for k in edges}, out=dg.DynamicOut(ShardSpec),
           tags=op_tags(spec, gpu=False))
    def split(context: dg.OpExecutionContext, profile: ProfileResource, event_loop: EventLoopResource,
              lean: LeanPoolResource, policy: PolicyResource) -> Any:
        res, ctx = stage_context(context, spec, Services(profile, event_loop, lean, policy))
        with logs_to(context):
            planned, saved = shards.plan(spec.name, ctx.iteration, ctx.out, res.fingerprint, lambda: sh.select(ctx),
                                         sh.size(profile.load()))
            if saved is None and sh.prepare is not None:
                event_loop.run(sh.prepare(ctx))
        theorems = sum(len(s.theorems) for s in planned)
        context.log.info(f"{me(spec, ctx.n)}: {theorems} theorems in {len(planned)} shard(s)"
                         f"{' (finished earlier: every shard is read back)' if saved else ''}")
        for s in planned:
            yield dg.DynamicOutput(s, mapping_key=s.key)

    @dg.op(name=f"{spec.name}_shard", retry_policy=SHARD_RETRY, tags=op_tags(spec), pool=GPU_POOL if spec.gpu else None)
    def shard_op(context: dg.OpExecutionContext, shard: ShardSpec, profile: ProfileResource,
                 event_loop: EventLoopResource, lean: LeanPoolResource,
                 policy: PolicyResource) -> dg.Output[ShardResult]:
        with stops_the_run(context):  # not retried when a signal stops the command
            out = _shard_step(context, spec, shard, Services(profile, event_loop, lean, policy))
        return dg.Output(out, metadata={"worker": out.worker or "", "skipped": out.skipped, "seconds": out.seconds,
                                        "theorems": len(out.theorems)})

    def compose(**ins: Any) -> Any:
        return merge(split(**ins).map(shard_op).collect())

    compose.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in edges])
    return dg.graph_asset(name=spec.name, ins={k: dg.AssetIn(dagster_type=dg.Nothing) for k in edges},
                          **_asset_args(spec))(compose)


def build(spec: StageSpec[Any]) -> dg.AssetsDefinition:
    return sharded_asset(spec) if spec.shards is not None else stage_asset(spec)
