"""Wall time of the main job (`burnqed loop`, iterations 0 and 1) through Dagster, on a cheap version of the
tiny profile: the settings of the pipeline tests (a ~0.1 M-parameter model, a few training steps, tiny search
budgets) on the first 2 corpus theorems and 1 benchmark theorem of each family. Prints the wall time of a
fresh run and of a second run (every stage skipped: unchanged inputs).

Runs the embedded Lean: start it under the project's Lean lock,

    flock /tmp/burnqed-lean.lock python benchmarks/loop_cheap.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pipeline.profiles import slice_set, write_profile  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="work in this dir (kept) instead of a temporary one")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="burnqed-loop-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    prof = write_profile(tmp / "profile.yaml", {
        "paths.work_dir": str(tmp / "work"), "data.search_theorems": 6,
        "data.corpus": str(slice_set("bundled:corpus", 2, tmp / "corpus" / "corpus.jsonl")),
        "data.benchmark": str(slice_set("bundled:benchmark", 1, tmp / "bench" / "benchmark.jsonl")),
    })
    env = {**os.environ, "DAGSTER_HOME": str(tmp / "dagster"), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "burnqed_pipeline.cli", "loop", "--profile", str(prof), "--iterations", "0,1"]
    for label in ("fresh run", "re-run (all skipped)"):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if proc.returncode:
            sys.exit(f"burnqed loop failed ({proc.returncode}): {proc.stderr[-2000:]}")
        stages = sum(line.startswith("[") for line in proc.stdout.splitlines())
        print(f"{label:>22}: {seconds:6.1f} s wall, {stages} stage lines")
    print(f"outputs and instance in {tmp}")


if __name__ == "__main__":
    main()
