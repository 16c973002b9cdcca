"""`burnqed ebm encode|train|metrics|ablate|compare-configs`: the energy-based value function."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.errors import BurnqedError

app = typer.Typer(help="The energy-based value function: encode states, train the energy head, measure it.",
                  no_args_is_help=True)

TrajOpt = Annotated[list[Path], typer.Option("--trajectories", "-t", help="search output directories "
                                             "(repeat for several), e.g. runs/tiny/iter_0/trajectories/search.traj")]
EmbOpt = Annotated[Path, typer.Option("--embeddings", "-e", help="embeddings cache directory (from `ebm encode`)")]
KnownOpt = Annotated[Path | None, typer.Option("--known", help="tactic pairs (Parquet) whose known proofs give the "
                                               "unproved searches their hindsight positives (ebm.hindsight); give "
                                               "the training side only, or --split")]
SplitOpt = Annotated[Path | None, typer.Option("--split", help="with --known: read only the training side of this "
                                               "split.json (a base model's)")]


def _known(pairs: Path | None, split: Path | None) -> dict[str, list[str]] | None:
    if pairs is None:
        if split is not None:
            raise BurnqedError("--split only restricts --known: give both")
        return None
    from burnqed_core.ebm.hindsight import read_known

    for p in (pairs, split):
        if p is not None and not p.is_file():
            raise BurnqedError(f"{p}: no such file")
    return read_known(pairs, split)


def _check_dirs(paths: list[Path]) -> None:
    for p in paths:
        if not p.exists():
            raise BurnqedError(f"{p}: no such trajectory output")


@app.command()
def encode(
    trajectories: TrajOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="embeddings cache directory (resumed if it exists)")],
    model: Annotated[Path | None, typer.Option("--model", "-m", help="encoder model directory "
                                               "(default: policy.model_path)")] = None,
    known: KnownOpt = None,
    split: SplitOpt = None,
    no_progress: Annotated[bool, typer.Option("--no-progress")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Encode every unique proof state and root goal of the trajectories (batched, deduplicated,
    a cache part every ebm.checkpoint_every states; a rerun encodes only what is missing); with --known,
    the known proofs' states of the searched theorems too."""
    from burnqed_core.ebm.run import encode_trajectories
    from burnqed_core.policy.factory import make_policy

    prof = load(profile, verbose)
    _check_dirs(trajectories)
    paths = _known(known, split)
    if prof.policy.backend == "fixed":
        raise BurnqedError("ebm encode needs a model policy (policy.backend local or sglang)")

    async def main() -> None:
        policy = make_policy(prof, model)
        try:
            rep = await encode_trajectories(policy, trajectories, out, prof.ebm, model_path=model,
                                            progress=not no_progress, known=paths)
        finally:
            await policy.close()
        typer.echo(f"{rep.states} unique states: {rep.encoded} encoded ({rep.states_per_s:.1f} states/s), "
                   f"{rep.cached} already cached; {rep.dim}-d, pooling {rep.pooling}, in {out}")

    asyncio.run(main())


@app.command()
def train(
    trajectories: TrajOpt,
    embeddings: EmbOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="EBM directory (head.pt, ebm.json, metrics.json)")],
    steps: Annotated[int | None, typer.Option("--steps", min=1, help="override ebm.steps")] = None,
    no_resume: Annotated[bool, typer.Option("--no-resume", help="discard a checkpoint in --out")] = False,
    iteration: Annotated[int | None, typer.Option("--iteration", help="recorded in ebm.json")] = None,
    known: KnownOpt = None,
    split: SplitOpt = None,
    no_progress: Annotated[bool, typer.Option("--no-progress")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Train the goal-conditioned energy head with InfoNCE (resumes from its checkpoint)."""
    from burnqed_core.ebm.run import load_training_data
    from burnqed_core.ebm.train import train_ebm

    prof = load(profile, verbose)
    _check_dirs(trajectories)
    cfg = prof.ebm if steps is None else prof.ebm.model_copy(update={"steps": steps})
    z, data, meta = load_training_data(embeddings, trajectories, _known(known, split))
    rep = train_ebm(z, data, cfg, out, meta, iteration=iteration, resume=not no_resume, progress=not no_progress)
    typer.echo(rep.summary())
    typer.echo(f"saved to {out}")


@app.command()
def metrics(
    ebm: Annotated[Path, typer.Option("--ebm", help="EBM directory")],
    trajectories: TrajOpt,
    embeddings: EmbOpt,
    all_theorems: Annotated[bool, typer.Option("--all", help="all theorems, not only the held-out split")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the metrics record as JSON")] = False,
    known: KnownOpt = None,
    split: SplitOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Energy gap, rank-1 (overall, by depth, vs failed siblings) with chance, encoder separation."""
    from burnqed_core.ebm.run import measure

    prof = load(profile, verbose)
    _check_dirs(trajectories)
    m = measure(ebm, embeddings, trajectories, prof.ebm, held_out_only=not all_theorems,
                known=_known(known, split))
    if as_json:
        typer.echo(json.dumps(m.model_dump(mode="json"), indent=2))
        return
    typer.echo(m.summary())
    for depth, r in m.rank1_by_depth.items():
        if r.rank1 is not None:
            typer.echo(f"  depth {depth:>2}: rank-1 {r.rank1:.3f} (chance {r.chance:.3f}, n={r.n})")
    for w in m.warnings:
        typer.echo(f"warning: {w}")


@app.command()
def ablate(
    iteration: Annotated[int, typer.Option("--iteration", "-i", help="the iteration whose model and EBM are "
                                           "searched with (1 or later)")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="output directory (default: "
                                             "<work_dir>/iter_N/ebm_ablation; resumed if it exists)")] = None,
    min_steps: Annotated[int, typer.Option("--min-steps", help="only exercises whose known proof has at least "
                                           "this many tactics")] = 4,
    pass_k: Annotated[int | None, typer.Option("--pass-k", help="attempts per theorem and variant, independent "
                                               "seeds (default: eval.pass_k)")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """The EBM ablation on unsearched exercises: withheld corpus theorems with long proofs that no earlier
    iteration searched, searched with iteration N's model with and without its EBM (same seeds), with the
    paired intervals of the change. Exercises, not a benchmark (their families are in the corpus)."""
    from burnqed_core.cli.common import with_changes
    from burnqed_core.loop.exercises import run_exercise_ablation

    prof = load(profile, verbose)
    if pass_k is not None:
        if pass_k < 1:
            raise BurnqedError("--pass-k must be >= 1")
        prof = prof.model_copy(update={"eval": with_changes(prof.eval, pass_k=pass_k)})
    target = out or prof.paths.work_dir / f"iter_{iteration}" / "ebm_ablation"
    plan, res = asyncio.run(run_exercise_ablation(prof, iteration, target, min_steps=min_steps,
                                                  progress=not no_progress))
    typer.echo(plan.describe() + "\n")
    typer.echo(res.summary)  # the table, with the ablation and its paired intervals
    typer.echo(f"\nreport: {target}/report.md, plan {target}/exercises.json")


@app.command("compare-configs")
def compare_configs(
    iteration: Annotated[int, typer.Option("--iteration", "-i", help="iteration N (1 or later): A is N-1's model, "
                                           "B and C are N's adapter trained alone and jointly")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="output directory (default: "
                                             "<work_dir>/iter_N/ebm_abc; resumed if it exists)")] = None,
    min_steps: Annotated[int, typer.Option("--min-steps", help="only exercises whose known proof has at least "
                                           "this many tactics")] = 4,
    no_progress: Annotated[bool, typer.Option("--no-progress")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """The seeds' three configurations on the same unsearched exercises, same seeds and Lean budget: A (iteration
    N-1, EBM trained apart), B (N's SFT-only adapter, EBM trained apart), C (N's adapter trained jointly with its
    EBM, ebm.joint); each configuration's embedding and EBM metrics, solve rates and EBM effect, and the paired
    intervals of A -> B and B -> C. Exercises, not a benchmark."""
    from burnqed_core.loop.configs_abc import REPORT_FILE, run_abc

    prof = load(profile, verbose)
    if iteration < 1:
        raise BurnqedError("--iteration must be >= 1 (A is iteration N-1's model)")
    target = out or prof.paths.work_dir / f"iter_{iteration}" / "ebm_abc"
    asyncio.run(run_abc(prof, iteration, target, min_steps=min_steps, progress=not no_progress))
    typer.echo((target / REPORT_FILE).read_text(encoding="utf-8"))
