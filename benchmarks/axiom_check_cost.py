"""Cost of the trusted whole-proof check (issues 16 and 31).

For the known proofs of a theorem set, on one embedded worker (tiny
profile, ``Elab.async`` off as in `burnqed lean trace`), per proof:

* ``errors only``: the reference driver's check: elaborate preamble +
  theorem as one document and read the diagnostics
  (`EmbeddedBackend.check_source`, what ``lsp_repl.py check`` does);
* ``full check``: `checker.check_proof`: the trusted checker (`judge.lean`:
  the preamble and the proof elaborated as strings, every declaration the
  proof needs that is not the library's replayed through the kernel, the
  preamble's included; type comparison, premise rule, axiom walk);
* ``fast path``: the same with the replay stopping at a preamble of the
  package's own sets (`checker.REPLAY_TRUSTED_PREAMBLES` off), to show what
  the preamble's replay costs.

Then a ``lean check`` of one file holding the first 60 of those theorems,
each with its preamble in a namespace of its own: the reference driver's
whole-file check against `EmbeddedBackend.elaborate` with the declarations
listed and judged by Lean (``declared=True``, the route of `burnqed lean
check`), and their ratio, in one run.

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
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean import checker
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
        fast: list[float] = []
        accepted = 0
        for t in thms:
            t0 = time.monotonic()
            await backend.check_source(proof_source(t, t.proof))
            old.append(time.monotonic() - t0)
            t0 = time.monotonic()
            r = await check_proof(backend, t, t.proof)
            new.append(time.monotonic() - t0)
            accepted += r.ok
            checker.REPLAY_TRUSTED_PREAMBLES = False
            try:
                t0 = time.monotonic()
                await check_proof(backend, t, t.proof)
                fast.append(time.monotonic() - t0)
            finally:
                checker.REPLAY_TRUSTED_PREAMBLES = True
        for name, xs in (("errors only", old), ("full check", new), ("fast path", fast)):
            print(f"{name:12s} median {statistics.median(xs):.3f}s  p90 {_q(xs, 0.9):.3f}s  total {sum(xs):.1f}s")
        diff = [b - a for a, b in zip(old, new, strict=True)]
        print(f"trusted check over errors only: median +{statistics.median(diff):.3f}s per proof, "
              f"ratio of totals {sum(new) / sum(old):.2f} ({len(thms)} proofs of {theorem_set}, {accepted} accepted)")
        file_thms = thms[:60]
        parts, names = [], []
        for i, t in enumerate(file_thms):
            body = proof_source(t, t.proof, name=f"thm_{i}")
            parts.append(f"namespace File{i}\n{body}\nend File{i}\n")
            names.append(f"File{i}.thm_{i}")
        text = "".join(parts)
        t0 = time.monotonic()
        await backend.check_source(text)
        plain = time.monotonic() - t0
        t0 = time.monotonic()
        elab = await backend.elaborate(text, declared=True)
        trusted = time.monotonic() - t0
        listed = [d.name for d in elab.theorems or []]
        ok = sum(1 for n in names if n in listed and n in elab.axioms and n not in elab.rejected)
        print(f"lean check of a {len(file_thms)}-theorem file: reference driver {plain:.2f}s, trusted {trusted:.2f}s, "
              f"ratio {trusted / plain:.2f} ({ok}/{len(names)} accepted by the kernel replay)")
    finally:
        await backend.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-t", "--theorems", default="bundled:benchmark")
    ap.add_argument("--limit", type=int, default=60)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(args.theorems, args.limit))
