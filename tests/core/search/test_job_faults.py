"""Kill `burnqed search` for real and resume it.

One subprocess run is SIGKILLed at a random moment after its first
checkpoint; a second run resumes it and is stopped with SIGTERM after it
saved more (it must flush and exit 143); the rest is resumed in-process on
the session Lean pool, and the result is compared with an uninterrupted run
of the same settings: the same theorems, none twice, the same verdicts.

The policy is the fixed automation list (deterministic whatever the
batching), so verdicts can be compared theorem by theorem; each theorem is
either proved within 1-3 steps or exhausts its frontier, so no verdict
depends on the node budget. Each subprocess starts its own Lean worker
(~20 s on an idle machine): the test is marked slow.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from burnqed_core.config import Profile, load_profile
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine, resolve_sampling
from burnqed_core.search.job import run_search
from burnqed_core.search.trajectories import RunRecord, read_run_record
from burnqed_core.trajectory_io import finished_theorems, list_parts, read_results, read_trajectories

pytestmark = [pytest.mark.lean, pytest.mark.slow, pytest.mark.own_lean]  # a subprocess with its own Lean

TACTICS = ["omega", "decide", "simp", "intro h", "exact h", "constructor", "exact h.2", "exact h.1"]


def theorem_set() -> list[Theorem]:
    out = []
    for k in range(6):
        out.append(Theorem(name=f"comm_{k}", statement=f"(n : Nat) : n + {k} = {k} + n"))
        out.append(Theorem(name=f"false_{k}", statement=f"(n : Nat) : n + {k + 1} = n"))
    for k in range(4):
        out.append(Theorem(name=f"arith_{k}", statement=f": {k} * {k} + {k} = {k * k + k}"))
    out.append(Theorem(name="swap", statement="(p q : Prop) (h : p ∧ q) : q ∧ p"))
    out.append(Theorem(name="imp", statement="(p : Prop) : p → p"))
    return out


ENV = {
    "BURNQED__POLICY__BACKEND": "fixed",
    "BURNQED__POLICY__FIXED_TACTICS": json.dumps(TACTICS),
    "BURNQED__SEARCH__FLUSH_EVERY": "2",
    "BURNQED__SEARCH__CONCURRENCY": "2",
    "BURNQED__SEARCH__FRONTIER_BATCH": "4",
    "BURNQED__SEARCH__MAX_NODES": "24",
    "BURNQED__SEARCH__AUTOMATION__ENABLED": "false",
    "BURNQED__SEARCH__TIMEOUT_S": "300",
    "BURNQED__LEAN__NUM_WORKERS": "1",
    "BURNQED__LEAN__EMBEDDED__START_TIMEOUT_S": "600",
    "BURNQED__LEAN__EMBEDDED__REQUEST_TIMEOUT_S": "600",
}


def profile() -> Profile:
    return load_profile("tiny", environ=ENV)


def start(thm_file: Path, out: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, **ENV, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-c", "from burnqed_core.cli import main; main()", "search",
           "--theorems", str(thm_file), "--out", str(out), "--no-progress", *extra]
    return subprocess.Popen(cmd, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)


def wait_for_parts(proc: subprocess.Popen[bytes], out: Path, n: int, log: Path, timeout: float = 600) -> None:
    t0 = time.monotonic()
    while len(list_parts(out)) < n:
        if proc.poll() is not None:
            pytest.fail(f"search exited ({proc.returncode}) before {n} parts:\n{log.read_text()[-3000:]}")
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"no {n} parts after {timeout} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


def kill_tree(proc: subprocess.Popen[bytes], sig: int) -> list[psutil.Process]:
    """Send ``sig`` to the search process; return its descendants (the Lean
    worker runs in a session of its own and outlives a SIGKILLed parent)."""
    kids = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(sig)
    return kids


def reap(kids: list[psutil.Process]) -> None:
    for k in kids:
        try:
            k.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(kids, timeout=30)


def record_of(out: Path) -> RunRecord:
    """The run record the CLI wrote (without its sessions), so that the
    in-process resume passes the settings check."""
    rec = read_run_record(out)
    assert rec is not None
    return RunRecord(**{k: v for k, v in rec.model_dump().items() if k != "sessions"})


async def test_sigkill_then_resume_then_sigterm_matches_an_uninterrupted_run(
    lean_pool: object, tmp_path: Path,
) -> None:
    theorems = theorem_set()
    thm_file = tmp_path / "theorems.jsonl"
    thm_file.write_text("".join(t.model_dump_json() + "\n" for t in theorems))
    out = tmp_path / "traj.parquet"
    log = tmp_path / "search.log"
    rng = random.Random(os.environ.get("BURNQED_TEST_SEED", time.time_ns()))

    # 1. SIGKILL at a random moment after the first checkpoint
    proc = start(thm_file, out, log)
    kids: list[psutil.Process] = []
    try:
        wait_for_parts(proc, out, 1, log)
        time.sleep(rng.uniform(0.0, 1.5))
        kids = kill_tree(proc, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            kids = kill_tree(proc, signal.SIGKILL)
            proc.wait(30)
        reap(kids)
    saved_1 = finished_theorems(out)
    assert 2 <= len(saved_1) < len(theorems), "the kill came too late to test anything"
    rec = read_run_record(out)
    assert rec is not None and rec.sessions[-1].status == "running"  # killed: never closed

    # a run without --resume refuses to touch the output
    refused = subprocess.run(
        [sys.executable, "-c", "from burnqed_core.cli import main; main()", "search", "--theorems", str(thm_file),
         "--out", str(out), "--no-progress"], env={**os.environ, **ENV}, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "--resume" in refused.stderr

    # 2. resume; SIGTERM once it saved one more part: it flushes and exits 143
    parts_before = len(list_parts(out))
    proc = start(thm_file, out, log, "--resume")
    try:
        wait_for_parts(proc, out, parts_before + 1, log)
        kids = kill_tree(proc, signal.SIGTERM)
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            kids = kill_tree(proc, signal.SIGKILL)
            proc.wait(30)
        reap(kids)
    text = log.read_text()
    assert code == 143, text[-3000:]
    assert "interrupted by SIGTERM" in text and "rerun with --resume" in text
    saved_2 = finished_theorems(out)  # raises if any theorem was saved twice
    assert saved_1 < saved_2
    rec = read_run_record(out)
    assert rec is not None and [s.status for s in rec.sessions] == ["running", "interrupted"]
    assert rec.sessions[1].resumed and rec.sessions[1].theorems_at_start == len(saved_1)
    assert rec.sessions[1].theorems_written == len(saved_2) - len(saved_1)

    # 3. finish in-process on the session pool, then an uninterrupted reference run
    prof = profile()
    sampling = resolve_sampling(prof.search, max_new_tokens=prof.policy.max_new_tokens)
    policy = FixedTacticsPolicy(TACTICS)
    engine = SearchEngine(policy, lean_pool, prof.search, sampling=sampling)  # type: ignore[arg-type]
    rep = await run_search(engine, theorems, out, record_of(out), resume=True, flush_every=2,
                           progress=False)
    assert rep.skipped == len(saved_2) and rep.searched == len(theorems) - len(saved_2)

    ref_out = tmp_path / "reference.parquet"
    ref_engine = SearchEngine(policy, lean_pool, prof.search, sampling=sampling)  # type: ignore[arg-type]
    await run_search(ref_engine, theorems, ref_out, record_of(out), flush_every=2, progress=False)

    got = {r.theorem: r for r in read_results(out)}
    ref = {r.theorem: r for r in read_results(ref_out)}
    assert len(read_results(out)) == len(theorems) == len(got)
    assert set(got) == set(ref) == {t.name for t in theorems}
    assert {n: r.proved for n, r in got.items()} == {n: r.proved for n, r in ref.items()}
    assert sum(r.proved for r in got.values()) >= 8  # comm_*, arith_*, swap, imp
    for name, r in got.items():
        if r.stop == "exhausted":  # a fully explored frontier does not depend on batching
            assert r.nodes == ref[name].nodes, name
    rows = read_trajectories(out)
    keys = [(x.theorem, x.node_id) for x in rows]
    assert len(keys) == len(set(keys)), "a node was written twice"
    assert {x.theorem for x in rows} == {n for n, r in got.items() if r.nodes}
    assert sum(r.nodes for r in got.values()) == len(rows)

