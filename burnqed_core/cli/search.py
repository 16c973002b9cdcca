"""`burnqed search` and `burnqed trajectories ...` commands."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import signal
from pathlib import Path
from typing import Annotated, Any

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.errors import BurnqedError

log = logging.getLogger(__name__)

EXIT_INTERRUPTED = 143  # 128 + SIGTERM: the output is consistent but incomplete; rerun with --resume

trajectories_app = typer.Typer(help="inspect search outputs (trajectory directories)", no_args_is_help=True)


class EbmUnavailableError(BurnqedError):
    """--ebm was given but no EBM scorer can be loaded."""


def _load_scorer(ebm_dir: Path, policy: Any) -> Any:
    """The EBM as an `EnergyScorer` (``burnqed_core.ebm.scorer.load_energy_scorer``)."""
    try:
        from burnqed_core.ebm.scorer import load_energy_scorer  # type: ignore[import-not-found]
    except ImportError:
        raise EbmUnavailableError(
            "--ebm: the energy-based model is not available in this version of burnqed "
            "(burnqed_core.ebm.scorer is missing); search without --ebm") from None
    if not ebm_dir.is_dir():
        raise EbmUnavailableError(f"--ebm {ebm_dir}: no such directory")
    return load_energy_scorer(ebm_dir, policy)


def _lean_version(profile: Any, pool: Any) -> str:
    v = getattr(pool, "lean_version", None)
    if isinstance(v, str) and v:
        return v
    if profile.lean.backend == "embedded":
        from burnqed_core.lean.install import expected_stamp

        return expected_stamp()
    return f"pantograph {profile.lean.pantograph.executable} (LEAN_PATH={profile.lean.pantograph.lean_path})"


def _theorems_digest(theorems: list[Any]) -> str:
    h = hashlib.sha256()
    for t in theorems:
        h.update(t.model_dump_json().encode())
        h.update(b"\n")
    return h.hexdigest()


def _cancel_on_signals(task: asyncio.Future[Any], flag: dict[str, str]) -> None:
    """Until the runner installs its own handlers (and after it removed
    them), SIGTERM/SIGINT cancel the command so Lean workers are closed."""
    loop = asyncio.get_running_loop()

    def handler(signum: int) -> None:
        flag["signal"] = signal.Signals(signum).name
        task.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, handler, sig)


async def _search_main(
    profile_name: str,
    model: Path | None,
    theorems_spec: str,
    out: Path,
    ebm: Path | None,
    temperature: float | None,
    candidates: int | None,
    resume: bool,
    limit: int | None,
    iteration: int,
    progress: bool,
    verbose: bool,
) -> int:
    from burnqed_core.data.theorems import load_theorems
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.policy.factory import make_policy
    from burnqed_core.policy.prompt import PROMPT_VERSION
    from burnqed_core.search.engine import SearchEngine, resolve_sampling
    from burnqed_core.search.runner import prepare_output, run_search
    from burnqed_core.search.trajectories import RunRecord, model_identity

    profile = load(profile_name, verbose)
    cfg = profile.search
    theorems = load_theorems(theorems_spec)
    if limit is not None:
        if limit < 1:
            raise BurnqedError("--limit must be >= 1")
        theorems = theorems[:limit]
    model_path = model or profile.policy.model_path
    if ebm is not None and profile.policy.backend == "fixed":
        raise EbmUnavailableError("--ebm needs a model policy (the fixed-tactics policy has no encoder)")
    sampling = resolve_sampling(cfg, ebm=ebm is not None, temperature=temperature, num_candidates=candidates,
                                max_new_tokens=profile.policy.max_new_tokens)
    record = RunRecord(
        model=model_identity(model_path),
        policy_backend=profile.policy.backend,
        prompt_version=PROMPT_VERSION,
        sampling=sampling,
        budgets={"max_nodes": cfg.max_nodes, "max_depth": cfg.max_depth, "timeout_s": cfg.timeout_s},
        search=cfg.model_dump(mode="json"),
        ebm=str(ebm.resolve()) if ebm is not None else None,
        lean_backend=profile.lean.backend,
        seeds={"profile": profile.seed, "search": cfg.seed},
        theorems_source=theorems_spec,
        theorems_sha256=_theorems_digest(theorems),
        theorems_total=len(theorems),
        iteration=iteration,
        profile=str(profile.source or profile_name),
    )
    prepare_output(out, record, resume)  # refuse a used --out (or other settings) before loading anything
    main = asyncio.current_task()
    assert main is not None
    flag: dict[str, str] = {}
    _cancel_on_signals(main, flag)
    policy = None
    pool = LeanPool(profile.lean)
    try:
        policy = make_policy(profile, model_path)
        record.policy_backend = getattr(policy, "name", profile.policy.backend)
        scorer = _load_scorer(ebm, policy) if ebm is not None else None
        await pool.start()
        record.lean_version = _lean_version(profile, pool)
        engine = SearchEngine(policy, pool, cfg, sampling=sampling, scorer=scorer, iteration=iteration)
        report = await run_search(engine, theorems, out, record, resume=resume, flush_every=cfg.flush_every,
                                  progress=progress)
        _cancel_on_signals(main, flag)  # the runner removed its handlers: keep closing cleanly
    except asyncio.CancelledError:
        if not flag:
            raise
        typer.echo(f"interrupted by {flag['signal']} before the search started; nothing was written", err=True)
        return EXIT_INTERRUPTED
    finally:
        with contextlib.suppress(Exception):
            await pool.close()
        if policy is not None:
            with contextlib.suppress(Exception):
                await policy.close()
    st = engine.stats
    typer.echo(f"searched {report.searched} theorems ({report.proved} proved), {report.skipped} already saved; "
               f"{report.done}/{report.total} in {out}")
    if report.errors:
        typer.echo("errors: " + ", ".join(f"{v} {k}" for k, v in sorted(report.errors.items())))
    if st.nodes:
        typer.echo(f"time: policy {st.policy_s:.1f} s, Lean {st.lean_s:.1f} s, engine {st.engine_s:.2f} s "
                   f"({1000 * st.engine_s / st.nodes:.2f} ms per node); wall {report.wall_s:.1f} s")
    if report.interrupted:
        typer.echo(f"interrupted by {report.signal}: {report.done} theorems saved; rerun with --resume", err=True)
        return EXIT_INTERRUPTED
    return 0


def search(
    theorems: Annotated[str, typer.Option("--theorems", "-t", help="theorem set: JSONL of theorem records, "
                                          "a .lean file, bundled:<name>, ... (see burnqed data)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="output directory of Parquet parts, e.g. traj.parquet")],
    model: Annotated[Path | None, typer.Option("--model", "-m", help="policy model directory "
                                               "(default: policy.model_path of the profile)")] = None,
    ebm: Annotated[Path | None, typer.Option("--ebm", help="EBM directory: energy joins the priority")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", help="sampling temperature "
                                                      "(default: search.temperature, or ebm_temperature with --ebm)")
                           ] = None,
    candidates: Annotated[int | None, typer.Option("--candidates", "-n", help="samples per expansion "
                                                   "(default: search.num_candidates, or ebm_num_candidates)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue a partial output: skip saved theorems")] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="only the first N theorems of the set")] = None,
    iteration: Annotated[int, typer.Option("--iteration", help="expert-iteration number written in the rows")] = 0,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Best-first proof search over a theorem set; every node is saved as a trajectory record.

    The output directory holds one Parquet part per `search.flush_every` theorems and a run record
    (_run.json). SIGTERM/SIGINT flush what is finished and exit 143; --resume continues."""
    code = asyncio.run(_search_main(profile, model, theorems, out, ebm, temperature, candidates, resume, limit,
                                    iteration, not no_progress, verbose))
    if code:
        raise typer.Exit(code)


@trajectories_app.command("stats")
def stats(
    path: Annotated[Path, typer.Argument(help="a search output directory, or a Parquet file of trajectory records")],
    as_json: Annotated[bool, typer.Option("--json", help="print the statistics as JSON")] = False,
) -> None:
    """Theorems, proved, nodes, time, unique candidates per expansion."""
    from burnqed_core.search.trajectories import format_stats, trajectory_stats

    s = trajectory_stats(path)
    typer.echo(json.dumps(s.model_dump(), indent=2) if as_json else format_stats(s))


def register(app: typer.Typer) -> None:
    """Add the search commands to the main app."""
    app.command("search")(search)
    app.add_typer(trajectories_app, name="trajectories")
