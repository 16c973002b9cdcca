"""Encode throughput: batched vs one state at a time, through the EBM's
embeddings path (`ebm.embeddings.encode_states` on `LocalPolicy.encode`,
last-token L2-normalised pooling, Parquet cache parts).

Default workload: 256 distinct proof states (prompt format, as the EBM
encodes them) on the tiny profile's model shape (untrained, built here).
Modes, each into a fresh cache:

* ``batched``: ``encode_states(batch_size=B)`` (default B = 64);
* ``one at a time``: ``encode_states(batch_size=1)``.

Also printed: the raw ``policy.encode`` rate without the cache, and the
vectors of both modes agree (max abs difference). ``--model DIR`` runs any
causal-LM directory (e.g. a merged 7B on ``--device cuda``).

    OMP_NUM_THREADS=1 python benchmarks/encode_throughput.py [--states 256] [--batch 64]

(``policy.encode`` runs the model in a worker thread: set the thread count
with ``OMP_NUM_THREADS``; ``torch.set_num_threads`` applies to the calling
thread only.)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_batching import build_tiny

from burnqed_core.ebm.embeddings import (
    CacheMeta,
    EmbeddingCache,
    encode_states,
    encoder_text,
    model_fingerprint,
    state_key,
)
from burnqed_core.policy.local import LocalPolicy


def states(count: int) -> list[str]:
    return [f"x y : Nat\nh{i} : x + {i} = y\nih : ∀ (k : Nat), k < {i} → y - k ≥ x\n⊢ y - {i} = x ∧ {i} ≤ y"
            for i in range(count)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="a causal-LM dir (default: build the tiny model)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--states", type=int, default=256)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--repeats", type=int, default=3, help="best of N for each mode (a fresh cache each time)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or build_tiny(Path(tmp) / "tiny")
        policy = LocalPolicy(model_dir, device=args.device, batch_size=args.batch)
        n_params = sum(p.numel() for p in policy.model.parameters())
        sts = states(args.states)
        fp = model_fingerprint(model_dir)
        policy.encode_sync(sts[: args.batch])  # warm-up
        policy.encode_sync(sts[:1])

        results: dict[str, tuple[float, np.ndarray]] = {}
        for r in range(args.repeats):
            for name, bs in (("batched", args.batch), ("one at a time", 1)):
                cache = EmbeddingCache.open(Path(tmp) / f"{name.replace(' ', '_')}_{r}",
                                            CacheMeta(fingerprint=fp, pooling=policy.pooling))
                t0 = time.perf_counter()
                rep = asyncio.run(encode_states(policy, sts, cache, batch_size=bs, checkpoint_every=10_000))
                dt = time.perf_counter() - t0
                assert rep.encoded == len(sts)
                if name not in results or dt < results[name][0]:
                    results[name] = (dt, cache.matrix([state_key(s) for s in sts]))
                print(f"  {name} (run {r + 1}): {dt:.2f} s", flush=True)
        raw = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            asyncio.run(policy.encode([encoder_text(s) for s in sts]))  # what encode_states sends
            raw = min(raw, time.perf_counter() - t0)

    diff = float(np.abs(results["batched"][1] - results["one at a time"][1]).max())
    print(f"model {model_dir if args.model else 'tiny (built)'}: {n_params / 1e6:.2f} M parameters, "
          f"hidden {policy.hidden_size}, pooling {policy.pooling}, device {args.device}, "
          f"torch threads {torch.get_num_threads()}")
    print(f"workload: {args.states} distinct states (prompt format), batch {args.batch}, best of {args.repeats}")
    print(f"{'mode':<16}{'seconds':>9}{'states/s':>10}{'speed-up':>10}")
    one = results["one at a time"][0]
    for name, (t, _) in results.items():
        print(f"{name:<16}{t:>9.2f}{args.states / t:>10.1f}{one / t:>9.1f}x")
    print(f"{'raw encode':<16}{raw:>9.2f}{args.states / raw:>10.1f}{one / raw:>9.1f}x  (batched, no cache)")
    print(f"max |batched - one at a time| = {diff:.2e}")


if __name__ == "__main__":
    main()
