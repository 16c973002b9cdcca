"""The run's Lean pool (`LeanPoolResource`, on the run's `EventLoopResource`) starts on first need in the run
process and closes when the run ends; a runtime kept by its owner (a command, a Celery worker process) outlives
the runs. Here on the Pantograph backend with the fake REPL (tests/fake_pantograph.py: no native Lean here), as the prod
profile would: `automation_baselines` measures a benchmark that ships no automation.json."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import dagster as dg
import psutil
import pytest

from burnqed_core.record_io import write_jsonl
from burnqed_core.records import Theorem
from burnqed_pipeline.resources import LeanPoolResource, PolicyResource
from burnqed_pipeline.services import StageRuntime
from tests.pipeline.helpers import materialize, metadata, resources
from tests.pipeline.profiles import write_profile

FAKE = Path(__file__).resolve().parents[1] / "fake_pantograph.py"


def _fake_repls() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if str(FAKE) in " ".join(p.cmdline())]


def _profile(tmp_path: Path) -> Path:
    exe = tmp_path / "repl"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    bench = tmp_path / "bench" / "benchmark.jsonl"
    bench.parent.mkdir()
    write_jsonl([Theorem(name="add_comm'", statement="(n m : Nat) : n + m = m + n", split="benchmark"),
                 Theorem(name="or_swap", statement="(p q : Prop) : p ∨ q → q ∨ p", split="benchmark")], bench)
    prof = write_profile(tmp_path / "profile.yaml", {
        "paths.work_dir": str(tmp_path / "work"), "data.benchmark": str(bench), "lean.backend": "pantograph",
        "lean.pantograph.executable": str(exe), "lean.pantograph.modules": ["Init", "--proto=0.3.4"],
        "lean.num_workers": 1, "lean.self_test": False, "lean.tactic_timeout_s": 10,
    })
    return prof


def test_pool_started_for_the_run_and_closed_at_its_end(tmp_path: Path) -> None:
    prof = _profile(tmp_path)
    with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
        md = metadata(materialize(inst, resources(prof), ["automation_baselines"]))["automation_baselines"]
        assert md["measured_now"] == 2 and md["closed"] == 1 and md["hard"] == 1  # omega closes add_comm' alone
        assert _fake_repls() == []  # the pool was closed with the run
        again = metadata(materialize(inst, resources(prof), ["automation_baselines"]))["automation_baselines"]
        assert again["skipped"] is True and _fake_repls() == []


def test_a_runtime_kept_by_its_owner_serves_later_runs_until_closed(tmp_path: Path) -> None:
    """A command that materialises many runs (``burnqed loop``) owns one `StageRuntime`: its pool outlives each
    run and serves the next one (the same REPL process), until the command closes it."""
    prof = _profile(tmp_path)
    baselines = tmp_path / "work" / "base" / "automation_baselines"
    with StageRuntime() as rt, dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
        res = resources(prof, runtime=rt)
        first = metadata(materialize(inst, res, ["automation_baselines"]))["automation_baselines"]
        assert first["measured_now"] == 2
        kept = {p.pid for p in _fake_repls()}
        assert len(kept) == 1  # still running after the run
        shutil.rmtree(baselines)  # the next run must measure again
        again = metadata(materialize(inst, res, ["automation_baselines"]))["automation_baselines"]
        assert again["measured_now"] == 2 and {p.pid for p in _fake_repls()} == kept
    assert _fake_repls() == []


def test_a_celery_worker_s_runtime_is_used_and_left_open(tmp_path: Path) -> None:
    """In a Celery worker process (`burnqed_pipeline.deploy.worker`: its app holds the process's runtime), the
    event loop resource with ``keep`` hands the run's Lean pool resource that runtime's pool, which the run uses
    and leaves open at the end of the step; without ``keep``, or outside a worker, each run has its own."""
    celery = pytest.importorskip("celery", reason="celery is not installed: pip install 'burnqed[deploy]'")
    current_app = celery.current_app

    from burnqed_pipeline.resources import WORKER_RUNTIME_ATTR, EventLoopResource, worker_runtime

    prof = _profile(tmp_path)
    assert worker_runtime() is None
    with StageRuntime() as rt:
        setattr(current_app, WORKER_RUNTIME_ATTR, rt)
        try:
            assert worker_runtime() is rt
            res = resources(prof)
            res["event_loop"] = EventLoopResource.configure_at_launch(keep=True)
            res = {**res, "lean": LeanPoolResource(event_loop=res["event_loop"]),
                   "policy": PolicyResource(event_loop=res["event_loop"])}
            with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
                md = metadata(materialize(inst, res, ["automation_baselines"]))["automation_baselines"]
            assert md["measured_now"] == 2 and rt.lean_started and len(_fake_repls()) == 1  # the worker's, open
        finally:
            delattr(current_app, WORKER_RUNTIME_ATTR)
    assert _fake_repls() == []
