"""`burnqed search` argument and output checks that fail before Lean starts,
and `burnqed trajectories stats` (the full command on Lean runs in
test_search_faults.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.search.engine import SearchOutcome
from burnqed_core.search.job import EbmUnavailableError
from burnqed_core.search.trajectories import OutputExistsError, TrajectoryWriter, read_run_record
from burnqed_core.trajectory_io import SearchResult
from tests.core.search.test_trajectories import outcome

FIXED = {"BURNQED__POLICY__BACKEND": "fixed", "BURNQED__POLICY__FIXED_TACTICS": '["omega"]',
         "BURNQED__SEARCH__AUTOMATION__ENABLED": "false"}


@pytest.fixture
def theorem_file(tmp_path: Path) -> Path:
    p = tmp_path / "thms.jsonl"
    p.write_text('{"name": "a", "statement": "(n : Nat) : n + 0 = n"}\n{"name": "b", "statement": ": 1 = 1"}\n')
    return p


def test_stats_command(tmp_path: Path) -> None:
    out = tmp_path / "traj.parquet"
    w = TrajectoryWriter(out, flush_every=2)
    for name, n, p in [("a", 3, True), ("b", 4, False), ("c", 1, True)]:
        w.add(outcome(name, n, p))
    w.add(SearchOutcome(SearchResult(theorem="d", proved=False, stop="infra", error="infra"), []))
    w.close()
    runner = CliRunner()
    res = runner.invoke(app, ["trajectories", "stats", str(out)])
    assert res.exit_code == 0, res.output
    assert "theorems      4" in res.output and "proved        2 (50.0%)" in res.output
    assert "1 infra" in res.output and "nodes         8" in res.output
    res = runner.invoke(app, ["trajectories", "stats", str(out), "--json"])
    data = json.loads(res.output)
    assert data["theorems"] == 4 and data["candidates_avg"] == pytest.approx(3.0)


def test_stats_on_a_missing_path_is_one_line_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", "from burnqed_core.cli import main; main()", "trajectories",
                           "stats", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "no such file" in proc.stderr


def test_used_output_is_refused_before_lean_starts(tmp_path: Path, theorem_file: Path) -> None:
    out = tmp_path / "traj.parquet"
    w = TrajectoryWriter(out, flush_every=1)
    w.add(outcome("a", 2, True))
    res = CliRunner().invoke(app, ["search", "-t", str(theorem_file), "-o", str(out), "--no-progress"], env=FIXED)
    assert isinstance(res.exception, OutputExistsError) and "--resume" in str(res.exception)
    # --resume without a run record cannot check the settings
    res = CliRunner().invoke(app, ["search", "-t", str(theorem_file), "-o", str(out), "--resume"], env=FIXED)
    assert "no run record" in str(res.exception)
    assert read_run_record(out) is None


def test_ebm_flag_gives_a_clear_error(tmp_path: Path, theorem_file: Path, tiny_model_dir: Path) -> None:
    ebm = tmp_path / "ebm"
    ebm.mkdir()
    res = CliRunner().invoke(app, ["search", "-t", str(theorem_file), "-o", str(tmp_path / "o"),
                                   "--model", str(tiny_model_dir), "--ebm", str(ebm)])
    assert isinstance(res.exception, EbmUnavailableError), res.output
    assert "--ebm" in str(res.exception)
    res = CliRunner().invoke(app, ["search", "-t", str(theorem_file), "-o", str(tmp_path / "o2"), "--ebm",
                                   str(ebm)], env=FIXED)
    assert isinstance(res.exception, EbmUnavailableError) and "model policy" in str(res.exception)
