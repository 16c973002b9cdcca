"""One evaluation plan (`EvalPlan`: sets x theorems x output folders) and the only code that runs the eval steps.

Every evaluation builds a plan and hands it to the functions here: ``burnqed eval`` (one set, `plan_set`), the
``eval_report`` and ``nightly_eval`` stages (the profile's sets, `plan_sets`) and the EBM ablation on
exercises (`burnqed_core.loop.exercises`). A plan runs in one process (`run`: prepare, search every theorem,
finish) or over shards (`prepare`, `search` per shard, `merge`: the stages of the pipeline); both end in the
same `burnqed_core.eval.steps.eval_finish` over the same rows, so they write the same report. Nothing else
calls the steps of `burnqed_core.eval.steps` (`tests/core/eval/test_plan.py` checks it).

The eval reads `burnqed_core.eval.settings.EvalSettings`: the eval, search, policy and Lean sections, the
benchmark and the corpus it is checked against, where the baselines are cached, and what the searches' run
records name.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.errors import DataError
from burnqed_core.eval import steps
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.eval.steps import set_slug
from burnqed_core.lean.types import ProofEnv
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)

PLAN_FILE = "_eval_plan.json"
SETS_DIR = "sets"


class EvalSet(BaseModel):
    """One theorem set of a plan: its name (the rows' benchmark), its theorems and its folder."""

    model_config = ConfigDict(frozen=True)
    spec: str = Field(description="the set's name in the rows and reports ('bundled:test', a path, ...)")
    theorems: list[Theorem]
    out: Path = Field(description="the set's eval folder")
    held_out: bool = Field(True, description="a held-out set: no twin of a corpus theorem allowed (exercises are "
                                             "corpus theorems: not held out)")
    shipped: Path | None = Field(None, description="where baseline files shipped with the set may be read")
    earlier: list[Path] = Field(default_factory=list, description="this set's evals of earlier iterations, for "
                                "'newly solved'")
    twins: dict[str, str] = Field(default_factory=dict, description="theorems of the set left out of its "
                                  "headline: twins of corpus theorems, with their twins (`check`)")


class EvalPlan(BaseModel):
    """Sets x theorems x output folders, with the model evaluated and what it was trained on."""

    model_config = ConfigDict(frozen=True)
    iteration: int
    out: Path = Field(description="the plan's folder: the first set's folder, the combined report")
    sets: list[EvalSet]
    model: Path | None = Field(None, description="the policy's model (none for a policy without one)")
    ebm: Path | None = None
    premises: Path | None = Field(None, description="the premise_index folder the search's premise steps "
                                  "retrieve from (``search.premises.enabled``)")
    premise_reranker: Path | None = Field(None, description="a premise_reranker folder: when it holds a "
                                          "re-ranker, the retrieval of the prover and of baseline (c) with "
                                          "retrieval is re-ranked by it, on the policy's encoder")
    training_pairs: list[Path] = Field(default_factory=list, description="files or prepared-pairs folders the "
                                       "model was trained on: a theorem of a held-out set in them is an error")

    def theorems(self) -> list[Theorem]:
        return [t for s in self.sets for t in s.theorems]

    def work(self, es: EvalSet, work: Path) -> Path:
        """Where set ``es`` writes inside a shard's work folder (the same layout as the plan's folder)."""
        return work / es.out.relative_to(self.out)

    def save(self) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        return atomic_write_text(self.out / PLAN_FILE, self.model_dump_json(indent=1))


def set_out(out_dir: Path, benchmark: str, spec: str) -> Path:
    """Where the eval of set ``spec`` lives in an eval folder whose first set is ``benchmark``: the folder
    itself for it (what `burnqed compare`, the go/no-go and every earlier reader use), ``sets/<slug>/`` for
    the others."""
    return out_dir if spec == benchmark else out_dir / SETS_DIR / set_slug(spec)


def set_specs(settings: EvalSettings, extra: Sequence[str] = ()) -> list[str]:
    """The sets an eval reports: ``data.benchmark`` first, then ``eval.also``, then ``extra`` (repeats dropped,
    order kept)."""
    return list(dict.fromkeys([settings.data.benchmark, *settings.eval.also, *extra]))


def _cut(settings: EvalSettings, theorems: list[Theorem]) -> list[Theorem]:
    if settings.eval.max_theorems is not None:
        return sorted(theorems, key=lambda t: t.name)[: settings.eval.max_theorems]
    return theorems


def set_theorems(settings: EvalSettings, extra: Sequence[str] = ()) -> dict[str, list[Theorem]]:
    """Every set the eval reports (`set_specs`): ``data.benchmark`` its ``eval.sample`` when set, each of
    ``eval.also`` its ``eval.also_sample`` when set (fixed samples spread over the families), each cut to
    ``eval.max_theorems``. A theorem name in two sets is an error naming both (the eval's rows are
    keyed by theorem)."""
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.data.theorems.sampling import stratified_sample

    out: dict[str, list[Theorem]] = {}
    where: dict[str, str] = {}
    for spec in set_specs(settings, extra):
        theorems = load_theorems(spec)
        if spec in settings.eval.also and spec != settings.data.benchmark and settings.eval.also_sample is not None:
            theorems = stratified_sample(theorems, settings.eval.also_sample)
        if spec == settings.data.benchmark and settings.eval.sample is not None:
            theorems = stratified_sample(theorems, settings.eval.sample)
        theorems = _cut(settings, theorems)
        if not theorems:
            raise DataError(f"eval set {spec}: no theorems")
        for t in theorems:
            if t.name in where:
                raise DataError(f"theorem {t.name!r} is in two eval sets ({where[t.name]} and {spec}): rename "
                                "one or drop the set from eval.also")
            where[t.name] = spec
        out[spec] = theorems
    return out


def plan_sets(settings: EvalSettings, iteration: int, out: Path, model: Path | None, *, ebm: Path | None = None,
              training_pairs: Sequence[Path] = (), earlier: Sequence[Path] = (), extra: Sequence[str] = (),
              premises: Path | None = None, premise_reranker: Path | None = None) -> EvalPlan:
    """The profile's eval (`set_theorems`: the benchmark, ``eval.also``, ``extra``) into ``out``; ``earlier``:
    the eval folders of earlier iterations (each set's own under them)."""
    from burnqed_core.data.theorems.load import set_dir

    bench = settings.data.benchmark
    sets = [EvalSet(spec=spec, theorems=theorems, out=set_out(out, bench, spec), shipped=set_dir(spec),
                    earlier=[set_out(e, bench, spec) for e in earlier])
            for spec, theorems in set_theorems(settings, extra).items()]
    return EvalPlan(iteration=iteration, out=out, sets=sets, model=model, ebm=ebm, premises=premises,
                    premise_reranker=premise_reranker, training_pairs=list(training_pairs))


def plan_set(spec: str, theorems: Sequence[Theorem], iteration: int, out: Path, model: Path | None, *,
             ebm: Path | None = None, training_pairs: Sequence[Path] = (), held_out: bool = True,
             shipped: Path | None = None) -> EvalPlan:
    """A plan of one set (``burnqed eval``, the exercise ablation)."""
    return EvalPlan(iteration=iteration, out=out, model=model, ebm=ebm, training_pairs=list(training_pairs),
                    sets=[EvalSet(spec=spec, theorems=list(theorems), out=out, held_out=held_out, shipped=shipped)])


def on_set(settings: EvalSettings, spec: str) -> EvalSettings:
    """``settings`` with ``spec`` as the benchmark (what the eval of one set reads: the rows' benchmark name)."""
    return settings.model_copy(update={"data": settings.data.model_copy(update={"benchmark": spec})})


def _earlier_solved(es: EvalSet) -> set[str] | None:
    from burnqed_core.eval.run import earlier_solved

    return earlier_solved(es.earlier) if es.earlier else None


def check(settings: EvalSettings, plan: EvalPlan) -> EvalPlan:
    """The checks that need no Lean, per set (`burnqed_core.eval.steps.check_before_lean`): none of its theorems
    in the training pairs by name (else an error), and the plan with a held-out set's twins of corpus theorems
    left out of its theorems, recorded in `EvalSet.twins` (reported apart, never a refusal of the set)."""
    sets = []
    for es in plan.sets:
        twins = steps.check_before_lean(on_set(settings, es.spec), plan.iteration, es.spec, es.theorems,
                                        plan.training_pairs, held_out=es.held_out)
        if twins:
            log.warning("%s: %d theorem(s) are twins of corpus theorems: left out of the headline, reported apart "
                        "(%s)", es.spec, len(twins), ", ".join(list(twins)[:5]))
        kept = [t for t in es.theorems if t.name not in twins]
        if not kept and es.theorems:
            shown = "; ".join(f"{name} is {why}" for name, why in list(twins.items())[:5])
            raise DataError(f"{es.spec}: every theorem is a twin of a corpus theorem ({shown}); nothing to evaluate")
        sets.append(es.model_copy(update={"theorems": kept, "twins": {**es.twins, **twins}}))
    return plan.model_copy(update={"sets": sets})


def reranked(settings: EvalSettings, plan: EvalPlan) -> bool:
    """Whether the plan's premise retrieval is re-ranked (premise steps on, and a re-ranker in the plan's
    ``premise_reranker`` folder): its searches then need the policy's encoder."""
    from burnqed_core.premises.rerank import has_reranker

    return settings.search.premises.enabled and has_reranker(plan.premise_reranker)


def premise_index(settings: EvalSettings, plan: EvalPlan, policy: Any = None) -> Any:
    """The premise index of the plan's searches (`burnqed_core.premises.library.load_index` of its
    ``premises`` folder) when the search has premise steps, else None; re-ranked on ``policy``'s encoder when the
    plan has a re-ranker (`reranked`; then ``policy`` is required)."""
    if not settings.search.premises.enabled:
        return None
    from burnqed_core.premises.library import load_index
    from burnqed_core.search.job import rerank_premises

    if plan.premises is None:
        raise DataError("search.premises.enabled: the eval needs the premise index (the premise_index stage's "
                        "folder)")
    if reranked(settings, plan) and policy is None:
        raise DataError(f"the eval's premise retrieval is re-ranked by {plan.premise_reranker}: it needs the "
                        "policy's encoder")
    return rerank_premises(load_index(plan.premises), plan.premise_reranker, policy, plan.model)


async def prepare(settings: EvalSettings, plan: EvalPlan, env: Callable[[], Awaitable[ProofEnv]],
                  progress: bool = True, checked: bool = False,
                  policy: Callable[[], Awaitable[Any]] | None = None) -> None:
    """Before any search: `check` (unless ``checked``: done already), then per set both automation baselines
    and baseline (c), saved in the set's folder for every shard to read
    (`burnqed_core.eval.steps.prepare_set`). ``policy()``: the policy, asked for only when baseline (c) with
    retrieval is measured with a re-ranked retrieval (its encoder re-ranks)."""
    plan.save()
    if not checked:
        # The loop's sets (the package's own) hold no twin of the corpus: one is an error here, where the plan's
        # shards could not leave it out. `run` (a user's file) checks first and leaves twins out instead.
        left = {es.spec: es.twins for es in check(settings, plan).sets if es.twins}
        if left:
            from burnqed_core.eval.hygiene import HeldOutLeakError

            raise HeldOutLeakError("; ".join(f"{spec}: {name} is {why}" for spec, ts in left.items()
                                             for name, why in list(ts.items())[:5]))
    # the index serves baseline (c) with retrieval alone here: a re-ranked one needs the policy's encoder then only
    index = None
    if not reranked(settings, plan):
        index = premise_index(settings, plan)
    elif settings.eval.structural_baseline:
        if policy is None:
            raise DataError(f"baseline (c) with retrieval is re-ranked by {plan.premise_reranker}: the eval's "
                            "preparation needs the policy's encoder")
        index = premise_index(settings, plan, await policy())
    for es in plan.sets:
        baselines = await steps.prepare_set(on_set(settings, es.spec), env, es.theorems, es.shipped, progress=progress,
                                            premises=index)
        steps.save_baselines(es.out, baselines)


async def search(settings: EvalSettings, plan: EvalPlan, policy: Any, env: ProofEnv, theorems: Sequence[Theorem],
                 work: Path, progress: bool = True) -> StageResult:
    """The searches of ``theorems`` (some of the plan's) into ``work`` (the plan's folder, or a shard's), each
    set's part in its place (`EvalPlan.work`)."""
    mine = {t.name for t in theorems}
    results: list[StageResult] = []
    index = premise_index(settings, plan, policy)
    for es in plan.sets:
        part = [t for t in es.theorems if t.name in mine]
        if part:
            results.append(await steps.eval_search(
                on_set(settings, es.spec), plan.iteration, policy, env, part, steps.load_baselines(es.out),
                plan.work(es, work), plan.model, ebm_dir=plan.ebm, progress=progress, premises=index))
    metrics = {k: sum(r.metrics[k] for r in results) for k in ("theorems", "rows", "proved")}
    return StageResult(stage="eval_search", iteration=plan.iteration, path=str(work),
                       summary="; ".join(r.summary for r in results), metrics=metrics)


def merge(settings: EvalSettings, plan: EvalPlan, shard_dirs: Sequence[Path]) -> StageResult:
    """The plan's eval from its finished shards' folders: each set's rows merged into its folder, then
    finished (summary, report, plot), and the sets' reports combined in the plan's folder."""
    results = []
    for es in plan.sets:
        dirs = [d for d in (plan.work(es, s) for s in shard_dirs) if steps.has_results(d)]
        results.append(steps.merge_eval(
            on_set(settings, es.spec), plan.iteration, es.theorems, steps.load_baselines(es.out), dirs, es.out,
            earlier_solved=_earlier_solved(es), ebm_dir=plan.ebm, training_pairs=plan.training_pairs))
    return steps.combine_sets(plan.out, [s.spec for s in plan.sets], results)


def finish(settings: EvalSettings, plan: EvalPlan) -> StageResult:
    """The plan's eval after its searches ran in its own folder (`run`): each set finished, then combined."""
    results = [steps.eval_finish(on_set(settings, es.spec), plan.iteration, es.theorems,
                                 steps.load_baselines(es.out), es.out, earlier_solved=_earlier_solved(es),
                                 ebm_dir=plan.ebm, training_pairs=plan.training_pairs, twins=es.twins)
               for es in plan.sets]
    return steps.combine_sets(plan.out, [s.spec for s in plan.sets], results)


async def run(settings: EvalSettings, plan: EvalPlan, policy: Any, env: Callable[[], Awaitable[ProofEnv]],
              progress: bool = True, checked: bool = False) -> StageResult:
    """The plan in this process: `prepare`, one search of every theorem into the plan's folder (resumable),
    `finish`. ``env`` is called once Lean is needed (after the checks that need none)."""
    if not checked:
        plan = check(settings, plan)

    async def given() -> Any:
        return policy

    await prepare(settings, plan, env, progress=progress, checked=True, policy=given)
    await search(settings, plan, policy, await env(), plan.theorems(), plan.out, progress=progress)
    return finish(settings, plan)
