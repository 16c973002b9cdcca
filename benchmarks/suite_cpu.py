"""Where the test suite's CPU goes: a pytest plugin that writes each test's CPU seconds, and a report of them.

    BURNQED_SUITE_CPU=cpu.jsonl python -m pytest -p benchmarks.suite_cpu --part lean ...   # one JSON line a test
    python benchmarks/suite_cpu.py cpu.jsonl [more.jsonl ...] [--top 30]                   # the report

Per test (set-up, call and teardown together): its wall seconds and the CPU seconds of the pytest process
itself (``self``), of the children it reaped during the test (``reaped``: a CLI subprocess, a retired Lean
worker), and of its live descendants (``live``: a Lean worker started before or during the test, from `psutil`).
Processes that leave the process tree (the Celery workers of the distributed tests, started in a session of
their own) escape it. A Lean start shows as ~25 CPU-s in the test that starts it, a retirement's restart in the
next test that asks for Lean. The report sums the lines by module, the largest first, then the largest tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

ENV = "BURNQED_SUITE_CPU"


def _descendants() -> dict[int, float]:
    """CPU seconds (user + system) of every live descendant of this process, by pid."""
    out: dict[int, float] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        out[proc.pid] = t.user + t.system
    return out


def _own() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    target = os.environ.get(ENV)
    if not target:
        yield
        return
    t0, (self0, reaped0), live0 = time.monotonic(), _own(), _descendants()
    yield
    t1, (self1, reaped1), live1 = time.monotonic(), _own(), _descendants()
    # A process alive at the start and reaped since: its CPU before the test was not this test's.
    before_gone = sum(cpu for pid, cpu in live0.items() if pid not in live1)
    live = sum(cpu - live0.get(pid, 0.0) for pid, cpu in live1.items())
    rec = {"id": item.nodeid, "wall": round(t1 - t0, 2), "self": round(self1 - self0, 2),
           "reaped": round(reaped1 - reaped0 - before_gone, 2), "live": round(live, 2)}
    rec["cpu"] = round(rec["self"] + rec["reaped"] + rec["live"], 2)
    with open(target, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")


def report(paths: list[Path], top: int) -> str:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    if not rows:
        return "no tests recorded"
    by_module: dict[str, list[float]] = {}
    for r in rows:
        acc = by_module.setdefault(r["id"].split("::")[0], [0.0, 0.0, 0.0])
        acc[0] += r["wall"]
        acc[1] += r["cpu"]
        acc[2] += 1
    lines = [f"{len(rows)} tests: {sum(r['wall'] for r in rows):.0f} s wall, {sum(r['cpu'] for r in rows):.0f} CPU-s",
             "", f"{'CPU-s':>8} {'wall s':>8} {'tests':>6}  module"]
    for mod, (wall, cpu, n) in sorted(by_module.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"{cpu:8.1f} {wall:8.1f} {int(n):6d}  {mod}")
    lines += ["", f"{'CPU-s':>8} {'wall s':>8} {'self':>7} {'reaped':>7} {'live':>7}  test"]
    for r in sorted(rows, key=lambda r: -r["cpu"])[:top]:
        parts = f"{r['self']:7.1f} {r['reaped']:7.1f} {r['live']:7.1f}"
        lines.append(f"{r['cpu']:8.1f} {r['wall']:8.1f} {parts}  {r['id']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description="Sum the per-test CPU lines the plugin wrote.")
    ap.add_argument("files", type=Path, nargs="+")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    print(report(a.files, a.top))


if __name__ == "__main__":
    main()
