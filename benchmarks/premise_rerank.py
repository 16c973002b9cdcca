"""The learned premise re-ranker against BM25 alone: recall@k on (state, premise) pairs of found proofs it never
trained on.

The re-ranker (`burnqed_core.premises.rerank`) is trained as the ``premise_reranker`` stage trains it: on the
pairs of the positive steps of ``--train-trajectories`` (the found proofs of earlier iterations), over
``--model``'s embeddings (a merged model folder), with the profile's ``premises.rerank`` settings (``enabled``
aside), the index of the loop's pool searches (the premise library of ``--library`` less the held-out module
families). It is measured on the pairs of ``--trajectories`` (a later iteration's searches); without them, the
theorems of the training trajectories are split by a hash of their name (``--holdout`` of them held out, never
trained on, not even on the re-ranker's own validation side).

A pair is recalled at k when its premise is among the k retrieved (BM25's order, then the re-ranked order; the
same candidates under the premise rule); both figures over the same pairs.

    python benchmarks/premise_rerank.py --library <runs>/base/premise_index --model <runs>/iter_2/merged_model \\
        --train-trajectories <runs>/iter_0/trajectories <runs>/iter_1/trajectories [--trajectories DIR ...] \\
        [--holdout 0.3] [--seeds 0 1 2] [-k 1 3 8 16] [--profile core]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.rerank import (
    PremisePair,
    RerankedIndex,
    adoption,
    load_reranker,
    premise_pairs,
    train_reranker,
)


def read_pairs(dirs: Sequence[Path], theorems: dict, index: PremiseIndex) -> list[PremisePair]:
    from burnqed_core.loop.inputs import trajectory_dirs
    from burnqed_core.trajectory_io import read_trajectories

    outputs = [p for d in dirs for p in (trajectory_dirs([d]) or [d])]
    return premise_pairs([r for p in outputs for r in read_trajectories(p)], theorems, index)


def held_out(name: str, fraction: float) -> bool:
    h = hashlib.blake2b(f"benchmark-holdout:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2.0**64 < fraction


async def recall(index: PremiseIndex, pairs: Sequence[PremisePair], ks: Sequence[int]) -> tuple[dict[int, float],
                                                                                             float]:
    """Recall@k over the (state, premise) pairs, and the median ms per state (a re-ranked index: prepared one
    state at a time, as a search of one theorem would)."""
    hit, total, times = dict.fromkeys(ks, 0), 0, []
    for p in pairs:
        t = time.perf_counter()
        await index.prepare([(p.theorem, p.state)], [max(ks)])
        got = [r.premise.name for r in index.retrieve(p.theorem, p.state, max(ks))]
        times.append(1000 * (time.perf_counter() - t))
        used = set(p.premises)
        total += len(used)
        for k in ks:
            hit[k] += len(used & set(got[:k]))
    return {k: hit[k] / max(total, 1) for k in ks}, statistics.median(times) if times else 0.0


def _line(r: dict[int, float]) -> str:
    return ", ".join(f"@{k} {100 * v:.1f}%" for k, v in r.items())


async def run(args: argparse.Namespace) -> int:
    import torch

    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.ebm.embeddings import policy_fingerprint
    from burnqed_core.loop.corpus import held_out_families
    from burnqed_core.policy.factory import make_policy
    from burnqed_core.premises.library import load_index

    torch.set_num_threads(args.threads)
    profile = load_profile(args.profile)
    d = profile.data
    index = load_index(args.library).without_families(held_out_families(d.benchmark, profile.eval.also, d.search_pool))
    theorems = {t.name: t for t in load_theorems(d.search_pool or d.corpus)}
    train = read_pairs(args.train_trajectories, theorems, index)
    if args.trajectories:
        test = read_pairs(args.trajectories, theorems, index)
        how = f"the pairs of {len(args.trajectories)} later trajectory folder(s)"
    else:
        test = [p for p in train if held_out(p.theorem.name, args.holdout)]
        train = [p for p in train if not held_out(p.theorem.name, args.holdout)]
        how = f"held out by a hash of the theorem's name ({args.holdout:.0%} of the theorems)"
    overlap = {p.theorem.name for p in train} & {p.theorem.name for p in test}
    print(f"index: {len(index):,} premises (held-out families left out); train: {len(train)} states "
          f"({sum(len(p.premises) for p in train)} pairs, {len({p.theorem.name for p in train})} theorems); "
          f"test: {len(test)} states ({sum(len(p.premises) for p in test)} pairs, "
          f"{len({p.theorem.name for p in test})} theorems), {how}; theorems in both: {len(overlap)}")
    if not train or not test:
        print("nothing to train or to measure on")
        return 1
    policy = make_policy(profile, args.model)
    fingerprint = policy_fingerprint(policy, args.model)
    ks = sorted(args.k)
    bm25, ms = await recall(index, test, ks)
    print(f"BM25 alone:           {_line(bm25)} (median {ms:.2f} ms per state)")
    cfg = profile.premises.rerank.model_copy(update={"enabled": True})
    for seed in args.seeds:
        with tempfile.TemporaryDirectory(prefix="burnqed-rerank-") as out:
            t = time.perf_counter()
            # measured whether or not the stage would adopt it (require_gain: said below)
            rec = await train_reranker(train, index, policy, fingerprint,
                                       cfg.model_copy(update={"seed": seed, "require_gain": False}), Path(out),
                                       model_path=args.model)
            train_s = time.perf_counter() - t
            reranked = RerankedIndex(index, load_reranker(out, policy, fingerprint))
            got, ms = await recall(reranked, test, ks)
        print(f"re-ranked (seed {seed}):  {_line(got)} (median {ms:.2f} ms per state; trained in {train_s:.1f} s)")
        gate = adoption(rec.report, cfg.model_copy(update={"seed": seed}))
        print(f"    training: {rec.report.summary()}; a = {rec.report.scale:.2f}, b = {rec.report.beta:.2f}")
        print(f"    the stage ({'require_gain' if cfg.require_gain else 'no gate'}): "
              f"{'adopted' if gate['adopted'] else 'not adopted'}, {gate['verdict']}")
    await policy.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, required=True, help="a premise_index stage folder")
    ap.add_argument("--model", type=Path, required=True, help="a merged model folder (the encoder)")
    ap.add_argument("--train-trajectories", type=Path, nargs="+", required=True,
                    help="trajectories stage folders (or .traj outputs) whose found proofs train the re-ranker")
    ap.add_argument("--trajectories", type=Path, nargs="*", default=[],
                    help="trajectories whose found proofs measure it (default: hold out by theorem name)")
    ap.add_argument("--holdout", type=float, default=0.3, help="share of the theorems held out without "
                    "--trajectories")
    ap.add_argument("--profile", default="core", help="its data (pool, held-out sets) and premises.rerank settings")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="re-ranker seeds (split, initial map, order)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of this process")
    ap.add_argument("-k", type=int, nargs="+", default=[1, 3, 8, 16])
    return asyncio.run(run(ap.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
