"""Evaluate a policy on a benchmark: one search per node budget (resumable:
each budget's trajectory output continues where a killed run stopped), then
per-theorem `EvalResult` rows and an `EvalSummary`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_core.record_io import read_parquet, write_parquet
from burnqed_core.records import EvalResult, Theorem
from burnqed_core.search.engine import resolve_sampling
from burnqed_core.search.scoring import EnergyScorer
from burnqed_core.search.session import search_theorems
from burnqed_core.search.trajectories import read_results

log = logging.getLogger(__name__)

RESULTS_FILE = "results.parquet"


def budget_dir(out_dir: Path, budget: int, attempt: int) -> Path:
    return out_dir / f"budget_{budget}" / f"attempt_{attempt}.traj"


async def run_eval(
    profile: Profile,
    policy: Policy,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out_dir: str | Path,
    *,
    iteration: int,
    benchmark: str,
    automation: Mapping[str, str | None] | None = None,
    budgets: Sequence[int] | None = None,
    model_path: str | Path | None = None,
    scorer: EnergyScorer | None = None,
    ebm: str | Path | None = None,
    progress: bool = True,
) -> list[EvalResult]:
    """Search every theorem at every budget (``eval.pass_n`` attempts each,
    seeds differing per attempt) and return one row per (theorem, budget,
    attempt); rows are also written to ``<out_dir>/results.parquet``."""
    out_dir = Path(out_dir)
    budgets = sorted(budgets or profile.eval.budgets)
    sampling = resolve_sampling(profile.search, ebm=scorer is not None, num_candidates=profile.eval.num_candidates,
                                max_new_tokens=profile.policy.max_new_tokens)
    rows: list[EvalResult] = []
    for budget in budgets:
        for attempt in range(profile.eval.pass_n):
            config = profile.search.model_copy(update={"max_nodes": budget, "seed": profile.search.seed + attempt})
            out = budget_dir(out_dir, budget, attempt)
            log.info("eval: budget %d, attempt %d, %d theorems -> %s", budget, attempt, len(theorems), out)
            await search_theorems(profile, policy, env, theorems, out, sampling=sampling, config=config,
                                  model_path=model_path, theorems_source=benchmark, iteration=iteration,
                                  scorer=scorer, ebm=ebm, resume=True, progress=progress)
            for r in read_results(out):
                auto = automation.get(r.theorem) if automation is not None else None
                measured = automation is not None and r.theorem in automation
                rows.append(EvalResult(
                    iteration=iteration, benchmark=benchmark, theorem=r.theorem, budget=budget, attempt=attempt,
                    proved=r.proved, nodes_used=r.nodes, time_s=r.time_s, proof=list(r.proof),
                    hard=(auto is None) if measured else None, automation=auto, error=r.error,
                    model=str(model_path or ""), ebm=str(ebm or ""),
                ))
    rows.sort(key=lambda r: (r.budget, r.attempt, r.theorem))
    write_parquet(rows, out_dir / RESULTS_FILE, EvalResult)
    return rows


def read_eval_results(out_dir: str | Path) -> list[EvalResult]:
    return read_parquet(Path(out_dir) / RESULTS_FILE, EvalResult)
