"""A user's theorem file of the shape people bring (`tests/user_files.py`: `autoImplicit` on, 99 definitions in
three namespaces inside `noncomputable section`s, 15 by well-founded recursion, a `DecidablePred` instance
through `decidable_of_iff`, 191 theorems after the definitions), on one embedded worker:

* ``lean check``: the whole file through `burnqed_core.data.theorems.file_check.check_file` (the route of `burnqed lean
  check`): seconds, verdicts, and whether it needed the per-chunk fallback;
* the preamble's cost: the definitions alone as one request, and what one theorem's final check
  (`check_proof`) and one search start (`start_proof`: the audit of the preamble, the statement's meaning, the
  first document) cost for the file's first theorem (the worker elaborates the definitions) and for the next
  ``--theorems`` - 1 (the worker's preamble store has them, `judge.lean`); the store's counts at the end.

    python benchmarks/user_file.py [--theorems 5]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.file_check import check_file, chunk_text, theorem_declarations
from burnqed_core.data.theorems.lean_file import parse_lean_file
from burnqed_core.lean.pool import LeanPool
from tests.user_files import counts, user_file_text


async def main(n: int) -> None:
    cfg = load_profile("tiny", overrides={"lean.num_workers": 1, "lean.self_test": False,
                                          "lean.verdict_cache": 0}).lean
    text = user_file_text()
    defs, thms = counts(text)
    print(f"file: {defs} definitions, {thms} theorems, {len(text.splitlines())} lines")
    async with LeanPool(cfg) as pool:
        t0 = time.monotonic()
        elab = await check_file(pool, text, 60.0)
        whole = time.monotonic() - t0
        ok = sum(1 for t in elab.theorems or [] if t.name in elab.axioms)
        print(f"lean check: {whole:.1f} s for {len(elab.theorems or [])} theorems ({ok} ok, "
              f"{len(elab.timed_out)} timeouts) = {whole / max(1, thms):.2f} s per theorem")
        decls = theorem_declarations(text) or []
        t0 = time.monotonic()
        await pool.elaborate(chunk_text(text, decls, len(decls), len(decls) - 1), declared=True, timeout_s=600)
        pre = time.monotonic() - t0
        print(f"the definitions with every theorem as an axiom (one request, the file check's fallback unit): "
              f"{pre:.1f} s")
        entries = parse_lean_file(text).entries[:n]
        checks, starts = [], []
        for e in entries:
            t = e.theorem
            t0 = time.monotonic()
            await pool.check_proof(t, t.proof or ["skip"])
            checks.append(time.monotonic() - t0)
            t0 = time.monotonic()
            await pool.start_proof(t)
            starts.append(time.monotonic() - t0)
        for what, xs in [("final check (`check_proof`: the preamble, the statement, the proof, the replay)", checks),
                         ("search start (`start_proof`: the preamble's audit, the statement's meaning, the first "
                          "document)", starts)]:
            rest = f", then median {statistics.median(xs[1:]):.2f} s over the next {len(xs) - 1}" if len(xs) > 1 \
                else ""
            print(f"{what}: first theorem {xs[0]:.2f} s{rest}")
        stats = getattr(pool, "store_stats", None)
        if stats is not None:
            s = await stats()
            print(f"the checker's preamble store: {s.entries} preamble(s) kept, {s.hits} request(s) started from one"
                  if s else "the checker's preamble store: none")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--theorems", type=int, default=5)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(args.theorems))
