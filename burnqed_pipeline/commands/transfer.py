"""``burnqed transfer``: leave-one-family-out folds run through the pipeline (`burnqed_core.eval.transfer`).

Each fold is a profile file extending the base profile (the family excluded from the corpus, its theorems as
the benchmark) and is materialised like ``burnqed loop --iterations 0 --until eval_report``: trace, base model,
automation baselines, tactic pairs, LoRA adapter, merged model and the eval report with baseline (c), in the
fold's own work dir. With ``--iteration N`` it is materialised like ``--iterations 0..N --until eval_report``
(the corpus search, trajectories and EBM of every iteration before N too) and read at iteration N, beside
iteration 0's result. All folds run in one Dagster instance (``<out>/dagster`` unless ``DAGSTER_HOME`` is set)
and one kept Lean process. Traced theorems come from the trace cache after the first fold. A fold that fails is
reported and the others go on; a rerun continues (finished stages are skipped by their fingerprints).
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


def transfer_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="folds, their work dirs and the transfer table")] = Path(
        "runs/transfer"),
    profile: ProfileOpt = "transfer",
    family: Annotated[list[str] | None, typer.Option("--family", "-f", help="held-out family (repeat); default: "
                                                     "every corpus family")] = None,
    technique: Annotated[list[str] | None, typer.Option("--technique", "-t", help="every family of this technique "
                                                        "(repeat)")] = None,
    plan: Annotated[bool, typer.Option("--plan", help="list the folds and stop")] = False,
    table: Annotated[bool, typer.Option("--table", help="run nothing: write the table of the selected folds "
                                        "already finished in --out (each fold's fold.json)")] = False,
    iteration: Annotated[int, typer.Option("--iteration", "-i", min=0, help="read each fold at this iteration: "
                                           "run iterations 0..N (corpus searches included) and compare N with "
                                           "0; its results and table are kept apart from iteration 0's "
                                           "(fold-iterN.json, transfer-iterN.md)")] = 0,
    verbose: VerboseOpt = False,
) -> None:
    """Leave-one-family-out transfer: for each held-out corpus family, train iteration 0 (or iterations 0..N)
    without it and evaluate on its theorems against baseline (c) (no learned policy). Writes <out>/transfer.md
    and transfer.json (transfer-iterN.* when read at iteration N)."""
    run_transfer(out=out, profile=profile, family=family, technique=technique, plan=plan, table=table,
                 iteration=iteration, verbose=verbose)


def run_transfer(
    out: Path, profile: str, family: list[str] | None, technique: list[str] | None, plan: bool, table: bool,
    iteration: int, verbose: bool, runtime: StageRuntime | None = None, echo: Callable[[str], None] = typer.echo,
) -> None:
    """`transfer_cmd` (its options), with ``runtime`` serving every fold (default: one of its own, closed at the
    end: one Lean start for the whole command)."""
    from dagster import DagsterInstance

    from burnqed_core.config import load_profile
    from burnqed_core.eval.report import read_summary
    from burnqed_core.eval.transfer import (
        Fold,
        FoldResult,
        TransferReport,
        fold_result,
        format_transfer,
        plan_folds,
        result_file,
        write_fold,
        write_transfer,
    )
    from burnqed_core.loop.corpus import corpus_theorems
    from burnqed_core.loop.layout import BaseLayout
    from burnqed_pipeline.recovery import recover_dead_runs
    from burnqed_pipeline.runner import RunInterrupted, command_resources, dagster_home, materialize_stages

    def all_twins(f: Fold) -> str:
        return f"all {len(f.twins)} theorems are twins of the rest of the corpus"

    prof = load(profile, verbose)
    folds = plan_folds(prof, corpus_theorems(prof), families=family or (), techniques=technique or ())
    if not folds:
        raise BurnqedError("transfer: no fold to run")
    result_name = result_file(iteration)
    echo(f"burnqed transfer: profile {prof.name}, {len(folds)} folds read at iteration {iteration}, "
               f"outputs in {out}")
    for f in folds:
        twins = f" ({len(f.twins)} left out as twins of the corpus)" if f.twins else ""
        echo(f"  {f.technique:12s} {f.family:8s} {len(f.theorems):3d} theorems{twins}")
    if plan:
        return
    if table:
        done = [f for f in folds if (out / f.family / result_name).is_file()]
        report = TransferReport(
            profile=prof.name, iteration=iteration, corpus=folds[0].corpus,
            folds=[FoldResult.model_validate_json((out / f.family / result_name).read_text(encoding="utf-8"))
                   for f in done],
            missing=[f"{f.family} (not run)" if f.theorems else f"{f.family} ({all_twins(f)})"
                     for f in folds if f not in done])
        j, m = write_transfer(report, out)
        echo("\n" + format_transfer(report))
        echo(f"\nwrote {m} and {j} from {len(done)} finished folds")
        return
    home = dagster_home(out)
    results: list[FoldResult] = []
    missing: list[str] = []
    # one runtime for every fold: one Lean start for the whole command
    own = runtime is None
    rt = runtime or StageRuntime(launch_sglang=os.environ.get(SGLANG_LAUNCH_ENV) == "1")
    with DagsterInstance.get() as instance, contextlib.ExitStack() as stack:
        if own:
            stack.callback(rt.close)
        for line in recover_dead_runs(instance):
            echo(line)
        for f in folds:
            if not f.theorems:
                echo(f"\n== fold {f.family}: skipped, every theorem is a twin of the rest of the corpus")
                missing.append(f"{f.family} ({all_twins(f)})")
                continue
            fold_dir = out / f.family
            path = write_fold(prof, f, fold_dir)
            echo(f"\n== fold {f.family} ({f.technique}): {len(f.theorems)} theorems, profile {path}")
            resources = command_resources(str(path), rt)
            try:
                materialize_stages(instance, resources, list(range(iteration + 1)), echo=echo,
                                   log_level="DEBUG" if verbose else "INFO", until="eval_report")
            except RunInterrupted:
                # Ctrl-C / SIGTERM stops the command, not just this fold: the table keeps the finished folds
                write_transfer(TransferReport(profile=prof.name, iteration=iteration, folds=results,
                                              missing=[*missing, f"{f.family} (interrupted)"],
                                              corpus=f.corpus), out)
                raise
            except BurnqedError as e:
                echo(f"fold {f.family} failed: {e}")
                missing.append(f"{f.family} (failed: {str(e)[:200]})")
                continue
            fold_prof = load_profile(path)
            layout = BaseLayout(root=Path(fold_prof.paths.work_dir))
            evals = [read_summary(layout.iteration(n).stage("eval_report")) for n in sorted({0, iteration})]
            at0 = fold_result(f, evals[0])
            r = fold_result(f, evals[-1], evals[0]) if iteration else at0
            (fold_dir / result_name).write_text(r.model_dump_json(indent=1) + "\n", encoding="utf-8")
            if iteration:  # iteration 0's result as this run left it (its eval is a stage of the run too)
                (fold_dir / result_file(0)).write_text(at0.model_dump_json(indent=1) + "\n", encoding="utf-8")
            results.append(r)
            # the table so far: an interrupted run keeps what its finished folds measured
            write_transfer(TransferReport(profile=prof.name, iteration=iteration, folds=results,
                                          missing=missing, corpus=f.corpus), out)
    report = TransferReport(profile=prof.name, iteration=iteration, folds=results, missing=missing,
                            corpus=folds[0].corpus)
    j, m = write_transfer(report, out)
    echo("\n" + format_transfer(report))
    echo(f"\nwrote {m} and {j}; the runs are in the Dagster instance {home}")
    if any("(failed" in m for m in missing):
        raise typer.Exit(1)
