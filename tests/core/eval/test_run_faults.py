"""Kill `burnqed eval` for real and resume it: the result equals an
uninterrupted eval, search for search.

A subprocess eval (its own Lean worker, a tiny model trained here) is
SIGKILLed at a random moment after its first saved theorem; the eval is
then resumed in-process on the session Lean pool, and an uninterrupted eval
of the same settings runs beside it. With per-expansion seeds and the same
nodes per theorem per batch, the resumed searches (other neighbours, other
batches, a fresh process) sample exactly what the uninterrupted ones do:
rows and trajectories match field for field, wall-clock fields aside.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from burnqed_core.config import load_profile
from burnqed_core.eval.baselines.measure import measure_baselines
from burnqed_core.eval.run import attempt_dir, read_eval_results, run_eval
from burnqed_core.lean.types import ProofEnv
from burnqed_core.records import Theorem
from burnqed_core.search.job import lean_version
from burnqed_core.trajectory_io import finished_theorems, list_parts, read_trajectories
from tests.core.eval.test_run_lean import THEOREMS as EVAL_THEOREMS
from tests.core.eval.test_run_lean import by_theorem, strip
from tests.fixtures_lean import tiny_lean_config

pytestmark = [pytest.mark.lean, pytest.mark.slow, pytest.mark.own_lean]  # a subprocess with its own Lean

THEOREMS = [
    *EVAL_THEOREMS,
    Theorem(name="comm", statement="(a b : Nat) : a + b = b + a"),
    Theorem(name="zero_add", statement="(n : Nat) : 0 + n = n"),
    Theorem(name="false_two", statement="(n : Nat) : n + 2 = n"),
    Theorem(name="four", statement=": 2 * 2 = 4"),
]
BUDGETS = [2, 6]


def env_vars(home: Path) -> dict[str, str]:
    install = tiny_lean_config().embedded.install_dir
    return {
        "BURNQED_HOME": str(home),  # the baseline cache of this test
        "BURNQED__LEAN__EMBEDDED__INSTALL_DIR": str(install),
        "BURNQED__LEAN__NUM_WORKERS": "1",
        "BURNQED__LEAN__EMBEDDED__START_TIMEOUT_S": "900",
        "BURNQED__LEAN__EMBEDDED__REQUEST_TIMEOUT_S": "600",
        "BURNQED__SEARCH__FLUSH_EVERY": "1",
        "BURNQED__SEARCH__CONCURRENCY": "3",
        "BURNQED__SEARCH__FRONTIER_BATCH": "6",
        "BURNQED__SEARCH__MAX_DEPTH": "6",
        "BURNQED__SEARCH__TEMPERATURE": "1.0",
        "BURNQED__EVAL__NUM_CANDIDATES": "4",
        "BURNQED__POLICY__MAX_NEW_TOKENS": "12",
        "BURNQED__SEARCH__AUTOMATION__ENABLED": "false",  # the policy's own searches (the 'policy' variant)
        "OMP_NUM_THREADS": "1",
    }


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    kids = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    for k in kids:  # the Lean worker runs in a session of its own and outlives its parent
        try:
            k.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(kids, timeout=30)


async def test_sigkilled_eval_resumed_equals_an_uninterrupted_one(
        lean_pool: ProofEnv, search_model: Path, tmp_path: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy

    model = search_model
    thm_file = tmp_path / "theorems.jsonl"
    thm_file.write_text("".join(t.model_dump_json() + "\n" for t in THEOREMS))
    env = env_vars(tmp_path / "home")
    out, log = tmp_path / "eval", tmp_path / "eval.log"
    cmd = [sys.executable, "-c", "from burnqed_core.cli import main; main()", "eval", "--model", str(model),
           "--theorems", str(thm_file), "--out", str(out), "--budgets", ",".join(map(str, BUDGETS)),
           "--no-progress"]
    proc = subprocess.Popen(cmd, env={**os.environ, **env, "PYTHONUNBUFFERED": "1"}, stdout=log.open("ab"),
                            stderr=subprocess.STDOUT)
    traj = attempt_dir(out, "policy", 0)
    try:
        t0 = time.monotonic()
        while not list_parts(traj):
            if proc.poll() is not None:
                pytest.fail(f"eval exited ({proc.returncode}) before saving:\n{log.read_text()[-3000:]}")
            if time.monotonic() - t0 > 900:
                pytest.fail(f"nothing saved after 900 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)
        # a short random delay varies the kill point; longer ones let the fast decoder finish every theorem first
        time.sleep(random.Random(os.environ.get("BURNQED_TEST_SEED", time.time_ns())).uniform(0.0, 0.1))
    finally:
        kill_tree(proc)
    saved = finished_theorems(traj)
    assert 1 <= len(saved) < len(THEOREMS), "the kill came too late to test anything"
    assert not (out / "results.parquet").exists()

    # resume in-process (another process, other batches), and an uninterrupted reference
    prof = load_profile("tiny", overrides={"eval.budgets": BUDGETS}, environ=env)
    policy = LocalPolicy.from_config(prof.policy, model)
    baselines = await measure_baselines(lean_pool, THEOREMS, prof.paths.home / "baselines",
                                        lean_version=lean_version(prof, lean_pool))
    kw = {"iteration": 0, "benchmark": str(thm_file), "baselines": baselines, "model_path": model,
          "progress": False, "handle_signals": False}
    resumed = await run_eval(prof, policy, lean_pool, THEOREMS, out, **kw)  # type: ignore[arg-type]
    reference = await run_eval(prof, policy, lean_pool, THEOREMS, tmp_path / "ref", **kw)  # type: ignore[arg-type]

    assert len(resumed) == len(THEOREMS) and sum(r.proved for r in resumed) >= 3
    assert strip(resumed) == strip(reference)
    assert strip(read_eval_results(out)) == strip(read_eval_results(tmp_path / "ref"))
    assert by_theorem(read_trajectories(traj)) == by_theorem(read_trajectories(attempt_dir(tmp_path / "ref",
                                                                                         "policy", 0)))
