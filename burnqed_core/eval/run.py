"""Evaluate a policy on a benchmark: ONE search per theorem and attempt, at
the largest node budget; every smaller budget is read off it.

For attempt k (of ``eval.pass_k``) the search seed is `attempt_seed` of the
profile's search seed, so the attempts are independent and reproducible; the
per-expansion seeds of the engine make a theorem's search independent of the
other theorems and of a resume. Each attempt's search output
(``<out>/searches/<variant>/attempt_<k>.traj``) resumes where a killed run
stopped. The per-theorem time cap is ``eval.timeout_s`` (a safety cap on the
time charged to the theorem; a theorem stopped by it counts as a timeout).

Variants: with ``search.automation.enabled`` the eval runs the search twice,
policy + automation (the main figures) and the policy alone (rows with
``search_automation`` False), so that what the automation closes is never
mistaken for learning; with an EBM it also runs without the EBM (the
ablation). `run_variants` runs them all; `variant_rows` picks them out.

Every proof that enters the rows is re-checked as a whole theorem by the Lean
environment (`verify_proofs`); a proof that fails is an error, never a solved
theorem. The rows are written to ``<out>/results.parquet``.

Each row carries its theorem's cluster (`EvalResult.cluster`,
`burnqed_core.data.twins.clusters`), computed once per `run_eval` by `eval_clusters`
over the theorems of the whole eval (a shard's theorems with the rest of the
profile's benchmark, so that twins in two shards share a cluster); the
summary resamples clusters for its intervals.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from burnqed_core.config import PremiseStepsConfig, Profile, SearchConfig, StructuralStepsConfig
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.eval.baselines.records import Baselines
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy, derive_seed
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.record_io import atomic_write_text, read_parquet, write_parquet
from burnqed_core.records import EvalResult, Theorem
from burnqed_core.search.engine import resolve_sampling
from burnqed_core.search.scoring import EnergyScorer
from burnqed_core.trajectory_io import list_parts, read_results, read_trajectories

log = logging.getLogger(__name__)

RESULTS_FILE = "results.parquet"
SEARCHES_DIR = "searches"
META_FILE = "eval.json"


class EvalError(BurnqedError):
    """An evaluation cannot be trusted as it stands (wrong proof, unreadable input)."""


class WrongProofError(EvalError):
    """A proof recorded as found fails the whole-theorem re-check."""


def attempt_seed(seed: int, attempt: int) -> int:
    """The search seed of attempt ``attempt`` (attempt 0 uses the profile's seed)."""
    return seed if attempt == 0 else derive_seed("attempt", seed, attempt)


def variant_name(ebm: str | Path | None, automation: bool = False) -> str:
    return ("ebm" if ebm else "policy") + ("_automation" if automation else "")


def attempt_dir(out_dir: Path, variant: str, attempt: int) -> Path:
    return out_dir / SEARCHES_DIR / variant / f"attempt_{attempt}.traj"


async def run_eval(
    profile: Profile,
    policy: Policy,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out_dir: str | Path,
    *,
    iteration: int,
    benchmark: str,
    baselines: Baselines | None = None,
    budgets: Sequence[int] | None = None,
    pass_k: int | None = None,
    model_path: str | Path | None = None,
    scorer: EnergyScorer | None = None,
    ebm: str | Path | None = None,
    automation: bool | None = None,
    progress: bool = True,
    handle_signals: bool = True,
    search: SearchConfig | None = None,
    premises: PremiseIndex | None = None,
) -> list[EvalResult]:
    """Search every theorem ``pass_k`` times at the largest budget; return one
    row per (theorem, attempt) for this variant (with or without ``scorer``;
    with or without the automation candidates: ``automation`` None follows
    ``search.automation.enabled``) and merge them into
    ``<out_dir>/results.parquet`` (rows of the other variants kept). ``search``: the search settings (None: the
    profile's; baseline (c) passes its own), ``premises``: the premise index of its premise steps."""
    from burnqed_core.search.job import search_theorems

    out_dir = Path(out_dir)
    budgets = sorted(set(budgets or profile.eval.budgets))
    top = budgets[-1]
    k = pass_k or profile.eval.pass_k
    base = search or profile.search
    auto = base.automation.enabled if automation is None else automation
    variant = variant_name(ebm if scorer is not None else None, auto)
    sampling = resolve_sampling(profile.search, ebm=scorer is not None, num_candidates=profile.eval.num_candidates,
                                max_new_tokens=profile.policy.max_new_tokens)
    write_meta(out_dir, budgets=budgets, pass_k=k, iteration=iteration, benchmark=benchmark)
    this_ebm = str(ebm or "") if scorer is not None else ""
    cluster_map = eval_clusters(theorems, profile.data.benchmark)
    rows: list[EvalResult] = []
    for attempt in range(k):
        config = _attempt_config(profile, base, top, attempt, auto)
        out = attempt_dir(out_dir, variant, attempt)
        log.info("eval (%s): attempt %d/%d, %d theorems at %d nodes -> %s", variant, attempt + 1, k, len(theorems),
                 top, out)
        report, _ = await search_theorems(
            profile, policy, env, theorems, out, sampling=sampling, config=config, model_path=model_path,
            theorems_source=benchmark, iteration=iteration, scorer=scorer, ebm=ebm, resume=True, progress=progress,
            handle_signals=handle_signals, premises=premises)
        if report.interrupted:
            raise EvalInterrupted(f"interrupted by {report.signal}; rerun with --resume to continue {out_dir}")
        rows.extend(rows_of(out, iteration=iteration, benchmark=benchmark, budget=top, attempt=attempt,
                            seed=config.seed, baselines=baselines, model=str(model_path or ""), ebm=this_ebm,
                            automation=auto, clusters=cluster_map))
    rows.sort(key=lambda r: (r.attempt, r.theorem))
    await verify_proofs(env, theorems, rows)
    _merge_results(out_dir, rows, this_ebm, auto)
    return rows


def _attempt_config(profile: Profile, base: SearchConfig, top: int, attempt: int, auto: bool) -> SearchConfig:
    """The search settings of eval attempt ``attempt``: ``base`` at the largest budget ``top``, with the attempt's
    seed (`attempt_seed`), the eval's time cap and the automation candidates on or off (``auto``); the policy
    alone (``auto`` off) gets none of the search's own candidates (automation, structural, premise)."""
    config = base.model_copy(update={
        "max_nodes": top, "seed": attempt_seed(profile.search.seed, attempt), "timeout_s": profile.eval.timeout_s,
        "automation": base.automation.model_copy(update={"enabled": auto})})
    if not auto:
        config = config.model_copy(update={"structural": StructuralStepsConfig(), "premises": PremiseStepsConfig()})
    return config


def _merge_results(out_dir: Path, rows: list[EvalResult], this_ebm: str, auto: bool) -> None:
    """Write ``rows`` (this variant's) into the results file, the rows of the other variants kept."""
    merged = [r for r in existing_rows(out_dir) if (r.ebm, r.search_automation) != (this_ebm, auto)] + rows
    merged.sort(key=lambda r: (r.ebm, r.search_automation, r.attempt, r.theorem))
    write_parquet(merged, out_dir / RESULTS_FILE, EvalResult)


class EvalInterrupted(EvalError):
    """SIGTERM/SIGINT stopped the eval; what was searched is saved."""


def eval_clusters(theorems: Sequence[Theorem], benchmark: str | Path | None = None) -> dict[str, str]:
    """Theorem name -> cluster (`burnqed_core.data.twins.clusters.clusters`) of the theorems an eval searches.

    A sharded eval searches a part of the benchmark per call; when ``benchmark`` (the profile's benchmark
    spec) loads and holds every one of ``theorems``, the clusters are computed over the whole benchmark (the
    given theorems standing for their names), so that twins in different shards are merged the same way in
    every shard. Otherwise (a benchmark that does not load, theorems not in it) over ``theorems`` alone."""
    from burnqed_core.data.twins.clusters import clusters

    pool = list(theorems)
    if benchmark:
        try:
            from burnqed_core.data.theorems.load import load_theorems

            full = {t.name: t for t in load_theorems(benchmark)}
        except (BurnqedError, OSError, ValueError) as e:
            log.debug("eval clusters over the searched theorems only (%s does not load: %s)", benchmark, e)
            full = {}
        names = {t.name for t in pool}
        if full and names <= full.keys() and len(full) > len(names):
            pool = [*pool, *(t for n, t in full.items() if n not in names)]
    assignment = clusters(pool)
    return {t.name: assignment[t.name] for t in theorems}


def rows_of(out: Path, *, iteration: int, benchmark: str, budget: int, attempt: int, seed: int,
            baselines: Baselines | None, model: str, ebm: str, automation: bool = False,
            clusters: Mapping[str, str] | None = None) -> list[EvalResult]:
    """The rows of one attempt's search output; ``clusters`` gives each theorem's cluster ('' when absent)."""
    rows = []
    for r in read_results(out):
        rows.append(EvalResult(
            iteration=iteration, benchmark=benchmark, theorem=r.theorem, budget=budget, attempt=attempt, seed=seed,
            proved=r.proved, nodes_to_proof=r.nodes_to_proof if r.proved else None, nodes_used=r.nodes,
            time_s=r.time_s, timeout=r.stop == "timeout", proof=list(r.proof), proof_sources=list(r.proof_sources),
            hard=baselines.hard(r.theorem) if baselines else None,
            automation=baselines.single.get(r.theorem) if baselines else None,
            defaware=baselines.defaware.get(r.theorem) if baselines else None,
            error=r.error, message=r.message if r.error else "", model=model, ebm=ebm, search_automation=automation,
            cluster=(clusters or {}).get(r.theorem, ""), checks=r.tactics_tried,
        ))
    return rows


def variants(profile: Profile, ebm: str | Path | None) -> list[tuple[str, bool]]:
    """The (ebm, automation) variants an eval runs: the main one (with the EBM
    when given, with automation when ``search.automation.enabled``), the EBM
    ablation (the same without the EBM; unless ``eval.ebm_ablation`` is off)
    and the policy alone (the main one without automation)."""
    auto = profile.search.automation.enabled
    main = (str(ebm) if ebm else "", auto)
    out = [main]
    if ebm and profile.eval.ebm_ablation:
        out.append(("", auto))
    if auto:
        out.append((main[0], False))
    return out


async def run_variants(
    profile: Profile,
    policy: Policy,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out_dir: str | Path,
    *,
    scorer: EnergyScorer | None = None,
    ebm: str | Path | None = None,
    **kw: object,
) -> list[EvalResult]:
    """Every variant of `variants` (one `run_eval` each, resumable): the rows."""
    rows: list[EvalResult] = []
    for v_ebm, auto in variants(profile, ebm if scorer is not None else None):
        rows += await run_eval(profile, policy, env, theorems, out_dir, scorer=scorer if v_ebm else None,
                               ebm=ebm if v_ebm else None, automation=auto, **kw)  # type: ignore[arg-type]
    return rows


def variant_rows(rows: Iterable[EvalResult], profile: Profile, ebm: str | Path | None) -> list[EvalResult]:
    """The rows of this eval's `variants` (rows of other settings left in the
    output by an earlier run are left out)."""
    keep = set(variants(profile, ebm))
    return [r for r in rows if (r.ebm, r.search_automation) in keep]


async def verify_proofs(env: ProofEnv, theorems: Sequence[Theorem], rows: Iterable[EvalResult]) -> None:
    """Re-check every proved row's proof as a whole theorem; raise
    `WrongProofError` for one that fails (an infrastructure failure of the
    re-check is an `EvalError` too: nothing unchecked is reported)."""
    import asyncio

    by_name = {t.name: t for t in theorems}
    proved = [r for r in rows if r.proved]
    for r in proved:
        if r.theorem not in by_name:
            raise EvalError(f"eval row for {r.theorem!r}, which is not in the benchmark")
        if not r.proof:
            raise WrongProofError(f"{r.theorem} (attempt {r.attempt}) is marked proved but has no proof")
    checks = await asyncio.gather(*(env.check_proof(by_name[r.theorem], r.proof) for r in proved))
    for r, c in zip(proved, checks, strict=True):
        if not c.ok:
            what = "could not be re-checked (Lean failed)" if c.infra else "fails the whole-theorem re-check"
            cls = EvalError if c.infra else WrongProofError
            raise cls(f"{r.theorem} (attempt {r.attempt}, ebm={r.ebm or 'none'}): proof {r.proof!r} {what}: "
                      + "; ".join(c.errors)[:500])


def existing_rows(out_dir: Path) -> list[EvalResult]:
    path = out_dir / RESULTS_FILE
    return read_eval_results(out_dir) if path.exists() else []


def write_meta(out_dir: Path, **meta: object) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / META_FILE, json.dumps(meta, indent=1) + "\n")


def read_meta(out_dir: Path) -> dict[str, object]:
    path = Path(out_dir) / META_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: missing (not an eval output directory?)") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object")
    return data


def read_eval_results(out_dir: str | Path) -> list[EvalResult]:
    """The rows of an eval output; a missing or unreadable file is an error naming it."""
    path = Path(out_dir) / RESULTS_FILE
    if not path.exists():
        raise DataError(f"{path}: missing (the eval of {out_dir} did not finish?)")
    return read_parquet(path, EvalResult)


def earlier_solved(eval_dirs: Iterable[str | Path]) -> set[str]:
    """Theorems proved (at any budget, by any attempt or variant) in the evals
    of earlier iterations. A missing or corrupt output raises, naming the file:
    a silently shorter list would make every theorem look "newly solved"."""
    out: set[str] = set()
    for d in eval_dirs:
        out |= {r.theorem for r in read_eval_results(d) if r.proved}
    return out


def root_goals(out_dir: str | Path) -> dict[str, str]:
    """Benchmark name -> its root goal as Lean printed it (from the eval's searches)."""
    goals: dict[str, str] = {}
    base = Path(out_dir) / SEARCHES_DIR
    for traj in sorted(base.glob("*/attempt_*.traj")) if base.exists() else []:
        if not list_parts(traj):
            continue
        for rec in read_trajectories(traj):
            if rec.node_id == 0:
                goals.setdefault(rec.theorem, rec.state)
    return goals
