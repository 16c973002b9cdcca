"""Run a search over a theorem set into a trajectory output, given an open
policy and Lean environment: builds the run record (what produced the
output) and the engine, then hands over to `run_search`. Used by the
command line, the evaluation and the loop, so that they all write the same
run record."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import Profile, SearchConfig
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_core.policy.prompt import format_of
from burnqed_core.records import Theorem
from burnqed_core.search.engine import Sampling, SearchEngine
from burnqed_core.search.runner import RunReport, run_search
from burnqed_core.search.scoring import EnergyScorer
from burnqed_core.search.trajectories import RunRecord, model_identity


def theorems_digest(theorems: Sequence[Theorem]) -> str:
    h = hashlib.sha256()
    for t in theorems:
        h.update(t.model_dump_json().encode())
        h.update(b"\n")
    return h.hexdigest()


def lean_version(profile: Profile, env: Any) -> str:
    v = getattr(env, "lean_version", None)
    if isinstance(v, str) and v:
        return v
    if profile.lean.backend == "embedded":
        from burnqed_core.lean.install import expected_stamp

        return expected_stamp()
    return f"pantograph {profile.lean.pantograph.executable} (LEAN_PATH={profile.lean.pantograph.lean_path})"


def build_run_record(
    profile: Profile,
    config: SearchConfig,
    sampling: Sampling,
    *,
    model_path: str | Path | None,
    policy: Policy,
    env: Any,
    theorems: Sequence[Theorem],
    theorems_source: str,
    iteration: int,
    ebm: str | Path | None = None,
    served_model: dict[str, str | None] | None = None,
) -> RunRecord:
    return RunRecord(
        model=model_identity(model_path),
        policy_backend=getattr(policy, "name", profile.policy.backend),
        prompt_version=format_of(policy).version,
        sampling=sampling,
        budgets={"max_nodes": config.max_nodes, "max_depth": config.max_depth, "timeout_s": config.timeout_s},
        search=config.model_dump(mode="json"),
        ebm=str(Path(ebm).resolve()) if ebm is not None else None,
        lean_backend=profile.lean.backend,
        lean_version=lean_version(profile, env),
        seeds={"profile": profile.seed, "search": config.seed},
        theorems_source=theorems_source,
        theorems_sha256=theorems_digest(theorems),
        theorems_total=len(theorems),
        iteration=iteration,
        profile=str(profile.source or profile.name),
        served_model=served_model,
        automation=config.automation.model_dump(mode="json") if config.automation.enabled else None,
    )


async def served_model(policy: Policy) -> dict[str, str | None] | None:
    """What a policy server says it serves (`SglangPolicy.served_model`:
    ``/model_info`` ``model_path`` and ``weight_version``), so that the run
    record names the model really used; None for in-process policies."""
    ask = getattr(policy, "served_model", None)
    return await ask() if ask is not None else None


async def search_theorems(
    profile: Profile,
    policy: Policy,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out: str | Path,
    *,
    sampling: Sampling,
    config: SearchConfig | None = None,
    model_path: str | Path | None = None,
    theorems_source: str = "",
    iteration: int = 0,
    scorer: EnergyScorer | None = None,
    ebm: str | Path | None = None,
    resume: bool = True,
    progress: bool = True,
    handle_signals: bool = True,
) -> tuple[RunReport, SearchEngine]:
    """Search ``theorems`` into ``out`` (resuming a partial output by default)."""
    config = config or profile.search
    record = build_run_record(profile, config, sampling, model_path=model_path, policy=policy, env=env,
                              theorems=theorems, theorems_source=theorems_source, iteration=iteration, ebm=ebm,
                              served_model=await served_model(policy))
    engine = SearchEngine(policy, env, config, sampling=sampling, scorer=scorer, iteration=iteration)
    report = await run_search(engine, theorems, out, record, resume=resume, flush_every=config.flush_every,
                              progress=progress, handle_signals=handle_signals)
    return report, engine
