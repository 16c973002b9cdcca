"""`burnqed search` and `burnqed trajectories ...` commands."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.errors import BurnqedError

EXIT_INTERRUPTED = 143  # 128 + SIGTERM: the output is consistent but incomplete; rerun with --resume

trajectories_app = typer.Typer(help="inspect search outputs (trajectory directories)", no_args_is_help=True)


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
    premises: Path | None = None,
) -> int:
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.search.job import SearchInterrupted, search_job

    profile = load(profile_name, verbose)
    theorems = load_theorems(theorems_spec)
    if limit is not None:
        if limit < 1:
            raise BurnqedError("--limit must be >= 1")
        theorems = theorems[:limit]
    try:
        report, st = await search_job(
            profile, theorems, out, model_path=model, ebm=ebm, temperature=temperature, num_candidates=candidates,
            resume=resume, iteration=iteration, theorems_source=theorems_spec, progress=progress, premises=premises)
    except SearchInterrupted as e:
        typer.echo(str(e), err=True)
        return EXIT_INTERRUPTED
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
    premises: Annotated[Path | None, typer.Option("--premises", help="a premise index folder (the loop's "
                                                  "base/premise_index) for the premise steps of "
                                                  "search.premises")] = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Best-first proof search over a theorem set; every node is saved as a trajectory record.

    The output directory holds one Parquet part per `search.flush_every` theorems and a run record
    (_run.json). SIGTERM/SIGINT flush what is finished and exit 143; --resume continues."""
    code = asyncio.run(_search_main(profile, model, theorems, out, ebm, temperature, candidates, resume, limit,
                                    iteration, not no_progress, verbose, premises))
    if code:
        raise typer.Exit(code)


@trajectories_app.command("stats")
def stats(
    path: Annotated[Path, typer.Argument(help="a search output directory, or a Parquet file of trajectory records")],
    as_json: Annotated[bool, typer.Option("--json", help="print the statistics as JSON")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Theorems, proved, nodes, time, unique candidates per expansion."""
    from burnqed_core.search.trajectories import format_stats, trajectory_stats

    load(profile, verbose)  # every command takes --profile: validated, logging set up

    s = trajectory_stats(path)
    typer.echo(json.dumps(s.model_dump(), indent=2) if as_json else format_stats(s))


def register(app: typer.Typer) -> None:
    """Add the search commands to the main app."""
    app.command("search")(search)
    app.add_typer(trajectories_app, name="trajectories")
