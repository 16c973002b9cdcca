"""The prover of a `core` run against baseline (c) with retrieval on ALL of `core:test`, at equal Lean checks.

The loop's eval reads a fixed sample of `core:test` (`eval.sample`), whose interval is wide; this measures, for
saved models of a finished run, the eval's main variant (policy + automation + EBM, the profile's search with
its structural and premise steps, `eval.num_candidates` samples) at iteration ``--last`` and ``--first`` and
(c) with retrieval (`burnqed_core.eval.baselines.structural.search_config`), every searcher capped at the
profile's `search.max_checks`, on every theorem of the set, one Lean pool, each proof re-checked (a searcher
whose rows are saved in ``--out`` is read back, not searched again). Prints the solve rates with the checks per
theorem and the paired cluster-bootstrap changes (pass@1 by cluster, the primary statistic) of last - first
and last - (c) with retrieval. Report only: nothing here chooses a setting.

    python benchmarks/core_full_eval.py --run runs/core [--first 0 --last 2] [--set core:test] [--out DIR]
        [--skip-first]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.ebm.scorer import load_energy_scorer
from burnqed_core.eval.baselines.structural import search_config
from burnqed_core.eval.run import RESULTS_FILE, run_eval
from burnqed_core.eval.summary.aggregate import SummaryOptions, summarize
from burnqed_core.eval.summary.paired import paired_deltas
from burnqed_core.lean.pool import LeanPool
from burnqed_core.policy.local import LocalPolicy
from burnqed_core.policy.structural import StructuralPolicy
from burnqed_core.premises.library import load_index
from burnqed_core.record_io import read_records
from burnqed_core.records import EvalResult


def _line(label: str, rows: list) -> str:
    solved = {r.theorem for r in rows if r.proved}
    names = {r.theorem for r in rows}
    checks = sum(r.checks for r in rows) / max(1, len(rows))
    return f"{label}: {len(solved)}/{len(names)} proved, {checks:.1f} checks per theorem"


async def _searcher(args: argparse.Namespace, prof, pool, theorems, index, which: str) -> list:
    out = args.out / which
    budgets = [max(prof.eval.budgets)]
    if which == "c_retrieval":
        return await run_eval(prof, StructuralPolicy(), pool, theorems, out, iteration=0, benchmark=args.set,
                              budgets=budgets, pass_k=1, progress=not args.no_progress,
                              search=search_config(prof, True), premises=index)
    it = int(which.removeprefix("iter_"))
    model = args.run / f"iter_{it}" / "merged_model"
    policy = LocalPolicy.from_config(prof.policy, model_path=model)
    ebm = args.run / f"iter_{it}" / "ebm"
    scorer = load_energy_scorer(ebm, policy) if (ebm / "head.pt").is_file() else None  # iteration 0 has none
    try:
        return await run_eval(prof, policy, pool, theorems, out, iteration=it, benchmark=args.set, budgets=budgets,
                              pass_k=1, model_path=model, scorer=scorer, ebm=ebm if scorer else None,
                              progress=not args.no_progress, premises=index)
    finally:
        await policy.close()


def _saved(out: Path, theorems: int) -> list | None:
    """The rows a searcher saved when it searched every theorem (None: not finished)."""
    path = out / RESULTS_FILE
    if not path.is_file():
        return None
    rows = read_records(path, EvalResult)
    return rows if len({r.theorem for r in rows}) == theorems else None


async def main_async(args: argparse.Namespace) -> int:
    prof = load_profile(args.profile)
    theorems = load_theorems(args.set)
    index = load_index(args.run / "base" / "premise_index")
    order = [f"iter_{args.last}", "c_retrieval", *([] if args.skip_first else [f"iter_{args.first}"])]
    rows: dict[str, list] = {w: r for w in order if (r := _saved(args.out / w, len(theorems))) is not None}
    todo = [w for w in order if w not in rows]
    if todo:
        async with LeanPool(prof.lean) as pool:
            for which in todo:
                t = time.perf_counter()
                rows[which] = await _searcher(args, prof, pool, theorems, index, which)
                print(f"{_line(which, rows[which])} ({time.perf_counter() - t:.0f} s)", flush=True)
    for w in order:
        print(_line(w, rows[w]))
    sums = {w: summarize(r, None, SummaryOptions(iteration=0, benchmark=args.set)) for w, r in rows.items()}
    report: dict[str, object] = {"set": args.set, "theorems": len(theorems), "run": str(args.run),
                                 "max_checks": prof.search.max_checks}
    pairs = [("c_retrieval", f"iter_{args.last}")]
    if not args.skip_first:
        pairs.insert(0, (f"iter_{args.first}", f"iter_{args.last}"))
    for before, after in pairs:
        ch = paired_deltas(sums[before], sums[after])
        assert ch is not None
        print(f"\n{after} - {before}: {ch.theorems} theorems, {ch.clusters} clusters")
        for d in ch.deltas:
            c = d.change
            print(f"  {d.name}: {100 * d.before:.1f}% -> {100 * d.after:.1f}%, change {100 * c.value:+.1f} pp "
                  f"[{100 * c.low:+.1f}, {100 * c.high:+.1f}]{'  (primary)' if d.decides else ''}")
        report[f"{after} - {before}"] = ch.model_dump(mode="json")
    for w, r in rows.items():
        report[w] = {"proved": sorted({x.theorem for x in r if x.proved}),
                     "checks_per_theorem": sum(x.checks for x in r) / max(1, len(r))}
    (args.out / "core_full_eval.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True, help="a core run's work directory (iter_N/, base/)")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--last", type=int, default=2)
    ap.add_argument("--set", default="core:test")
    ap.add_argument("--profile", default="core")
    ap.add_argument("--out", type=Path, default=Path("runs/core_full_eval"))
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--skip-first", action="store_true", help="only the last iteration and (c) with retrieval")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
