"""How often the policy proposes a tactic that Lean accepts at a theorem's root.

For every theorem of a set (default: the bundled benchmark), start its proof,
sample k tactics from the model at the root state, check them all in Lean
(one batched call), and count the root states with at least one accepted
tactic (and those closed in one step). Issue 12 asks this of the tiny model
after pre-training + iteration-0 LoRA: >= half of the benchmark's root states.

    python benchmarks/root_acceptance.py --model runs/tiny/iter_0/merged_model [--k 8] [--theorems SPEC]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.pool import LeanPool
from burnqed_core.policy.local import LocalPolicy


async def measure(model: Path, theorems_spec: str, k: int, temperature: float, profile: str) -> dict:
    prof = load_profile(profile)
    theorems = load_theorems(theorems_spec)
    policy = LocalPolicy.from_config(prof.policy, model_path=model, seed=prof.search.seed)
    t0 = time.perf_counter()
    async with LeanPool(prof.lean) as pool:
        starts = await asyncio.gather(*(pool.start_proof(t) for t in theorems))
        roots = [(t, r.state) for t, r in zip(theorems, starts, strict=True) if r.ok and r.state is not None]
        t1 = time.perf_counter()
        cands = await policy.generate([s.text for _, s in roots], n=k, temperature=temperature)
        t2 = time.perf_counter()
        items, owners = [], []
        for (t, s), cs in zip(roots, cands, strict=True):
            for tac in dict.fromkeys(c.tactic for c in cs if c.tactic.strip()):
                items.append((s, tac))
                owners.append(t.name)
        results = await pool.apply_many(items)
        t3 = time.perf_counter()
    await policy.close()
    per: dict[str, dict[str, list[str]]] = {t.name: {"accepted": [], "closed": [], "rejected": []} for t, _ in roots}
    for name, (_, tac), res in zip(owners, items, results, strict=True):
        d = per[name]
        if res.ok and res.state is not None:
            d["accepted"].append(tac)
            if res.state.is_proved:
                d["closed"].append(tac)
        else:
            d["rejected"].append(tac)
    return {
        "model": str(model), "theorems": len(theorems), "started": len(roots), "k": k, "temperature": temperature,
        "accepted": sum(1 for d in per.values() if d["accepted"]),
        "closed": sum(1 for d in per.values() if d["closed"]),
        "unique_candidates": len(items),
        "seconds": {"start": round(t1 - t0, 1), "generate": round(t2 - t1, 1), "lean": round(t3 - t2, 1)},
        "per_theorem": per,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, type=Path, help="a causal-LM directory (e.g. a merged model)")
    ap.add_argument("--theorems", default="bundled:benchmark")
    ap.add_argument("--k", type=int, default=8, help="samples per root state")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--json", type=Path, help="write the full result here")
    a = ap.parse_args()
    res = asyncio.run(measure(a.model, a.theorems, a.k, a.temperature, a.profile))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    n = res["started"]
    print(f"root states with >= 1 Lean-accepted tactic among {a.k} samples (T={a.temperature}): "
          f"{res['accepted']}/{n} ({100 * res['accepted'] / max(n, 1):.1f}%); closed in one step: "
          f"{res['closed']}/{n}; {res['theorems'] - n} statements did not start; "
          f"{res['unique_candidates']} unique candidates; times {res['seconds']}")


if __name__ == "__main__":
    main()
