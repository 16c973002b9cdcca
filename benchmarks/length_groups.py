"""Training on length-sorted runs of a micro-batch (`training.length_groups`) against one padded batch.

    python benchmarks/length_groups.py [--pairs runs/tiny/base/base_tactic_pairs/pairs.parquet] [--steps 60]
                                       [--groups 1,4] [--profile tiny]

Reads real tactic pairs (by default the tiny main job's traced corpus: run `bash scripts/run_tiny.sh` first),
then, for each value of ``--groups``, pre-trains the profile's tiny base for ``--steps`` steps and trains a LoRA
adapter on it for as many, through the real loop (the pre-training's tokenizer and examples, AdamW, the cosine
schedule). Prints per run: the share of real tokens among the positions the forward passes computed (padding
included), tokens/s (real tokens per second of training steps), the wall time and the last training loss. The
runs alternate in one process, so their ratio is the figure to read on a shared machine.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import polars as pl


def padded_share(examples: list, batch_size: int, groups: int, steps: int, seed: int) -> float:
    """Real tokens / computed positions over the first ``steps`` micro-batches of the loop's sample order."""
    from burnqed_core.training.collate import length_groups
    from burnqed_core.training.loop import SampleOrder

    order = SampleOrder(len(examples), seed)
    real = computed = 0
    for step in range(steps):
        batch = [examples[i] for i in order.take(step * batch_size, batch_size)]
        for run in length_groups(batch, groups):
            lens = [len(e.input_ids) for e in run]
            real += sum(lens)
            computed += max(lens) * len(lens)
    return real / max(computed, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=Path, default=Path("runs/tiny/base/base_tactic_pairs/pairs.parquet"))
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--groups", default="1,4")
    ap.add_argument("--profile", default="tiny")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from burnqed_core.config import load_profile
    from burnqed_core.data.pairs.prompt import PromptFormat
    from burnqed_core.records import TacticPair
    from burnqed_core.training.sft import train_sft
    from burnqed_core.training.tiny_model import _pretrain_examples, pretrain_base

    if not args.pairs.exists():
        raise SystemExit(f"{args.pairs}: no such file (run `bash scripts/run_tiny.sh` first, or pass --pairs)")
    pairs = [TacticPair(**r) for r in pl.read_parquet(args.pairs).to_dicts()]
    base_cfg = load_profile(args.profile).training
    tiny = base_cfg.tiny_model.model_copy(update={"pretrain_steps": args.steps})
    fmt = PromptFormat(local_names=base_cfg.local_names, numerals=base_cfg.numerals)
    _, _, examples, _, _ = _pretrain_examples(pairs, [], base_cfg, fmt, None)
    print(f"{len(pairs)} pairs from {args.pairs}; {args.steps} steps of each")
    print(f"{'run':<10} {'groups':>6} {'real share':>10} {'tokens/s':>9} {'wall s':>7} {'last loss':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for groups in (int(g) for g in args.groups.split(",")):
            cfg = base_cfg.model_copy(update={"tiny_model": tiny, "length_groups": groups, "max_steps": args.steps})
            base = Path(tmp) / f"base-{groups}"
            t0 = time.perf_counter()
            m = pretrain_base(pairs, cfg, base, progress=False)
            share = padded_share(examples, tiny.pretrain_batch_size, groups, args.steps, cfg.seed)
            print(f"{'pretrain':<10} {groups:>6} {share:>10.2f} {m.tokens_per_s:>9.0f} "
                  f"{time.perf_counter() - t0:>7.1f} {m.final_train_loss:>10.5f}", flush=True)
            t0 = time.perf_counter()
            m = train_sft(pairs, [], cfg, Path(tmp) / f"lora-{groups}", base, progress=False)
            print(f"{'lora':<10} {groups:>6} {'':>10} {m.tokens_per_s:>9.0f} {time.perf_counter() - t0:>7.1f} "
                  f"{m.final_train_loss:>10.5f}", flush=True)


if __name__ == "__main__":
    main()
