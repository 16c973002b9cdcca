"""Wall time of an eval: one search per budget (before) vs one search per
attempt at the largest budget (after).

Runs the ``burnqed_core`` that is on ``PYTHONPATH``: with a checkout whose
``eval.run`` still searches once per budget it measures that, with this one
the single search per attempt; so the same command, pointed at two
checkouts, gives the before/after figure on the same model and theorems::

    PYTHONPATH=/path/to/old python benchmarks/eval_budgets.py --model DIR --limit 24
    PYTHONPATH=$PWD        python benchmarks/eval_budgets.py --model DIR --limit 24

Lean start-up and model loading are not timed (one Lean worker, started
first, warmed up by one search); prints one JSON line with the wall time,
the searches run and the solve rate per budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.pool import LeanPool
from burnqed_core.policy.local import LocalPolicy


async def main(args: argparse.Namespace) -> dict[str, object]:
    from burnqed_core.eval import run as eval_run

    budgets = sorted(int(b) for b in args.budgets.split(","))
    over: dict[str, object] = {"eval.budgets": budgets, "lean.num_workers": 1}
    new = hasattr(eval_run, "attempt_dir")
    profile = load_profile(args.profile, overrides=over)
    theorems = sorted(load_theorems(args.theorems), key=lambda t: t.name)[:args.limit]
    policy = LocalPolicy.from_config(profile.policy, args.model)
    pool = LeanPool(profile.lean)
    await pool.start()
    try:
        out = Path(tempfile.mkdtemp(prefix="eval_budgets_"))
        # warm-up: Lean's first use of each tactic, the model's first generate
        from burnqed_core.policy.fixed import FixedTacticsPolicy
        from burnqed_core.search.engine import SearchEngine, resolve_sampling

        cfg = profile.search.model_copy(update={"max_nodes": 4})
        warm = SearchEngine(FixedTacticsPolicy(["omega", "simp", "decide"]), pool, cfg,
                            sampling=resolve_sampling(cfg))
        async for _ in warm.search_many(theorems[:4]):
            pass
        t0 = time.perf_counter()
        if new:
            rows = await eval_run.run_eval(profile, policy, pool, theorems, out / "eval", iteration=0,
                                           benchmark=args.theorems, model_path=args.model, progress=False)
            searches = profile.eval.pass_k
            solved = {b: len({r.theorem for r in rows if r.proved_within(b)}) for b in budgets}
        else:
            rows = await eval_run.run_eval(profile, policy, pool, theorems, out / "eval", iteration=0,
                                           benchmark=args.theorems, automation=None, model_path=args.model,
                                           progress=False)
            searches = len(budgets) * profile.eval.pass_n
            solved = {b: len({r.theorem for r in rows if r.budget == b and r.proved}) for b in budgets}
        wall = time.perf_counter() - t0
    finally:
        await pool.close()
        await policy.close()
    return {"mode": "one search per attempt" if new else "one search per budget", "wall_s": round(wall, 1),
            "searches_per_theorem": searches, "theorems": len(theorems), "budgets": budgets,
            "solved": {str(b): f"{n}/{len(theorems)}" for b, n in solved.items()}}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--theorems", default="bundled:benchmark")
    ap.add_argument("--limit", type=int, default=24)
    ap.add_argument("--budgets", default="8,24")
    ap.add_argument("--profile", default="tiny")
    a = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(json.dumps(asyncio.run(main(a))))
