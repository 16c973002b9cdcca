"""`burnqed train ...` commands: pre-train the tiny base, LoRA/QLoRA SFT, merge/export."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.errors import DataError

app = typer.Typer(help="Train models: the tiny base model, LoRA/QLoRA fine-tuning, merge and export.",
                  no_args_is_help=True)

NoResumeOpt = Annotated[bool, typer.Option("--no-resume", help="discard checkpoints in --out and start over")]
StepsOpt = Annotated[int | None, typer.Option("--max-steps", min=1, help="override the profile's step count")]


def _read_pairs(paths: list[Path]):  # -> (train, val, fingerprints)
    from burnqed_core.record_io import file_sha256, read_records
    from burnqed_core.records import TacticPair
    from burnqed_core.training.sft import load_pairs_dir

    if len(paths) == 1 and paths[0].is_dir():
        return load_pairs_dir(paths[0])
    train = []
    prints = {}
    for p in paths:
        if p.is_dir():
            raise DataError(f"{p}: a directory can only be given alone (a prepared train/val dir)")
        train.extend(read_records(p, TacticPair))
        prints[str(p.name)] = file_sha256(p)
    return train, [], prints


@app.command()
def base(
    pairs: Annotated[list[Path], typer.Option("--pairs", help="tactic pairs (Parquet/JSONL; repeat for several) or "
                                              "a prepared dir with train.parquet + val.parquet")],
    out: Annotated[Path | None, typer.Option("--out", help="model dir (default: <paths.home>/models/tiny-base)")]
    = None,
    max_steps: StepsOpt = None,
    no_resume: NoResumeOpt = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Pre-train the tiny base model from scratch (BPE tokenizer + small Llama; resumes when re-run)."""
    from burnqed_core.training.tiny_model import default_base_dir, pretrain_base

    prof = load(profile, verbose)
    cfg = prof.training
    if max_steps is not None:
        cfg = cfg.model_copy(update={"tiny_model": cfg.tiny_model.model_copy(update={"pretrain_steps": max_steps})})
    train, val, prints = _read_pairs(pairs)
    out = out or default_base_dir(prof.paths.home)
    m = pretrain_base(train, cfg, out, val=val, data_fingerprints=prints, resume=not no_resume)
    typer.echo(m.summary())
    typer.echo(f"wrote {out}")


@app.command()
def sft(
    pairs: Annotated[Path, typer.Option("--pairs", help="prepared pairs dir (train.parquet, val.parquet) from "
                                        "`burnqed data prepare`")],
    out: Annotated[Path, typer.Option("--out", help="output dir: adapter, tokenizer, metrics.json, run.json, "
                                      "checkpoints/")],
    base_model: Annotated[str | None, typer.Option("--base", help="base model dir or name (default: the profile's "
                                                   "training.base_model; 'tiny' = <paths.home>/models/tiny-base)")]
    = None,
    from_dir: Annotated[Path | None, typer.Option("--from", help="previous iteration's adapter or merged model dir "
                                                  "(warm start)")] = None,
    qlora: Annotated[bool | None, typer.Option("--qlora/--no-qlora", help="4-bit NF4 base (default: profile)")]
    = None,
    iteration: Annotated[int, typer.Option("--iteration", min=0, help="N > 0: lr x decay^N, max_steps_later")] = 0,
    max_steps: StepsOpt = None,
    no_resume: NoResumeOpt = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """LoRA / QLoRA fine-tuning on tactic pairs (tactic-only loss, resumable, best-eval checkpoint)."""
    from burnqed_core.training.sft import load_pairs_dir, train_sft
    from burnqed_core.training.tiny_model import resolve_base_model

    prof = load(profile, verbose)
    cfg = prof.training
    if max_steps is not None:
        cfg = cfg.model_copy(update={"max_steps": max_steps, "max_steps_later": max_steps})
    base = base_model or resolve_base_model(cfg, prof.paths.home)
    train, val, prints = load_pairs_dir(pairs)
    m = train_sft(train, val, cfg, out, base, iteration=iteration, warm_from=from_dir, qlora=qlora,
                  data_fingerprints=prints, resume=not no_resume)
    typer.echo(m.summary())
    typer.echo(f"wrote {out}")


@app.command()
def merge(
    adapter: Annotated[Path, typer.Option("--adapter", help="adapter dir written by `burnqed train sft`")],
    out: Annotated[Path, typer.Option("--out", help="merged model dir (safetensors + tokenizer + config)")],
    base_model: Annotated[str | None, typer.Option("--base", help="base model (default: the adapter's)")] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="skip the logits comparison")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Merge an adapter into its float32 base, export safetensors, verify logits against the adapter."""
    from burnqed_core.training.merge import merge_adapter

    cfg = load(profile, verbose).training
    report = merge_adapter(adapter, out, base_model=base_model, shard_size=cfg.shard_size, verify=not no_verify)
    typer.echo(report.summary())
