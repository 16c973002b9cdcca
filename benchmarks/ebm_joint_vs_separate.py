"""Joint vs separate training of the LoRA adapter and the energy head (seed 002's
configs B vs C), on real trajectories of a tiny model. Prints one row each:

* ``separate``: LoRA SFT (`train_sft`), merge, encode the trajectories with the
  merged model, train the head on those frozen embeddings (`train_ebm`);
* ``joint``: `train_joint` (SFT + lambda x InfoNCE through the encoder, same
  SFT steps), merge, and the jointly trained head on the merged model's
  embeddings;

with the SFT validation loss, the head's rank-1 on held-out theorems (all K
negatives and failed siblings only, chance beside them), and the merged
encoder's separation (centroid ratio, linear probe).

    python benchmarks/ebm_joint_vs_separate.py --base MODEL_DIR --pairs pairs.parquet -t traj1 [-t traj2] \
        [--steps 80] [--lambda 0.1] [--work DIR]

``--pairs``: tactic pairs (Parquet) for SFT, split by theorem here; ``-t``:
search outputs of ``--base`` (e.g. from ``burnqed search``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path

import torch

from burnqed_core.config import load_profile
from burnqed_core.ebm.data import build_data, theorem_in_val
from burnqed_core.ebm.embeddings import CacheMeta, EmbeddingCache, encode_states, model_fingerprint, trajectory_texts
from burnqed_core.ebm.metrics import EbmMetrics
from burnqed_core.ebm.run import measure, read_trajectory_dirs
from burnqed_core.ebm.train import train_ebm
from burnqed_core.policy.local import LocalPolicy
from burnqed_core.record_io import read_records
from burnqed_core.records import TacticPair
from burnqed_core.training.joint import attach_encoder, train_joint
from burnqed_core.training.merge import merge_adapter
from burnqed_core.training.sft import evaluate, train_sft


def encode(model: Path, trajs: list[Path], cache_dir: Path) -> None:
    policy = LocalPolicy(model, batch_size=64)
    cache = EmbeddingCache.open(cache_dir, CacheMeta(fingerprint=model_fingerprint(model), pooling=policy.pooling))
    asyncio.run(encode_states(policy, trajectory_texts(read_trajectory_dirs(trajs)), cache))


def sft_eval_loss(model_dir: Path, val: list[TacticPair], max_seq_len: int) -> float:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from burnqed_core.training.collate import CompletionCollator, encode_pairs

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    ex, _ = encode_pairs(tok, ((p.state_before, p.tactic) for p in val), max_seq_len)
    return evaluate(model, ex, CompletionCollator(tok.pad_token_id), 16, "cpu")


def row(name: str, loss: float, m: EbmMetrics, seconds: float) -> str:
    s = m.separation
    sib = m.sibling_rank1
    return (f"{name:<9}{loss:>9.3f}{m.rank1.rank1 or 0:>8.3f}{m.rank1.chance or 0:>8.3f}{sib.rank1 or 0:>9.3f}"
            f"{sib.chance or 0:>8.3f}{sib.n:>5}{(s.centroid_l2_ratio if s else 0) or 0:>9.3f}"
            f"{(s.linear_probe_acc if s else 0) or 0:>7.3f}{seconds:>8.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("-t", "--trajectories", type=Path, action="append", required=True)
    ap.add_argument("--steps", type=int, default=80, help="SFT steps of both runs")
    ap.add_argument("--ebm-steps", type=int, default=None, help="steps of the separate head (default: ebm.steps)")
    ap.add_argument("--lambda", dest="lam", type=float, default=0.1)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--profile", default="tiny")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    prof = load_profile(args.profile)
    ecfg = prof.ebm if args.ebm_steps is None else prof.ebm.model_copy(update={"steps": args.ebm_steps})
    ecfg = ecfg.model_copy(update={"joint": ecfg.joint.model_copy(update={"ebm_weight": args.lam})})
    tcfg = prof.training.model_copy(update={"max_steps": args.steps, "max_steps_later": args.steps})
    pairs = read_records(args.pairs, TacticPair)
    val = [p for p in pairs if theorem_in_val(p.theorem, 0.1, 1)]
    train = [p for p in pairs if not theorem_in_val(p.theorem, 0.1, 1)]
    records = read_trajectory_dirs(args.trajectories)
    data = build_data(records)
    print(f"{len(train)} train / {len(val)} val SFT pairs; {len(data.positives)} positives of "
          f"{len({p.theorem for p in data.positives})} proved theorems, {len(data.negatives)} negative states")
    work = args.work or Path(tempfile.mkdtemp(prefix="ebm-joint-"))
    rows = []

    t0 = time.perf_counter()
    train_sft(train, val, tcfg, work / "sep_adapter", args.base, iteration=0, progress=False)
    merge_adapter(work / "sep_adapter", work / "sep_merged")
    encode(work / "sep_merged", args.trajectories, work / "sep_emb")
    cache = EmbeddingCache.load(work / "sep_emb")
    train_ebm(cache.matrix(data.keys), data, ecfg, work / "sep_ebm", cache.meta, progress=False)
    m = measure(work / "sep_ebm", work / "sep_emb", args.trajectories, ecfg)
    rows.append(row("separate", sft_eval_loss(work / "sep_merged", val, tcfg.max_seq_len), m, time.perf_counter() - t0))

    t0 = time.perf_counter()
    train_joint(train, val, records, tcfg, ecfg, work / "joint_adapter", args.base, iteration=0, progress=False)
    merge_adapter(work / "joint_adapter", work / "joint_merged")
    encode(work / "joint_merged", args.trajectories, work / "joint_emb")
    attach_encoder(work / "joint_adapter", work / "joint_merged", work / "joint_ebm")
    m = measure(work / "joint_ebm", work / "joint_emb", args.trajectories, ecfg)
    rows.append(row("joint", sft_eval_loss(work / "joint_merged", val, tcfg.max_seq_len), m, time.perf_counter() - t0))

    print(f"SFT {args.steps} steps; lambda {args.lam}; separate head {ecfg.steps} steps; K = {ecfg.num_negatives}; "
          f"held-out theorems (ebm.val_fraction {ecfg.val_fraction})")
    print(f"{'run':<9}{'SFT val':>9}{'rank-1':>8}{'chance':>8}{'sib r-1':>9}{'chance':>8}{'n':>5}{'centroid':>9}"
          f"{'probe':>7}{'sec':>8}")
    for r in rows:
        print(r)
    print(f"outputs in {work}")


if __name__ == "__main__":
    main()
