"""``burnqed loop`` and ``burnqed recover``.

``burnqed loop`` materialises the pipeline's assets in this process (`burnqed_pipeline.runner`) against a
persistent Dagster instance (``DAGSTER_HOME``, default ``<work_dir>/dagster``), so a run started here shows in
``dagster dev`` with its metadata: the shared base assets once, then for each iteration (added as a partition
in numeric order) every stage from tactic pairs to the eval report. A stage whose settings, inputs, code and
read files did not change since it last ran is skipped cheaply; a changed one is recomputed. It ends with the
eval comparison across iterations, one table per evaluated set.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.errors import BurnqedError
from burnqed_pipeline.services import StageRuntime

SGLANG_LAUNCH_ENV = "BURNQED_SGLANG_LAUNCH"


def parse_iterations(text: str) -> list[int]:
    try:
        its = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise BurnqedError(f"--iterations: expected comma-separated integers, got {text!r}") from None
    if not its or its != sorted(set(its)) or its[0] < 0:
        raise BurnqedError(f"--iterations must be distinct non-negative integers in increasing order, got {its}")
    return its


def comparison(work_dir: Path, last: int) -> list[str]:
    """The eval tables across the iterations up to ``last`` whose eval finished (earlier runs' too), one per
    set of the newest eval's plan."""
    from burnqed_core.eval.plan import PLAN_FILE, EvalPlan
    from burnqed_core.eval.report import SUMMARY_FILE, format_comparison, read_summary
    from burnqed_core.loop.layout import BaseLayout
    from burnqed_core.loop.markers import is_done

    layout = BaseLayout(root=work_dir)
    done = [layout.iteration(n).stage("eval_report") for n in range(last + 1)]
    done = [d for d in done if is_done(d) and (d / PLAN_FILE).is_file()]
    if not done:
        return []
    newest = EvalPlan.model_validate_json((done[-1] / PLAN_FILE).read_text(encoding="utf-8"))
    lines: list[str] = []
    for es in newest.sets:
        dirs = [d / es.out.relative_to(newest.out) for d in done]
        lines += ["", f"{es.spec}:",
                  format_comparison([read_summary(d) for d in dirs if (d / SUMMARY_FILE).is_file()])]
    return lines


def run_loop(profile: str, iterations: list[int], work_dir: Path | None = None, until: str | None = None,
             last_until: str | None = None, verbose: bool = False, runtime: StageRuntime | None = None,
             echo: Callable[[str], None] = typer.echo) -> None:
    """`loop` (its options), with ``runtime`` serving every run (default: one of its own, closed at the end:
    one Lean start for the whole command)."""
    from dagster import DagsterInstance

    from burnqed_pipeline.recovery import recover_dead_runs
    from burnqed_pipeline.runner import command_resources, dagster_home, materialize_stages

    prof = load(profile, verbose)
    wd = Path(work_dir) if work_dir is not None else Path(prof.paths.work_dir)
    home = dagster_home(wd)
    echo(f"burnqed loop: profile {prof.name}, iterations {iterations}, outputs in {wd}, Dagster instance {home}")
    rt = runtime or StageRuntime(launch_sglang=os.environ.get(SGLANG_LAUNCH_ENV) == "1")
    resources = command_resources(str(prof.source or profile), rt, wd)
    with DagsterInstance.get() as instance, contextlib.ExitStack() as stack:
        if runtime is None:
            stack.callback(rt.close)
        for line in recover_dead_runs(instance):  # an earlier loop killed mid-run still holds the gpu slot
            echo(line)
        materialize_stages(instance, resources, iterations, echo=echo, log_level="DEBUG" if verbose else "INFO",
                           until=until, last_until=last_until)
    for line in comparison(wd, max(iterations)):
        echo(line)
    echo(f"\nSee the runs in the UI: BURNQED_PROFILE={prof.source or profile} DAGSTER_HOME={home} "
         "dagster dev -w workspace.yaml -h 127.0.0.1 (docs/operations.md)")


def loop(
    iterations: Annotated[str, typer.Option("--iterations", "-i", help="comma-separated iterations, in order")] = "0,1",
    work_dir: Annotated[Path | None, typer.Option("--work-dir", help="outputs (default: paths.work_dir)")] = None,
    profile: ProfileOpt = "tiny",
    until: Annotated[str | None, typer.Option(
        "--until", help="stop each iteration after this stage and the stages it needs, plus what later "
                        "iterations read from it (e.g. eval_report with --iterations 0: no trajectories; with "
                        "0,1: iteration 0's trajectories, which iteration 1 trains on)")] = None,
    last_until: Annotated[str | None, typer.Option(
        "--last-until", help="stop the last iteration after this stage and the stages it needs instead (e.g. "
                             "eval_report: its trajectories, which only the next iteration reads, are left to the "
                             "run of that one)")] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Run the Dagster pipeline in this process: the base assets (traced corpus, base model, automation
    baselines), then for each iteration tactic pairs, LoRA adapter, merged model, (embeddings, EBM),
    search trajectories and the eval report; ends with the eval comparison across iterations.

    Runs are recorded in the Dagster instance at DAGSTER_HOME (default <work-dir>/dagster): `dagster dev`
    shows them. Stages whose inputs did not change are skipped, so a re-run continues an interrupted loop."""
    run_loop(profile, parse_iterations(iterations), work_dir, until, last_until, verbose)


def recover(
    work_dir: Annotated[Path | None, typer.Option("--work-dir", help="outputs (default: paths.work_dir)")] = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Mark runs whose process is gone (killed or preempted: they stay STARTED and keep their gpu pool slot)
    as failed and free their slots. Run it on the box that ran them, after a restart; then re-execute them
    from failure in the UI, or let run retries (dagster.yaml, with the daemon running) do it."""
    from dagster import DagsterInstance

    from burnqed_pipeline.recovery import recover_dead_runs
    from burnqed_pipeline.runner import dagster_home

    prof = load(profile, verbose)
    home = dagster_home(Path(work_dir) if work_dir is not None else Path(prof.paths.work_dir))
    with DagsterInstance.get() as instance:
        lines = recover_dead_runs(instance)
    for line in lines:
        typer.echo(line)
    typer.echo(f"{len(lines)} run(s) recovered in the Dagster instance {home}")
