"""`burnqed eval` and `burnqed compare`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt
from burnqed_core.errors import BurnqedError
from burnqed_core.eval.settings import EvalSettings

if TYPE_CHECKING:
    from burnqed_core.eval.plan import EvalPlan

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


def plan_cli(settings: EvalSettings, theorems_spec: str, out: Path, model: Path | None, *, ebm: Path | None,
             iteration: int, limit: int | None, training_pairs: Sequence[Path], sample: int | None = None,
             premises: Path | None = None) -> EvalPlan:
    """The plan of ``burnqed eval``: one set, ``--theorems`` (its fixed ``--sample`` spread over its families,
    then its first ``--limit`` by name), into ``--out``."""
    from burnqed_core.data.theorems.load import load_theorems, set_dir
    from burnqed_core.data.theorems.sampling import stratified_sample
    from burnqed_core.eval.plan import plan_set
    from burnqed_core.search.job import check_unique_names

    theorems = load_theorems(theorems_spec)
    if sample is not None:
        if sample < 1:
            raise BurnqedError("--sample must be >= 1")
        theorems = stratified_sample(theorems, sample)
    if limit is not None:
        if limit < 1:
            raise BurnqedError("--limit must be >= 1")
        theorems = sorted(theorems, key=lambda t: t.name)[:limit]
    check_unique_names(theorems)
    plan = plan_set(theorems_spec, theorems, iteration, out, model, ebm=ebm, training_pairs=training_pairs,
                    shipped=set_dir(theorems_spec))
    if settings.search.premises.enabled and premises is None:
        raise BurnqedError("search.premises.enabled: pass the premise index (--premises DIR: the loop's "
                           "base/premise_index folder), or turn the premise steps off")
    return plan.model_copy(update={"premises": premises})


def check_ebm(settings: EvalSettings, ebm: Path | None) -> None:
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.search.job import EbmUnavailableError

    if ebm is None:
        return
    if settings.policy.backend == "fixed":
        raise EbmUnavailableError("--ebm needs a model policy (the fixed-tactics policy has no encoder)")
    if not ebm.is_dir():
        raise EbmUnavailableError(f"--ebm {ebm}: no such directory")
    if not has_ebm(ebm):
        raise EbmUnavailableError(f"--ebm {ebm}: no trained EBM there (iteration 0 trains none)")


async def _eval_main(
    profile_name: str, model: Path | None, ebm: Path | None, theorems_spec: str, budgets: str | None,
    pass_k: int | None, out: Path, resume: bool, iteration: int, limit: int | None,
    training_pairs: list[Path], progress: bool, verbose: bool, automation: bool | None = None,
    sample: int | None = None,
    premises: Path | None = None,
) -> int:
    from burnqed_core.config import load_profile
    from burnqed_core.eval import plan as eval_plan
    from burnqed_core.eval.run import EvalInterrupted
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.logutil import setup_logging
    from burnqed_core.policy.factory import make_policy

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
    settings = EvalSettings.of(load_profile(profile_name, overrides=overrides))
    check_out(out, resume)
    model_path = model or settings.policy.model_path
    plan = plan_cli(settings, theorems_spec, out, model_path, ebm=ebm, iteration=iteration, limit=limit,
                    training_pairs=training_pairs, sample=sample, premises=premises)
    check_ebm(settings, ebm)
    plan = eval_plan.check(settings, plan)  # before the policy loads and Lean starts
    pool = LeanPool(settings.lean)
    policy = None
    try:
        policy = make_policy(settings, model_path)

        announced: list[bool] = []

        async def started() -> LeanPool:
            if not announced:
                typer.echo(f"starting Lean ({settings.lean.backend} backend) ...")
                announced.append(True)
            await pool.start()
            return pool

        try:
            res = await eval_plan.run(settings, plan, policy, started, progress=progress, checked=True)
        except EvalInterrupted as e:
            typer.echo(str(e), err=True)
            return EXIT_INTERRUPTED
    finally:
        with contextlib.suppress(Exception):
            await pool.close()
        if policy is not None:
            with contextlib.suppress(Exception):
                await policy.close()
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
    premises: Annotated[Path | None, typer.Option("--premises", help="a premise index folder (the loop's "
                                                  "base/premise_index) for the premise steps of "
                                                  "search.premises; (c) with retrieval is measured too")] = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Solve rates of a model on a benchmark per node budget, pass@k, beside both automation baselines.

    One search per theorem and attempt at the largest budget (smaller budgets are read off it); every proof
    is re-checked. Writes results.parquet, summary.json, report.md and solve_rate.png; prints the table.
    A theorem that is a twin of a theorem of the profile's corpus (the same up to renaming and numerals) is
    an error before anything starts."""
    code = asyncio.run(_eval_main(profile, model, ebm, theorems, budgets, pass_k, out, resume, iteration, limit,
                                  training_pairs or [], not no_progress, verbose, automation, sample, premises))
    if code:
        raise typer.Exit(code)


def compare_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="eval output directories, oldest first")],
    plot: Annotated[Path | None, typer.Option("--plot", help="comparison plot (default: <last DIR>/compare.png)")
                    ] = None,
    fail_on_no_go: Annotated[bool, typer.Option("--fail-on-no-go", help=f"exit {EXIT_NO_GO} on a no-go verdict")
                             ] = False,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="runs per side, one per training seed: DIRS are "
                                       "the first side's K eval outputs then the other side's K, in the same "
                                       "seed order; decides on the seed-averaged change (burnqed_core.eval.seeds)")
                     ] = 1,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Delta table across eval outputs (per budget, hard split, pass@k), newly solved / lost, plot, go/no-go on
    the primary statistic (pass@1 by cluster); with --seeds K, the seed-averaged change of two groups of runs."""
    from burnqed_core.cli.common import load
    from burnqed_core.eval.compare import COMPARE_PLOT, compare_dirs, format_compare, write_compare_plot

    prof = load(profile, verbose)
    if seeds > 1:
        from burnqed_core.eval.seeds import compare_seed_dirs, format_seed_verdict

        if len(dirs) != 2 * seeds:
            raise typer.BadParameter(f"--seeds {seeds} needs {2 * seeds} eval directories (got {len(dirs)})")
        before, after = dirs[:seeds], dirs[seeds:]
        v = compare_seed_dirs(before, after, regression_pp=prof.eval.regression_pp)
        typer.echo(format_seed_verdict(v, before, after))
        if fail_on_no_go and not v.go:
            raise typer.Exit(EXIT_NO_GO)
        return
    c = compare_dirs(dirs, regression_pp=prof.eval.regression_pp, ebm_min_gain_pp=prof.eval.ebm_min_gain_pp)
    typer.echo(format_compare(c))
    path = write_compare_plot(c, plot or Path(dirs[-1]) / COMPARE_PLOT)
    typer.echo(f"plot: {path}")
    if fail_on_no_go and not c.verdict.go:
        raise typer.Exit(EXIT_NO_GO)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
    app.command("compare")(compare_cmd)
