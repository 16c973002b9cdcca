"""Two installs of the embedded Lean compared in one run: what the patched glue costs at every start.

    python benchmarks/lean_glue.py --install OLD_DIR --install NEW_DIR [--rounds 3] [--edits 5] [--json OUT]

Each install is a ``lean-wasm`` directory as `burnqed lean setup` writes it (the stamp is not checked: an
install patched by an earlier burnqed is what one compares against). Per round and install, one after the
other and never two Lean processes at once:

* ``lean --version``: the glue and the wasm runtime alone (wall, CPU seconds of the process and its threads);
* a worker with the default header (the trusted checker and `library.lean`): its start (wall, CPU seconds,
  RSS, threads) and the median of ``--edits`` single-tactic edits (`core_pool_header.measure`).

The installs alternate within a round, so that a change of machine load falls on both. On a shared machine
take the ratios of one run, not the absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from burnqed_core.lean.install import LeanInstall
from burnqed_core.lean.judge import worker_header

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core_pool_header import measure


def version_run(inst: LeanInstall) -> dict[str, object]:
    """``lean --version`` through the install's glue: wall and CPU seconds of the child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run(inst.command("--version"), capture_output=True, text=True, env=inst.env(), timeout=600)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("Lean (version")]
    return {"version_ok": bool(lines), "version_s": round(wall, 1),
            "version_cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1)}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--install", type=Path, action="append", required=True, help="a lean-wasm directory (twice)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--edits", type=int, default=5)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    installs = [LeanInstall(p.expanduser()) for p in a.install]
    header = worker_header()
    rows: list[dict[str, object]] = []
    for r in range(a.rounds):
        for inst in installs:
            row: dict[str, object] = {"round": r, "install": str(inst.root),
                                      "glue_mb": round(inst.glue.stat().st_size / 2**20, 1)}
            row.update(version_run(inst))
            row.update(await measure("default", header, a.edits, install=inst))
            row["load_avg"] = round(os.getloadavg()[0], 2)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("median per install:")
    for inst in installs:
        mine = [x for x in rows if x["install"] == str(inst.root)]
        med = {k: statistics.median(float(x[k]) for x in mine)  # type: ignore[arg-type]
               for k in ("version_s", "version_cpu_s", "start_s", "start_cpu_s", "rss_start_mb", "edit_median_s")}
        print(f"  {inst.root}: {json.dumps(med)}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
