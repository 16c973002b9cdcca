"""One iteration partition in-process vs through Celery (1 and 2 workers) on this machine: wall time, the overhead
per step, and each worker's peak memory (its process tree, Lean included).

The work is the same in every run: iteration 0 of a cheap profile whose earlier stages are done (the in-process
reference `burnqed loop --iterations 0` made them), with its trajectories and eval removed, so each run skips
the finished stages (a step each) and computes the search and eval shards again, starting Lean where it runs.
A run through Celery starts a fresh deployment (cold: each worker starts its Lean on its first shard); the last
line is a second run on the 2-worker deployment (warm: the workers kept their Lean pools).

    python benchmarks/celery_iteration.py [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from burnqed_pipeline.deploy import local_celery as lc
from tests.pipeline import celery_harness as h


def step_times(home: Path, run_id: str) -> dict[str, dict[str, float]]:
    """Per step: submitted (celery), started, ended (event times, seconds)."""
    import dagster as dg

    out: dict[str, dict[str, float]] = {}
    with dg.DagsterInstance.from_config(str(home)) as inst:
        for rec in inst.all_logs(run_id):
            ev = rec.dagster_event
            if ev is None or not ev.step_key:
                continue
            t = out.setdefault(ev.step_key, {})
            kind = ev.event_type_value
            if kind == "ENGINE_EVENT" and (ev.message or "").startswith("Submitting celery task"):
                t.setdefault("submitted", rec.timestamp)
            elif kind == "STEP_START":
                t.setdefault("started", rec.timestamp)
            elif kind in ("STEP_SUCCESS", "STEP_FAILURE"):
                t["ended"] = rec.timestamp
    return out


def overhead(times: dict[str, dict[str, float]], skipped: set[str]) -> str:
    """Median seconds a skipped step takes from submission (or start) to its end, and submission to start."""
    whole = [t["ended"] - t.get("submitted", t["started"]) for k, t in times.items()
             if k in skipped and "ended" in t and "started" in t]
    wait = [t["started"] - t["submitted"] for t in times.values() if "submitted" in t and "started" in t]
    parts = [f"a skipped step {statistics.median(whole):.1f} s end to end" if whole else ""]
    if wait:
        parts.append(f"submit -> start {statistics.median(wait):.1f} s (median of {len(wait)})")
    return "; ".join(p for p in parts if p)


SKIPPED = {"tactic_pairs", "lora_adapter", "merged_model", "embeddings", "ebm"}


def celery_run(ref: h.Reference, tmp: Path, workers: int, runs: int = 1) -> list[dict[str, Any]]:
    dep = lc.up(tmp / f"celery{workers}", workers=workers, port=lc.free_port(), profile=str(ref.profile),
                work_dir=str(ref.work), dagster_home=str(tmp / f"dagster{workers}"))
    out = []
    try:
        for k in range(runs):
            h.clear_outputs(ref.work)
            log = tmp / f"celery{workers}_{k}.log"
            with h.MemorySampler(dep) as mem:
                run_id, ok = h.finish(h.launch(dep, Path(dep.dagster_home), h.run_config(tmp), log, ref.profile), log)
            assert ok, log.read_text()[-3000:]
            assert h.outputs(ref.work) == h.reference_outputs(ref), "the Celery run differs from the reference"
            out.append({"seconds": h.iteration_seconds(Path(dep.dagster_home)), "peak": dict(mem.peak_mb),
                        "total_peak": mem.total_peak_mb,
                        "overhead": overhead(step_times(Path(dep.dagster_home), run_id), SKIPPED)})
    finally:
        lc.down(Path(dep.dir), grace_s=10)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    tmp = args.out or Path(tempfile.mkdtemp(prefix="burnqed-celery-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"work in {tmp}; building the reference (burnqed loop --iterations 0, in-process) ...", flush=True)
    ref = h.reference(tmp)
    h.clear_outputs(ref.work)
    home = tmp / "dagster_in_process"
    log = tmp / "in_process.log"
    run_id, ok = h.finish(h.launch(None, home, None, log, ref.profile), log)
    assert ok and h.outputs(ref.work) == h.reference_outputs(ref)
    rows = [("in-process (1 process, its own Lean)", h.iteration_seconds(home), "-",
             overhead(step_times(home, run_id), SKIPPED))]
    one = celery_run(ref, tmp, 1)[0]
    rows.append(("celery, 1 worker (cold)", one["seconds"], f"{one['total_peak']:.0f}", one["overhead"]))
    two = celery_run(ref, tmp, 2, runs=2)
    for label, r in zip(("celery, 2 workers (cold)", "celery, 2 workers (warm: Lean kept)"), two, strict=True):
        peaks = ", ".join(f"{v:.0f}" for v in r["peak"].values())
        rows.append((label, r["seconds"], f"{peaks} (both {r['total_peak']:.0f})", r["overhead"]))
    print("\n| run | iteration 0 wall (s) | peak RSS per worker, Lean included (MB) | overhead per step |")
    print("|---|---:|---|---|")
    for label, secs, mem, ovh in rows:
        print(f"| {label} | {secs:.0f} | {mem} | {ovh} |")
    print(f"\nevery run's trajectories and eval equal the in-process reference's, row for row; "
          f"{sys.platform}, {__import__('os').cpu_count()} cores")


if __name__ == "__main__":
    main()
