"""Search overhead and throughput on the real embedded Lean.

Prints, in one run:

* the engine's own time per node against the policy's and Lean's (goal: the
  engine is < 1 % of the total), and
* search throughput (nodes/s, tactics/s) with frontier batch 1 vs 8 vs 32
  (theorems searched at once: max(batch, --concurrency), so a batch can fill).

Usage::

    python benchmarks/search_overhead.py [--model DIR] [--theorems bundled:benchmark] [--limit 32]

Without ``--model`` the policy is the fixed automation list (policy time is
then ~0 and the figures show Lean vs engine); with ``--model`` it is the
local transformers policy on that directory. One Lean worker is started and
shared by every configuration; a warm-up search runs first so that the
first configuration does not pay for Lean's first use of each tactic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.pool import LeanPool
from burnqed_core.policy.base import Policy
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine, resolve_sampling

AUTOMATION = ["omega", "simp", "decide", "intro h", "constructor", "rfl", "simp_all", "exact h"]


async def run_config(policy: Policy, pool: LeanPool, theorems: list[Theorem], profile: Any, batch: int,
                     concurrency: int, max_nodes: int, overlap: bool) -> dict[str, Any]:
    cfg = profile.search.model_copy(update={"frontier_batch": batch, "concurrency": concurrency,
                                            "max_nodes": max_nodes})
    sampling = resolve_sampling(cfg, max_new_tokens=profile.policy.max_new_tokens)
    engine = SearchEngine(policy, pool, cfg, sampling=sampling, overlap=overlap)
    t0 = time.perf_counter()
    proved = infra = 0
    async for o in engine.search_many(theorems):
        proved += o.result.proved
        infra += o.result.infra_failures
    wall = time.perf_counter() - t0
    st = engine.stats
    busy = st.policy_s + st.lean_s + st.engine_s
    return {
        "frontier_batch": batch,
        "concurrency": concurrency,
        "overlap": overlap,
        "theorems": len(theorems),
        "proved": proved,
        "infra_failures": infra,
        "nodes": st.nodes,
        "expansions": st.expansions,
        "tactics": st.pairs_applied,
        "wall_s": wall,
        "nodes_per_s": st.nodes / wall,
        "tactics_per_s": st.pairs_applied / wall,
        "policy_s": st.policy_s,
        "lean_s": st.lean_s,
        "engine_s": st.engine_s,
        "engine_ms_per_node": 1000 * st.engine_s / max(st.nodes, 1),
        "policy_ms_per_node": 1000 * st.policy_s / max(st.nodes, 1),
        "lean_ms_per_node": 1000 * st.lean_s / max(st.nodes, 1),
        "engine_fraction": st.engine_s / busy if busy else 0.0,
        "states_per_generate": st.states_generated / max(st.generate_calls, 1),
        "pairs_per_apply": st.pairs_applied / max(st.apply_calls, 1),
    }


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    profile = load_profile(args.profile, overrides={"lean.num_workers": 1})
    theorems = load_theorems(args.theorems)[: args.limit]
    if args.model:
        from burnqed_core.policy.local import LocalPolicy

        policy: Policy = LocalPolicy.from_config(profile.policy, model_path=args.model, seed=0)
    else:
        policy = FixedTacticsPolicy(AUTOMATION)
    rows = []
    async with LeanPool(profile.lean) as pool:
        await run_config(policy, pool, theorems[:4], profile, 8, args.concurrency, args.max_nodes,
                         not args.no_overlap)  # warm-up
        for batch in args.batches:
            # at least B theorems at once, or a batch of B could never fill
            row = await run_config(policy, pool, theorems, profile, batch, max(batch, args.concurrency),
                                   args.max_nodes, not args.no_overlap)
            rows.append(row)
            print(f"  frontier_batch={batch:<3} done in {row['wall_s']:.1f} s", flush=True)
    await policy.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="local policy model dir (default: fixed automation tactics)")
    ap.add_argument("--theorems", default="bundled:benchmark")
    ap.add_argument("--limit", type=int, default=32)
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--concurrency", type=int, default=8, help="theorems at once (at least the batch)")
    ap.add_argument("--max-nodes", type=int, default=16)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--no-overlap", action="store_true", help="generate only after Lean answered (no pipelining)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    policy_name = f"local {args.model}" if args.model else "fixed automation tactics"
    print(f"search overhead: {args.limit} theorems of {args.theorems}, policy: {policy_name}, "
          f"concurrency max(batch, {args.concurrency}), max_nodes {args.max_nodes}, "
          f"overlap {'off' if args.no_overlap else 'on'}", flush=True)
    rows = asyncio.run(main_async(args))
    print()
    print(f"{'batch':>5} {'conc':>4} {'nodes':>6} {'proved':>6} {'infra':>5} {'wall s':>7} {'nodes/s':>8} {'tac/s':>7} "
          f"{'policy ms/node':>14} {'Lean ms/node':>12} {'engine ms/node':>14} {'engine %':>8}")
    for r in rows:
        print(f"{r['frontier_batch']:>5} {r['concurrency']:>4} {r['nodes']:>6} {r['proved']:>6} "
              f"{r['infra_failures']:>5} "
              f"{r['wall_s']:>7.1f} {r['nodes_per_s']:>8.2f} "
              f"{r['tactics_per_s']:>7.1f} {r['policy_ms_per_node']:>14.1f} {r['lean_ms_per_node']:>12.1f} "
              f"{r['engine_ms_per_node']:>14.3f} {100 * r['engine_fraction']:>7.3f}%")
    base = rows[0]["nodes_per_s"] if rows else 0
    for r in rows[1:]:
        print(f"frontier batch {r['frontier_batch']} vs {rows[0]['frontier_batch']}: "
              f"{r['nodes_per_s'] / base:.2f}x nodes/s")
    worst = max((r["engine_fraction"] for r in rows), default=0.0)
    print(f"engine share of policy+Lean+engine time: at most {100 * worst:.3f}% (goal < 1%): "
          f"{'OK' if worst < 0.01 else 'ABOVE GOAL'}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
