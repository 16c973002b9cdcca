"""`burnqed eval` / `burnqed compare` / `burnqed trajectories stats`: user
errors are one line before any model or Lean starts; every command takes
--profile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from burnqed_core.cli import app


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from burnqed_core.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120)


def test_bad_input_is_a_one_line_error_before_anything_starts(tmp_path: Path) -> None:
    r = run("eval", "--theorems", "bundled:benchmark", "--out", str(tmp_path / "o"), "--budgets", "8,x")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "--budgets" in r.stderr, r.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "results.parquet").write_text("x")
    r = run("eval", "--theorems", "bundled:benchmark", "--out", str(tmp_path / "full"))
    assert r.returncode == 1 and "--resume" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = run("eval", "--theorems", str(tmp_path / "missing.lean"), "--out", str(tmp_path / "o"))
    assert r.returncode == 1 and "missing.lean" in r.stderr, r.stderr
    r = run("compare", str(tmp_path / "nope"))
    assert r.returncode == 1 and str(tmp_path / "nope" / "summary.json") in r.stderr, r.stderr


def test_every_eval_command_takes_profile() -> None:
    for cmd in (["eval", "--help"], ["compare", "--help"], ["trajectories", "stats", "--help"]):
        res = CliRunner().invoke(app, cmd)
        assert res.exit_code == 0 and "--profile" in res.output, (cmd, res.output)
    assert "--pass-k" in CliRunner().invoke(app, ["eval", "--help"]).output
