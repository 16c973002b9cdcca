"""``premise_reranker``: iteration N's learned premise re-ranker (`burnqed_core.premises.rerank`): a projection of
merged_model[N]'s own embeddings, trained on the (state, premise) pairs of the found proofs of iterations < N,
that re-orders the BM25 candidates of iteration N's searches (the trajectories' and the eval's, baseline (c)
with retrieval's included). None at iteration 0, with ``premises.rerank.enabled`` off, or when no step of a found
proof names a premise its theorem may cite, or when on its validation pairs it recalls less than BM25
(``premises.rerank.require_gain``): the searches then retrieve by BM25 alone."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import DataConfig, EvalConfig, PremisesConfig, RerankConfig
from burnqed_core.errors import DataError
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)


class Premises(Projection):
    SOURCE = PremisesConfig
    rerank: RerankConfig


class Data(Projection):
    """Where the searched theorems come from (their modules: the premise rule), and the held-out sets whose
    module families the index of the loop's searches leaves out."""

    SOURCE = DataConfig
    corpus: str
    exclude_families: list[str]
    benchmark: str
    search_pool: str | None


class Eval(Projection):
    SOURCE = EvalConfig
    also: list[str]


class Settings(StageSettings):
    premises: Premises
    data: Data
    eval: Eval


def searched_theorems(settings: Settings) -> dict[str, Theorem]:
    """The theorems the loop's searches draw from (``data.search_pool``, else the corpus), by name."""
    from burnqed_core.data.theorems.load import corpus_theorems, load_theorems

    d = settings.data
    theorems = load_theorems(d.search_pool) if d.search_pool is not None else corpus_theorems(settings)  # type: ignore[arg-type]
    return {t.name: t for t in theorems}


def _metrics(report: Any) -> dict[str, Any]:
    """The training report flat, recall@k as ``<side>_recall@k_bm25`` / ``_reranked`` (what the UI lists)."""
    out: dict[str, Any] = {"trained": True}
    out.update(report.model_dump(mode="json", exclude={"train", "val"}))
    for side in ("train", "val"):
        figures = getattr(report, side)
        if figures is None:
            continue
        for k in figures.before:
            out[f"{side}_recall@{k}_bm25"] = round(figures.before[k], 4)
            out[f"{side}_recall@{k}_reranked"] = round(figures.after[k], 4)
    return out


async def premise_reranker(settings: Settings, iteration: int, trajectories: Sequence[Path], index_dir: Path,
                           model: Path, out_dir: Path, encoder: Callable[[], Awaitable[Any]]) -> StageResult:
    """Train the re-ranker on the found proofs in ``trajectories`` (iterations < N) over the premise index in
    ``index_dir`` less the held-out module families (the index of the loop's searches), with the encoder
    ``encoder()`` gives (the policy of ``model``, merged_model[N]; asked for only when there is something to
    train on)."""
    from burnqed_core.ebm.embeddings import policy_fingerprint
    from burnqed_core.loop.corpus import held_out_families
    from burnqed_core.premises.library import load_index
    from burnqed_core.premises.rerank import premise_pairs, train_reranker
    from burnqed_core.trajectory_io import read_trajectories

    def none(why: str) -> StageResult:
        return StageResult(stage="premise_reranker", iteration=iteration, path=str(out_dir),
                           summary=f"no re-ranker: {why}", metrics={"trained": False, "reason": why})

    cfg = settings.premises.rerank
    if not cfg.enabled:
        return none("premises.rerank.enabled is false")
    if iteration == 0 or not trajectories:
        return none("iteration 0 has no found proofs to learn from")
    d = settings.data
    index = load_index(index_dir).without_families(held_out_families(d.benchmark, settings.eval.also,
                                                                     d.search_pool))
    records = [r for t in trajectories for r in read_trajectories(t)]
    pairs = premise_pairs(records, searched_theorems(settings), index)
    if not pairs:
        return none("no step of a found proof names a premise its theorem may cite")
    policy = await encoder()
    try:
        record = await train_reranker(pairs, index, policy, policy_fingerprint(policy, model), cfg, out_dir,
                                      model_path=model)
    except DataError as e:
        log.warning("no premise re-ranker at iteration %d: %s", iteration, e)
        return none(str(e))
    if not record.report.adopted:  # nothing written: the searches keep BM25's order
        log.warning("premise re-ranker of iteration %d not adopted: %s", iteration, record.report.verdict)
    return StageResult(stage="premise_reranker", iteration=iteration, path=str(out_dir),
                       summary=record.report.summary(), metrics=_metrics(record.report))


async def _run(ctx: StageContext[Settings]) -> StageResult:
    model = ctx.input("merged_model")

    async def encoder() -> Any:
        return (await ctx.policy_for(model))[0]

    return await premise_reranker(ctx.settings, ctx.iteration, trajectory_dirs(ctx.earlier_outputs()),
                                  ctx.input("premise_index"), model, ctx.out, encoder)


PREMISE_RERANKER = StageSpec(
    name="premise_reranker", gpu=True, settings=Settings, run=_run, earlier="trajectories",
    inputs=(Input("merged_model"), Input("premise_index")),
    doc="The learned premise re-ranker (weights, encoder fingerprint, pairs, recall@k of BM25 and re-ranked on "
        "train and validation pairs): merged_model[N]'s embeddings projected, trained on the (state, premise) "
        "pairs of the found proofs of iterations < N; none at iteration 0 or with premises.rerank off.",
)
