"""SFT validation loss with and without the split drawn before pre-training, and with the LR floor (issue 21).

From traced base pairs (e.g. ``runs/tiny/base/traced/pairs.parquet`` of a loop run; no Lean needed here),
with the profile's model and step counts, three runs of pre-training + iteration-0 LoRA SFT, all validated on
the same theorems (the profile's ``data.seed`` / ``data.val_fraction`` split):

* ``leaky``: the former loop: the base pre-trained on every pair (validation theorems included), LR decayed
  to 0 at the last step;
* ``split``: the base pre-trained on the training side only, LR decayed to 0;
* ``split+floor``: the same with the profile's ``training.min_lr_ratio`` (the LR ends at that fraction).

Prints per run the pre-training's best held-out loss (whole example) and the SFT validation loss (tactic
tokens) before training and at each eval, the best, and the last step's learning rate. The ``leaky`` figures
are on theorems its base has seen: not comparable as generalisation, which is the point of the split.

    OMP_NUM_THREADS=1 python benchmarks/split_and_schedule.py --pairs runs/tiny/base/traced/pairs.parquet \
        [--profile tiny] [--out /tmp/split_schedule]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from burnqed_core.config import TrainingConfig, load_profile
from burnqed_core.data.pairs.prepare import prepare_pairs, split_theorems
from burnqed_core.loop.corpus import frame_pairs
from burnqed_core.record_io import read_records
from burnqed_core.records import TacticPair
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.sft import train_sft
from burnqed_core.training.tiny_model import pretrain_base


def _curve(m: TrainingMetrics) -> str:
    if not m.eval_curve:
        return f"no held-out set; last lr {m.loss_curve[-1].lr:.2e}" if m.loss_curve else "-"
    pts = ", ".join(f"{e.step}: {e.eval_loss:.4f}" for e in m.eval_curve)
    last_lr = m.loss_curve[-1].lr if m.loss_curve else float("nan")
    best = f"{m.best_eval_loss:.4f} @ {m.best_step}" if m.best_eval_loss is not None else "-"
    return f"before {m.initial_eval_loss or float('nan'):.4f}; {pts}; best {best}; last lr {last_lr:.2e}"


def main(pairs_file: Path, profile_name: str, out: Path) -> None:
    profile = load_profile(profile_name)
    d, cfg = profile.data, profile.training
    pairs = read_records(pairs_file, TacticPair)
    split = split_theorems((p.theorem for p in pairs), d.seed, d.val_fraction)
    prepared = prepare_pairs(pairs, d.val_fraction, d.seed, d.max_tokens, val_theorems=split.val)
    train, val = frame_pairs(prepared.train), frame_pairs(prepared.val)
    print(f"{len(pairs)} pairs of {len(split.train) + len(split.val)} theorems; validation: {len(val)} pairs of "
          f"{len(split.val)} theorems; profile {profile.name}, {cfg.tiny_model.pretrain_steps} pre-training and "
          f"{cfg.max_steps} SFT steps")
    runs: list[tuple[str, list[TacticPair], TrainingConfig]] = [
        ("leaky", list(pairs), cfg.model_copy(update={"min_lr_ratio": 0.0})),
        ("split", train, cfg.model_copy(update={"min_lr_ratio": 0.0})),
        (f"split+floor {cfg.min_lr_ratio}", train, cfg),
    ]
    for name, pretrain_on, c in runs:
        tag = name.split()[0]
        base = out / f"base_{tag}"
        held_out = val if tag != "leaky" else []  # the former loop pre-trained without a validation set
        pm = pretrain_base(pretrain_on, c, base, val=held_out, progress=False)
        sm = train_sft(train, val, c, out / f"sft_{tag}", base, progress=False)
        print(f"{name:>16} | pre-training held-out: {_curve(pm)}")
        print(f"{'':>16} | SFT validation:        {_curve(sm)}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=Path, required=True, help="traced base pairs (Parquet/JSONL)")
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--out", type=Path, default=Path("/tmp/split_schedule"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    main(args.pairs, args.profile, args.out)
