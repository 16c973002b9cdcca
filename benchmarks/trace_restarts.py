"""The loop's trace stage with the loop's own pool: time and worker restarts.

    flock /tmp/burnqed-lean.lock python benchmarks/trace_restarts.py [--profile tiny] [--elab-async on|off]

Builds `LeanPool(profile.lean)` exactly as the loop does (no overrides
unless ``--elab-async`` is given), traces the profile's corpus as the
``trace_base`` stage does, and prints the wall time, the pool's restarts
and recycles (RSS, TTL, requests) and the worker RSS at the end. Compare
with ``burnqed lean trace`` on the same corpus (which forces synchronous
elaboration). The machine load average is printed: on a shared machine
take ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import time

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.tracing import trace_theorems


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--elab-async", choices=["on", "off"], default=None, help="override lean.embedded.elab_async")
    ap.add_argument("--limit", type=int, default=None, help="trace only the first N corpus theorems")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    overrides = {} if args.elab_async is None else {"lean.embedded.elab_async": args.elab_async == "on"}
    profile = load_profile(args.profile, overrides=overrides)
    theorems = [t for t in load_theorems(profile.data.corpus) if t.proof][: args.limit]
    print(f"profile {profile.name}: elab_async={profile.lean.embedded.elab_async}, {len(theorems)} corpus theorems, "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    t0 = time.monotonic()
    async with LeanPool(profile.lean) as pool:
        t_started = time.monotonic()
        pairs, report = await trace_theorems(pool, theorems, progress=False, source="trace")
        stats = pool.stats()
    t1 = time.monotonic()
    print(f"pool start {t_started - t0:.0f} s; trace {t1 - t_started:.0f} s ({report.replayed}/{len(theorems)} "
          f"replayed, {report.rechecked} re-checked, {len(pairs)} pairs, {len(report.failures)} failures)")
    print(f"restarts {stats.restarts} (timeouts {stats.timeouts}, crashes {stats.crashes}, "
          f"LSP errors {stats.lsp_errors}); recycles {stats.recycles}; RSS at end {stats.rss_mb} MB; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
