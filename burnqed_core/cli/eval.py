"""`burnqed eval` and `burnqed compare`."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt
from burnqed_core.errors import BurnqedError

EXIT_INTERRUPTED = 143
EXIT_NO_GO = 3


def parse_budgets(text: str) -> list[int]:
    try:
        budgets = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise BurnqedError(f"--budgets {text!r}: expected comma-separated node budgets, e.g. 8,24,64") from None
    if not budgets or budgets[0] < 1:
        raise BurnqedError(f"--budgets {text!r}: node budgets must be >= 1")
    return budgets


def check_out(out: Path, resume: bool) -> None:
    if out.exists() and not out.is_dir():
        raise BurnqedError(f"--out {out} is a file; an eval output is a directory")
    if not resume and out.exists() and any(out.iterdir()):
        raise BurnqedError(f"{out} already holds an eval output: pass --resume to continue it, or choose another --out")


async def _eval_main(
    profile_name: str, model: Path | None, ebm: Path | None, theorems_spec: str, budgets: str | None,
    pass_k: int | None, out: Path, resume: bool, iteration: int, limit: int | None,
    training_pairs: list[Path], progress: bool, verbose: bool, automation: bool | None = None,
    sample: int | None = None,
) -> int:
    from burnqed_core.config import load_profile
    from burnqed_core.data.theorems import load_theorems
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.eval import steps
    from burnqed_core.eval.run import EvalInterrupted
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.logutil import setup_logging
    from burnqed_core.policy.factory import make_policy
    from burnqed_core.search.job import EbmUnavailableError, check_unique_names

    setup_logging(verbose)
    overrides: dict[str, object] = {}
    if budgets is not None:
        overrides["eval.budgets"] = parse_budgets(budgets)
    if pass_k is not None:
        if pass_k < 1:
            raise BurnqedError("--pass-k must be >= 1")
        overrides["eval.pass_k"] = pass_k
    if automation is not None:
        overrides["search.automation.enabled"] = automation
    profile = steps.on_benchmark(load_profile(profile_name, overrides=overrides), theorems_spec)
    check_out(out, resume)
    theorems = load_theorems(theorems_spec)
    if sample is not None:
        from burnqed_core.data.selection import stratified_sample

        if sample < 1:
            raise BurnqedError("--sample must be >= 1")
        theorems = stratified_sample(theorems, sample)
    if limit is not None:
        if limit < 1:
            raise BurnqedError("--limit must be >= 1")
        theorems = sorted(theorems, key=lambda t: t.name)[:limit]
    check_unique_names(theorems)
    steps.check_no_corpus_twins(profile, theorems_spec, theorems)  # before Lean starts
    model_path = model or profile.policy.model_path
    if ebm is not None:
        if profile.policy.backend == "fixed":
            raise EbmUnavailableError("--ebm needs a model policy (the fixed-tactics policy has no encoder)")
        if not ebm.is_dir():
            raise EbmUnavailableError(f"--ebm {ebm}: no such directory")
        if not has_ebm(ebm):
            raise EbmUnavailableError(f"--ebm {ebm}: no trained EBM there (iteration 0 trains none)")
    pool = LeanPool(profile.lean)
    policy = None
    try:
        # the one evaluation path (`burnqed_core.eval.steps`), as one shard in this process
        policy = make_policy(profile, model_path)

        async def started() -> LeanPool:
            typer.echo(f"starting Lean ({profile.lean.backend} backend) ...")
            await pool.start()
            return pool

        baselines = await steps.eval_prepare(profile, iteration, started, theorems, None, training_pairs,
                                             progress=progress)
        try:
            await steps.eval_search(profile, iteration, policy, pool, theorems, baselines, out,
                                    model_path,  # type: ignore[arg-type]
                                    ebm_dir=ebm, progress=progress)
        except EvalInterrupted as e:
            typer.echo(str(e), err=True)
            return EXIT_INTERRUPTED
    finally:
        with contextlib.suppress(Exception):
            await pool.close()
        if policy is not None:
            with contextlib.suppress(Exception):
                await policy.close()
    res = steps.eval_finish(profile, iteration, theorems, baselines, out, ebm_dir=ebm, training_pairs=training_pairs)
    typer.echo("")
    typer.echo(res.summary)
    typer.echo(f"\nreport: {out}/report.md, {out}/summary.json, {out}/solve_rate.png, rows {out}/results.parquet")
    return 0


def eval_cmd(
    theorems: Annotated[str, typer.Option("--theorems", "-t", help="benchmark: a .lean file, a .jsonl of theorem "
                                          "records, bundled:<name>, ...")],
    out: Annotated[Path, typer.Option("--out", "-o", help="output directory (searches, rows, report, plot)")],
    model: Annotated[Path | None, typer.Option("--model", "-m", help="policy model directory "
                                               "(default: policy.model_path of the profile)")] = None,
    ebm: Annotated[Path | None, typer.Option("--ebm", help="EBM directory: evaluate with AND without it "
                                             "(ablation rows)")] = None,
    budgets: Annotated[str | None, typer.Option("--budgets", help="node budgets, e.g. 8,24,64 "
                                                "(default: eval.budgets); one search runs at the largest")] = None,
    pass_k: Annotated[int | None, typer.Option("--pass-k", help="attempts per theorem with independent seeds "
                                               "(default: eval.pass_k)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue a partial eval output")] = False,
    iteration: Annotated[int, typer.Option("--iteration", help="iteration number written in the rows")] = 0,
    limit: Annotated[int | None, typer.Option("--limit", help="only the first N theorems (by name)")] = None,
    sample: Annotated[int | None, typer.Option(
        "--sample", help="a fixed sample of N theorems of the set, spread over its families (seed 0; the same "
        "set gives the same sample)")] = None,
    training_pairs: Annotated[list[Path] | None, typer.Option(
        "--training-pairs", help="tactic-pair files/dirs the model was trained on: fail if a benchmark "
        "theorem occurs in them (repeatable)")] = None,
    automation: Annotated[bool | None, typer.Option(
        "--automation/--no-automation", help="add automation tactics to the policy's candidates and evaluate the "
        "policy alone beside it (default: search.automation.enabled)")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Solve rates of a model on a benchmark per node budget, pass@k, beside both automation baselines.

    One search per theorem and attempt at the largest budget (smaller budgets are read off it); every proof
    is re-checked. Writes results.parquet, summary.json, report.md and solve_rate.png; prints the table.
    A theorem that is a twin of a theorem of the profile's corpus (the same up to renaming and numerals) is
    an error before anything starts."""
    code = asyncio.run(_eval_main(profile, model, ebm, theorems, budgets, pass_k, out, resume, iteration, limit,
                                  training_pairs or [], not no_progress, verbose, automation, sample))
    if code:
        raise typer.Exit(code)


def compare_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="eval output directories, oldest first")],
    plot: Annotated[Path | None, typer.Option("--plot", help="comparison plot (default: <last DIR>/compare.png)")
                    ] = None,
    fail_on_no_go: Annotated[bool, typer.Option("--fail-on-no-go", help=f"exit {EXIT_NO_GO} on a no-go verdict")
                             ] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Delta table across eval outputs (per budget, hard split, pass@k), newly solved / lost, plot, go/no-go."""
    from burnqed_core.cli.common import load
    from burnqed_core.eval.compare import COMPARE_PLOT, compare_dirs, format_compare, write_compare_plot

    prof = load(profile, verbose)
    c = compare_dirs(dirs, regression_pp=prof.eval.regression_pp, ebm_min_gain_pp=prof.eval.ebm_min_gain_pp)
    typer.echo(format_compare(c))
    path = write_compare_plot(c, plot or Path(dirs[-1]) / COMPARE_PLOT)
    typer.echo(f"plot: {path}")
    if fail_on_no_go and not c.verdict.go:
        raise typer.Exit(EXIT_NO_GO)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
    app.command("compare")(compare_cmd)
