"""The steps of an evaluation: the checks before Lean and the baselines of a set (`prepare_set`), the searches of
some theorems (`eval_search`), the finish of a set (held-out check by root goal, summary, report, plot:
`eval_finish`), the merge of a sharded set's rows first (`merge_eval`), and one report over the sets
(`combine_sets`). Only `burnqed_core.eval.plan` calls them: every evaluation is an `EvalPlan` run there.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from burnqed_core.errors import DataError
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.lean.types import ProofEnv
from burnqed_core.record_io import atomic_write_text, write_parquet
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)

BASELINES_FILE = "_baselines.json"


def set_slug(spec: str) -> str:
    """A folder name for a theorem-set spec (``bundled:handwritten`` -> ``bundled_handwritten``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_") or "benchmark"


def has_results(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds eval rows (a finished `eval_search`)."""
    from burnqed_core.eval.run import RESULTS_FILE

    return (out_dir / RESULTS_FILE).is_file()


def corpus_twins(settings: EvalSettings, spec: str, theorems: Sequence[Theorem]) -> dict[str, str]:
    """The theorems of ``theorems`` (set ``spec``) that are twins or strong near-twins of theorems of the corpus
    the loop trains on (``data.corpus`` less ``data.exclude_families``; the same theorem up to renaming and
    numerals, the same proof skeleton, or the same up to binder style and order and isomorphic definitions:
    `burnqed_core.eval.hygiene.find_twins`), by name, with their twins: an eval on them would measure memory,
    not proving, so they are left out of the set's headline and reported apart. An excluded family is never
    traced, trained on or searched, so its theorems may be evaluated (the folds of ``burnqed transfer``). A
    corpus traced from a repository (``data.trace_repo``) has no statements to compare: a warning."""
    from burnqed_core.data.theorems.load import corpus_theorems
    from burnqed_core.eval.hygiene import find_twins

    if settings.data.trace_repo:
        log.warning("corpus traced from %s: no statements to check %s against for twins", settings.data.trace_repo,
                    spec)
        return {}
    return find_twins(theorems, corpus_theorems(settings))


def _eval_ebm(ebm_dir: Path | None) -> Path | None:
    from burnqed_core.ebm.train import has_ebm

    if ebm_dir is not None and not has_ebm(ebm_dir):
        log.info("eval_report: no trained EBM in %s (iteration 0 trains none): policy-only eval", ebm_dir)
        return None
    return ebm_dir


def check_before_lean(settings: EvalSettings, iteration: int, spec: str, theorems: Sequence[Theorem],
                      training_pairs: Sequence[Path], *, held_out: bool = True) -> dict[str, str]:
    """The checks of set ``spec`` that need no Lean: none of its theorems is in ``training_pairs`` by name (a
    `HeldOutLeakError`); and, for a held-out set, its twins of corpus theorems (`corpus_twins`), returned: the
    eval leaves them out of the headline and reports them apart."""
    from burnqed_core.eval.hygiene import check_training_pairs, load_training_pairs

    pairs = load_training_pairs(training_pairs) if training_pairs else []
    if pairs:  # by name, before any search
        check_training_pairs(theorems, pairs, where=f"training pairs of iteration {iteration}")
    return corpus_twins(settings, spec, theorems) if held_out else {}


TWINS_FILE = "twins.json"


def report_twins(out_dir: Path, twins: dict[str, str]) -> None:
    """The set's theorems left out as twins of corpus theorems: ``twins.json`` and a section of ``report.md``
    (after the headline it does not count in)."""
    import json

    from burnqed_core.eval.report import REPORT_FILE

    if not twins:
        return
    atomic_write_text(out_dir / TWINS_FILE, json.dumps(twins, indent=2, ensure_ascii=False) + "\n")
    md = out_dir / REPORT_FILE
    lines = [f"\n## Left out of the headline: {len(twins)} twin(s) of corpus theorems\n",
             "Theorems of this set that are corpus theorems up to renaming, numerals, binder style and order or "
             "isomorphic definitions: an eval on them would measure memory, not proving. They were not searched "
             "and count in no figure above.\n"]
    lines += [f"- `{name}`: {why}" for name, why in twins.items()]
    atomic_write_text(md, (md.read_text(encoding="utf-8") if md.is_file() else "") + "\n".join(lines) + "\n")


async def prepare_set(settings: EvalSettings, env: Callable[[], Awaitable[ProofEnv]], theorems: Sequence[Theorem],
                      shipped: Path | None, progress: bool = True, premises: Any = None) -> Any:
    """Both automation baselines of a set's ``theorems`` (`Baselines`, measured in the environment ``env()``
    gives, cached per theorem set under ``paths.baselines_dir()``, or read from a file shipped in ``shipped``
    whose key matches) with baseline (c), the same search with no learned policy
    (`burnqed_core.eval.baselines.structural`; ``eval.structural_baseline``), measured or read the same way;
    when the search has premise steps (``search.premises.enabled``), also baseline (c) with retrieval (the same
    search with them, from the premise index ``premises``): the prover must beat the stronger of the two."""
    from burnqed_core.eval.baselines.measure import measure_baselines
    from burnqed_core.eval.baselines.structural import measure_structural
    from burnqed_core.search.job import lean_version

    lean = await env()
    cache, version = settings.paths.baselines_dir(), lean_version(settings, lean)
    baselines = await measure_baselines(lean, theorems, cache, lean_version=version, progress=progress,
                                        tactic_timeout_s=settings.lean.tactic_timeout_s, shipped=shipped)
    if not settings.eval.structural_baseline:
        return baselines
    c = await measure_structural(settings, lean, theorems, cache_dir=cache, shipped=shipped,
                                 lean_version=version, progress=progress)
    update: dict[str, Any] = {"structural": c}
    if settings.search.premises.enabled:
        update["structural_retrieval"] = await measure_structural(
            settings, lean, theorems, cache_dir=cache, shipped=shipped, lean_version=version, progress=progress,
            retrieval=True, premises=premises)
    return baselines.model_copy(update=update)


def save_baselines(out_dir: Path, baselines: Any) -> Path:
    """The baselines an eval's shards share, beside its plan."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(out_dir / BASELINES_FILE, baselines.model_dump_json())


def load_baselines(out_dir: Path) -> Any:
    from burnqed_core.eval.baselines.records import Baselines

    path = out_dir / BASELINES_FILE
    if not path.is_file():
        raise DataError(f"{path}: missing (the eval's split step measures the baselines first)")
    return Baselines.model_validate_json(path.read_text(encoding="utf-8"))


async def eval_search(
    settings: EvalSettings,
    iteration: int,
    policy: Any,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    baselines: Any,
    out_dir: Path,
    model_path: Path,
    ebm_dir: Path | None = None,
    progress: bool = True,
    premises: Any = None,
) -> StageResult:
    """The eval searches of ``theorems`` into ``out_dir`` (`run_eval`: resumable, every proof re-checked),
    for every variant of `burnqed_core.eval.run.variants` (with and without the EBM when ``ebm_dir`` holds
    one; with and without the automation candidates when ``search.automation.enabled``);
    ``out_dir/results.parquet`` holds their rows."""
    from burnqed_core.eval.run import run_variants

    ebm_dir = _eval_ebm(ebm_dir)
    bench_name = settings.data.benchmark
    scorer = None
    if ebm_dir is not None:
        from burnqed_core.search.job import load_scorer

        scorer = load_scorer(Path(ebm_dir), policy)
    rows = await run_variants(settings, policy, env, theorems, out_dir, scorer=scorer, ebm=ebm_dir,
                              iteration=iteration, benchmark=bench_name, baselines=baselines, model_path=model_path,
                              progress=progress, premises=premises)
    n_rows, proved = len(rows), sum(r.proved for r in rows)
    return StageResult(stage="eval_search", iteration=iteration, path=str(out_dir),
                       summary=f"{len(theorems)} theorems: {proved}/{n_rows} rows proved",
                       metrics={"theorems": len(theorems), "rows": n_rows, "proved": proved})


def eval_finish(
    settings: EvalSettings,
    iteration: int,
    benchmark: Sequence[Theorem],
    baselines: Any,
    out_dir: Path,
    earlier_solved: set[str] | None = None,
    ebm_dir: Path | None = None,
    training_pairs: Sequence[Path] = (),
    twins: dict[str, str] | None = None,
) -> StageResult:
    """After the searches: the held-out check by root goal, the summary, ``report.md`` and ``solve_rate.png``;
    ``twins``: the set's theorems left out as twins of corpus theorems (`report_twins`)."""
    from burnqed_core.eval.hygiene import check_training_pairs, load_training_pairs
    from burnqed_core.eval.report import format_table, write_report
    from burnqed_core.eval.run import read_eval_results, root_goals, variant_rows
    from burnqed_core.eval.summary import SummaryOptions, summarize_variants

    ebm_dir = _eval_ebm(ebm_dir)
    pairs = load_training_pairs(training_pairs) if training_pairs else []
    if pairs:  # by root goal as Lean printed it: catches a renamed copy
        check_training_pairs(benchmark, pairs, root_goals(out_dir),
                             where=f"training pairs of iteration {iteration}")
    rows = variant_rows(read_eval_results(out_dir), settings, ebm_dir)
    s = summarize_variants(rows, baselines, SummaryOptions(iteration=iteration, benchmark=settings.data.benchmark,
                           budgets=settings.eval.budgets, earlier_solved=earlier_solved,
                           similarity=corpus_similarity(settings, benchmark)))
    write_report(s, out_dir)
    report_twins(out_dir, twins or {})
    metrics: dict[str, Any] = {
        "corpus_twins_left_out": len(twins or {}),
        "cumulative_rate": s.cumulative.rate, "hard_rate": s.cumulative_hard.rate,
        "automation_baseline": s.automation_baseline.rate, "defaware_baseline": s.defaware_baseline.rate,
        "beyond_automation": s.beyond_count, "hard_by_automation_alone": len(s.automation_only),
        "hard_by_both_steps": len(s.beyond_by_both), "start_errors": s.start_errors,
        **_held_out_metrics(s),
        **_baseline_metrics(s),
        "timeouts": s.timeouts, "pass_k": s.pass_k,
        **{f"rate_at_{b.budget}": b.all.rate for b in s.budgets},
    }
    if s.without_ebm is not None:
        metrics["rate_without_ebm"] = s.without_ebm.cumulative.rate
    metrics["automation_candidates"] = s.automation
    if s.policy_only is not None:  # cumulative_rate above is policy + automation; this is the policy alone
        p = s.policy_only
        metrics |= {"policy_only_rate": p.cumulative.rate, "policy_only_hard_rate": p.cumulative_hard.rate,
                    "policy_only_beyond_automation": p.beyond_count,
                    **{f"policy_only_rate_at_{b.budget}": b.all.rate for b in p.budgets}}
    return StageResult(stage="eval_report", iteration=iteration, path=str(out_dir), summary=format_table(s),
                       metrics=metrics)


def corpus_similarity(settings: EvalSettings, theorems: Sequence[Theorem]) -> Any:
    """The set's nearest-neighbour similarity to the corpus the loop trains on and its near-twins
    (`burnqed_core.data.twins.near_twins.similarity_report`); None for a corpus traced from a repository."""
    from burnqed_core.data.theorems.load import corpus_theorems
    from burnqed_core.data.twins.similarity import similarity_report

    if settings.data.trace_repo:
        return None
    return similarity_report(corpus_theorems(settings), theorems, reference_name=str(settings.data.corpus))


def _held_out_metrics(s: Any) -> dict[str, Any]:
    """The similarity block's medians and the unseen theorems' figures, for the UI."""
    out: dict[str, Any] = {}
    if s.similarity is not None:
        for aspect in ("statement", "definitions", "proof"):
            if (sp := getattr(s.similarity, aspect)) is not None:
                out[f"similarity_{aspect}_median"] = sp.median
        out["near_twins"] = len(s.similarity.with_near_twin())
    if s.unseen is not None:
        out["unseen_theorems"] = len(s.unseen.theorems)
        if s.unseen.pass1_by_cluster is not None:
            out["unseen_pass1_by_cluster"] = s.unseen.pass1_by_cluster.value
    if s.primary is not None:
        out |= {"primary": s.primary.value, "primary_low": s.primary.low, "primary_high": s.primary.high}
    return out


def _baseline_metrics(s: Any) -> dict[str, Any]:
    """Baseline (c) (and with retrieval), the prover's checks per theorem, and the prover against the best of
    (a), (b), (c), (c) with retrieval, all theorems and the hard split."""
    out: dict[str, Any] = {}
    if s.structural_baseline is not None:
        out["structural_baseline"] = s.structural_baseline.rate
    if s.retrieval_baseline is not None:
        out["retrieval_baseline"] = s.retrieval_baseline.rate
    if s.checks_per_theorem is not None:
        out["checks_per_theorem"] = s.checks_per_theorem
    for key, best in (("best_baseline", s.best_baseline), ("best_baseline_hard", s.best_baseline_hard)):
        if best is None:
            continue
        out[key] = best.name
        if best.versus is not None:
            out |= {f"vs_{key}": best.versus.change.value, f"vs_{key}_low": best.versus.change.low,
                    f"vs_{key}_high": best.versus.change.high}
    return out


def merge_eval(
    settings: EvalSettings,
    iteration: int,
    benchmark: Sequence[Theorem],
    baselines: Any,
    shard_dirs: Sequence[Path],
    out_dir: Path,
    earlier_solved: set[str] | None = None,
    ebm_dir: Path | None = None,
    training_pairs: Sequence[Path] = (),
) -> StageResult:
    """The eval of the whole benchmark from its finished shards (each the output of `eval_search` on its
    theorems): their rows in one ``results.parquet`` (a theorem twice is an error), their searches merged
    under ``searches/`` (hard links), then `eval_finish`."""
    from burnqed_core.eval.run import META_FILE, RESULTS_FILE, SEARCHES_DIR, read_eval_results
    from burnqed_core.records import EvalResult
    from burnqed_core.search.merge import merge_search_outputs

    rows: list[EvalResult] = []
    for d in shard_dirs:
        rows.extend(read_eval_results(d))
    keys = [(r.ebm, r.search_automation, r.attempt, r.theorem) for r in rows]
    if len(set(keys)) != len(keys):
        raise DataError(f"{out_dir}: an eval row is in two shards")
    rows.sort(key=lambda r: (r.ebm, r.search_automation, r.attempt, r.theorem))
    searches = sorted({p.relative_to(d) for d in shard_dirs for p in (d / SEARCHES_DIR).glob("*/attempt_*.traj")})
    for rel in searches:
        merge_search_outputs([d / rel for d in shard_dirs], out_dir / rel)
    if shard_dirs and (shard_dirs[0] / META_FILE).is_file():
        atomic_write_text(out_dir / META_FILE, (shard_dirs[0] / META_FILE).read_text(encoding="utf-8"))
    write_parquet(rows, out_dir / RESULTS_FILE, EvalResult)
    res = eval_finish(settings, iteration, benchmark, baselines, out_dir, earlier_solved=earlier_solved,
                      ebm_dir=ebm_dir, training_pairs=training_pairs)
    return res.model_copy(update={"metrics": {**res.metrics, "shards": len(shard_dirs)}})


def combine_sets(out_dir: Path, specs: Sequence[str], results: Sequence[StageResult]) -> StageResult:
    """One eval's result over its sets (the plan's order, the first in ``out_dir``, the others in
    ``out_dir/sets/<slug>``): ``report.md`` in ``out_dir`` holds every set's
    report, the summary every set's table, the metrics the first set's and each other set's under
    ``<slug>_<metric>``."""
    from burnqed_core.eval.report import REPORT_FILE, format_markdown, read_summary

    first = results[0]
    if len(results) == 1:
        return first
    sections, tables, metrics = [], [first.summary], dict(first.metrics)
    for spec, res in zip(specs, results, strict=True):
        sections.append(f"# {spec}\n\n" + format_markdown(read_summary(res.path)))
        if res is not first:
            tables.append(f"{spec}:\n{res.summary}")
            metrics |= {f"{set_slug(spec)}_{k}": v for k, v in res.metrics.items()
                        if isinstance(v, (int, float, str, bool))}
    atomic_write_text(out_dir / REPORT_FILE, "\n\n".join(sections))
    return first.model_copy(update={"summary": "\n\n".join(tables), "metrics": metrics})
