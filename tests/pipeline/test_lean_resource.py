"""The Lean resource starts the profile's pool on first need in the run process and closes it when the run
ends; here on the Pantograph backend with the fake REPL (tests/fake_pantograph.py: no native Lean here), as
the prod profile would: `automation_baselines` measures a benchmark that ships no automation.json."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import dagster as dg
import psutil

from burnqed_core.record_io import write_jsonl
from burnqed_core.records import Theorem
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


def test_a_kept_pool_serves_later_runs_of_the_process_until_closed(tmp_path: Path) -> None:
    """``keep`` (a Celery worker process, ``burnqed loop``): the pool outlives the run and serves the next one
    (the same REPL process), until `close_kept`."""
    from burnqed_pipeline.defs.resources import LeanResource, close_kept

    prof = _profile(tmp_path)
    res = resources(prof)
    res["lean"] = LeanResource(profile=res["profile"], keep=True)
    baselines = tmp_path / "work" / "base" / "automation"
    try:
        with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
            first = metadata(materialize(inst, res, ["automation_baselines"]))["automation_baselines"]
            assert first["measured_now"] == 2
            kept = {p.pid for p in _fake_repls()}
            assert len(kept) == 1  # still running after the run
            shutil.rmtree(baselines)  # the next run must measure again
            again = metadata(materialize(inst, res, ["automation_baselines"]))["automation_baselines"]
            assert again["measured_now"] == 2 and {p.pid for p in _fake_repls()} == kept
    finally:
        close_kept()
    assert _fake_repls() == []
