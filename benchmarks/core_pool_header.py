"""What the embedded worker's header allows and costs, for Lean's library as a theorem pool (docs/core-pool.md).

    python benchmarks/core_pool_header.py [--variants default,no-library,std,lean] [--edits 20] [--json OUT]

For each header variant one worker is started (one after the other, never two at once) and measured: start-up
time (wall), RSS after start and after the edits, the modules its environment holds by root (Init, Std, Lean,
Lake: `burnqed_modules`), and the median time of ``--edits`` single-tactic edits (a proof block after the
header, as the search sends them). Variants:

* ``default``: the header with the checker as text (the checker's source, then `library.lean`): what a worker
  elaborated at every start before the checker was compiled into a module;
* ``compiled``: the worker's header today: the compiled checker (`checker_module`) imported, then
  `library.lean` (``--variants default,compiled`` measures what the module saves a start);
* ``no-library``: the checker alone (what `library.lean` costs an edit);
* ``std``: the default plus ``public import Std`` (every Std module);
* ``lean``: the default plus ``public import Lean`` (every Lean module);
* ``imports-only``: the checker's imports and section alone, without its code: what elaborating the checker's
  source (`burnqed_load`) adds to every worker's start;
* ``ref:REV``: the default header built from the checker's sources (`judge.lean` and the extra trusted sources)
  as they are at git revision ``REV`` (e.g. ``ref:main``): a change to the checker measured against its
  predecessor in one run (``--variants ref:main,default``).

Start-up is reported as wall time and as the CPU seconds of the worker process (``start_cpu_s``): the suite and
a pool pay the latter at every (re)start.

A worker has one header (it exits when a document's imports change), so "a document can import Std" means
"the header imports Std". On a shared machine take ratios within one run, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import time
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.lean import checker_module
from burnqed_core.lean.install import LeanInstall, require_installed
from burnqed_core.lean.judge import CHECKER_MODULE, EXTRA_SOURCES, JUDGE_PATH, SECTION, worker_header
from burnqed_core.lean.library import modules_command, parse_modules
from burnqed_core.lean.lsp import LspWorker, process_rss_mb
from burnqed_core.lean.scratch import make as make_scratch

VARIANTS = {
    "default": lambda: worker_header(),
    "compiled": lambda: worker_header(compiled=CHECKER_MODULE),
    "no-library": lambda: worker_header(extra=()),
    "std": lambda: worker_header(imports=["Std"]),
    "lean": lambda: worker_header(imports=["Lean"]),
    "imports-only": lambda: imports_only(worker_header()),
}


def imports_only(header: str) -> str:
    """``module``, the header's import commands and its closing section, without the checker's code."""
    head = header.split("burnqed_load", 1)[0]
    imports = re.findall(r"(?m)(?:^|-/)((?:public\s+)?(?:meta\s+)?import\s+\S+)", head)
    return "module\n" + "".join(f"{i}\n" for i in imports) + SECTION


def at_ref(rev: str) -> str:
    """The default header from the checker's sources at git revision ``rev`` (read with ``git show``)."""
    root = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=JUDGE_PATH.parent, check=True,
                               capture_output=True, text=True).stdout.strip())

    def show(path: Path) -> str:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        return subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=root, check=True, capture_output=True,
                              text=True).stdout

    return worker_header(show(JUDGE_PATH), extra=[show(p) for p in EXTRA_SOURCES])


def header_of(variant: str) -> str:
    """The header a variant names (`VARIANTS`, or ``ref:REV``)."""
    if variant.startswith("ref:"):
        return at_ref(variant.removeprefix("ref:"))
    return VARIANTS[variant]()


EDIT = "theorem bench_{k} (a b : Nat) (h : a ≤ b) : a ≤ b + {k} := by\n  omega\n"


def process_cpu_s(pid: int | None) -> float | None:
    """User + system CPU seconds of a live process (its threads included), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)


def process_threads(pid: int | None) -> int | None:
    """The OS threads of a live process (node's own and one per wasm pthread Worker)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return None


async def measure(name: str, header: str, edits: int, install: LeanInstall | None = None) -> dict[str, object]:
    """One worker with ``header``: its start and ``edits`` edits; ``install`` (default: the tiny profile's)."""
    if install is None:
        install = require_installed(load_profile("tiny").lean.embedded.install_dir)
    inst = install
    scratch = make_scratch()
    env = dict(inst.env(), BURNQED_LEAN_SCRATCH=scratch)
    if f"import {CHECKER_MODULE}\n" in header:  # the checker compiled into a module (built first if missing)
        env["LEAN_PATH"] = checker_module.lean_path(inst, checker_module.ensure(inst))
    w = LspWorker(inst.command("-Dserver.reportDelayMs=0", "-DElab.async=false", "--worker"),
                  env=env, timeout_s=1800, cwd=scratch)
    t0 = time.monotonic()
    try:
        diags = await w.start(header + "theorem warm : 1 + 1 = 2 := by decide\n", timeout_s=1800)
        start_s = time.monotonic() - t0
        start_cpu_s = process_cpu_s(w.pid)
        errors = [d.message[:200] for d in diags if d.is_error]
        rss_start = process_rss_mb(w.pid)
        threads_start = process_threads(w.pid)
        from burnqed_core.lean.judge import new_nonce

        nonce = new_nonce()
        diags = await w.check(header + modules_command(nonce))
        try:
            mods = parse_modules(diags, nonce)
            roots: dict[str, int] = {}
            for m in mods:
                roots[m.split(".")[0]] = roots.get(m.split(".")[0], 0) + 1
        except Exception as e:  # the variant without library.lean has no such command
            roots = {"?": 0, "error": str(e)[:100]}  # type: ignore[dict-item]
        times = []
        for k in range(edits):
            t = time.monotonic()
            await w.check(header + EDIT.format(k=k))
            times.append(time.monotonic() - t)
        return {"variant": name, "start_s": round(start_s, 1), "start_cpu_s": start_cpu_s, "errors": errors,
                "rss_start_mb": rss_start, "threads_start": threads_start, "rss_end_mb": process_rss_mb(w.pid),
                "modules": roots,
                "edit_median_s": round(statistics.median(times), 3), "edit_max_s": round(max(times), 3),
                # the medians of each 30 edits in turn: the first edits after a start run before V8 has
                # optimised the elaborator's code (a header that elaborates much warms it up)
                "edit_medians_by_30": [round(statistics.median(times[i:i + 30]), 3) for i in range(0, len(times), 30)],
                "header_chars": len(header)}
    finally:
        await w.close()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="default,no-library,std,lean")
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    out = []
    for name in a.variants.split(","):
        r = await measure(name, header_of(name), a.edits)
        r["load_avg"] = os.getloadavg()[0]
        print(json.dumps(r), flush=True)
        out.append(r)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
