"""`burnqed loop`: run iterations of the expert-iteration loop in order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load, with_changes


def loop(
    iterations: Annotated[str, typer.Option("--iterations", "-i", help="comma-separated iterations, in order")] = "0,1",
    work_dir: Annotated[Path | None, typer.Option("--work-dir", help="outputs (default: paths.work_dir)")] = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Trace the corpus, pre-train the base model, then for each iteration: tactic pairs, LoRA adapter,
    merged model, search trajectories and the eval report beside the automation-only baseline.

    Finished stages are skipped, so a re-run continues an interrupted loop."""
    from burnqed_core.errors import BurnqedError
    from burnqed_core.loop.runner import run_loop

    prof = load(profile, verbose)
    if work_dir is not None:
        prof = with_changes(prof, paths=with_changes(prof.paths, work_dir=work_dir))
    try:
        its = [int(x) for x in iterations.split(",") if x.strip()]
    except ValueError:
        raise BurnqedError(f"--iterations: expected comma-separated integers, got {iterations!r}") from None
    if its != sorted(set(its)) or not its or its[0] < 0:
        raise BurnqedError(f"--iterations must be distinct non-negative integers in increasing order, got {its}")
    asyncio.run(run_loop(prof, its, echo=typer.echo))


def register(app: typer.Typer) -> None:
    app.command("loop")(loop)
