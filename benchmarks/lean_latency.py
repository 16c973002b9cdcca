"""Latency and throughput of the embedded Lean backend (one worker).

    python benchmarks/lean_latency.py [--profile tiny] [--json OUT] [--rounds N]

Reports start-up time (wall), per-tactic latency one at a time (median, p95,
max), throughput one at a time and batched (1, 4, 16, 32 (state, tactic)
pairs per `apply_many` call, mixed states of small Nat/logic proofs), and the
worker's RSS. Targets on a 2-core machine: median <= 0.06 s per tactic,
>= 40 tactics/s batched at 32. The machine load average is printed with the
figures: on a shared machine take ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.types import GoalState
from burnqed_core.records import Theorem

# Small proofs; step k of a proof = the state after its first k tactics + tactic k.
PROOFS: list[tuple[str, list[str]]] = [
    ("(p q : Prop) (hp : p) (hq : q) : p ∧ q", ["constructor", "exact hp", "exact hq"]),
    ("(p q : Prop) : p ∧ q → q ∧ p", ["intro h", "obtain ⟨hp, hq⟩ := h", "exact ⟨hq, hp⟩"]),
    ("(n : Nat) : n + 0 = n", ["simp"]),
    ("(a b : Nat) : a + b = b + a", ["omega"]),
    ("(n : Nat) : 0 + n = n", ["induction n", "· rfl", "· omega"]),
    ("(p q r : Prop) (hpq : p → q) (hqr : q → r) : p → r", ["intro hp", "apply hqr", "apply hpq", "exact hp"]),
    ("(a b c : Nat) (h1 : a ≤ b) (h2 : b ≤ c) : a ≤ c", ["exact Nat.le_trans h1 h2"]),
    ("(xs : List Nat) : (xs ++ []).length = xs.length", ["simp"]),
    ("(p : Prop) [Decidable p] (h : ¬¬p) : p", ["by_cases hp : p", "· exact hp", "· exact absurd hp h"]),
    ("(n m : Nat) (h : n = m) : m = n", ["subst h", "rfl"]),
]


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def rss_mb(pid: int | None) -> int:
    if pid is None:
        return 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


async def steps(pool: LeanPool) -> list[tuple[GoalState, str]]:
    """Every (state before tactic k, tactic k) of `PROOFS`."""
    out = []
    for i, (stmt, tactics) in enumerate(PROOFS):
        r = await pool.start_proof(Theorem(name=f"bench_{i}", statement=stmt))
        assert r.state is not None, r.message
        state = r.state
        for t in tactics:
            out.append((state, t))
            nxt = await pool.apply(state, t)
            assert nxt.ok and nxt.state is not None, (stmt, t, nxt.message)
            state = nxt.state
    return out


async def main(profile: str, rounds: int, out: str | None) -> None:
    # The verdict cache off: every pass must ask Lean (with it, every pass after the first is a hit).
    cfg = load_profile(profile, overrides={"lean.num_workers": 1, "lean.self_test": False,
                                           "lean.verdict_cache": 0}).lean
    res: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M"), "loadavg_start": os.getloadavg()[0]}
    pool = LeanPool(cfg)
    t0 = time.monotonic()
    await pool.start()
    res["startup_s"] = round(time.monotonic() - t0, 1)
    pid = pool.pids[0]
    res["rss_after_start_mb"] = rss_mb(pid)
    try:
        items = await steps(pool)  # also the warm-up
        lat = []
        for k in range(rounds * len(items)):
            state, tactic = items[k % len(items)]
            t = time.monotonic()
            r = await pool.apply(state, tactic)
            lat.append(time.monotonic() - t)
            assert r.ok, r.message
        res["one_at_a_time"] = {"n": len(lat), "median_s": round(statistics.median(lat), 3),
                                "p95_s": round(pct(lat, 0.95), 3), "max_s": round(max(lat), 3),
                                "tactics_per_s": round(len(lat) / sum(lat), 1)}
        batching = []
        for b in (1, 4, 16, 32):
            n_calls = max(3, -(-rounds * len(items) // b))
            batch_items = [[items[(c * b + i) % len(items)] for i in range(b)] for c in range(n_calls)]
            await pool.apply_many(batch_items[0])  # warm-up of this document shape
            t = time.monotonic()
            n_ok = 0
            for chunk in batch_items:
                n_ok += sum(r.ok for r in await pool.apply_many(chunk))
            wall = time.monotonic() - t
            batching.append({"batch": b, "tactics": b * n_calls, "ok": n_ok, "s_per_call": round(wall / n_calls, 3),
                             "tactics_per_s": round(b * n_calls / wall, 1)})
        res["batched"] = batching
        res["rss_end_mb"] = rss_mb(pid)
        res["pool"] = pool.stats().model_dump()
    finally:
        await pool.close()
    res["loadavg_end"] = os.getloadavg()[0]
    print_table(res)
    if out:
        Path(out).write_text(json.dumps(res, indent=1), encoding="utf-8")


def print_table(res: dict) -> None:  # type: ignore[type-arg]
    one = res["one_at_a_time"]
    rows = [("start-up (s)", res["startup_s"]),
            ("median per tactic (s)", one["median_s"]), ("p95 per tactic (s)", one["p95_s"]),
            ("max per tactic (s)", one["max_s"]), ("one at a time (tactics/s)", one["tactics_per_s"])]
    rows += [(f"batched {b['batch']:>2} per call (tactics/s)", b["tactics_per_s"]) for b in res["batched"]]
    rows += [("RSS after start / end (MB)", f"{res['rss_after_start_mb']} / {res['rss_end_mb']}"),
             ("load average start / end", f"{res['loadavg_start']:.1f} / {res['loadavg_end']:.1f}")]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--rounds", type=int, default=3, help="passes over the proof steps one at a time")
    ap.add_argument("--json", dest="out", help="write the figures as JSON")
    a = ap.parse_args()
    asyncio.run(main(a.profile, a.rounds, a.out))
