"""Cost of the whole-proof re-check with Lean's axiom report (issue 16).

For the known proofs of a theorem set, on one embedded worker (tiny
profile, ``Elab.async`` off as in `burnqed lean trace`), per proof:

* ``errors only``: the former re-check: elaborate preamble + theorem and
  read the diagnostics (`EmbeddedBackend.check_source`);
* ``full check``: `checker.check_proof`: the same document plus the axiom
  query (`Lean.collectAxioms` via ``#eval``), Lean's document symbols and
  the completeness marker.

Prints median / p90 / total seconds of each and the difference per proof.

    flock /tmp/burnqed-lean.lock python benchmarks/axiom_check_cost.py [-t bundled:benchmark] [--limit 40]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time

from burnqed_core.config import load_profile
from burnqed_core.data.theorems import load_theorems
from burnqed_core.lean.checker import check_proof, proof_source
from burnqed_core.lean.embedded import EmbeddedBackend


def _q(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def main(theorem_set: str, limit: int) -> None:
    cfg = load_profile("tiny", overrides={"lean.num_workers": 1, "lean.embedded.elab_async": False}).lean
    thms = [t for t in load_theorems(theorem_set) if t.proof][:limit]
    backend = EmbeddedBackend(cfg)
    await backend.start()
    try:
        old: list[float] = []
        new: list[float] = []
        accepted = 0
        for t in thms:
            t0 = time.monotonic()
            await backend.check_source(proof_source(t, t.proof))
            old.append(time.monotonic() - t0)
            t0 = time.monotonic()
            r = await check_proof(backend, t, t.proof)
            new.append(time.monotonic() - t0)
            accepted += r.ok
        for name, xs in (("errors only", old), ("full check", new)):
            print(f"{name:12s} median {statistics.median(xs):.3f}s  p90 {_q(xs, 0.9):.3f}s  total {sum(xs):.1f}s")
        diff = [b - a for a, b in zip(old, new, strict=True)]
        print(f"axiom check + symbols + completeness: median +{statistics.median(diff):.3f}s per proof "
              f"({len(thms)} proofs of {theorem_set}, {accepted} accepted)")
    finally:
        await backend.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-t", "--theorems", default="bundled:benchmark")
    ap.add_argument("--limit", type=int, default=40)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(args.theorems, args.limit))
