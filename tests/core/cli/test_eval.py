"""`burnqed eval` / `burnqed compare` / `burnqed trajectories stats`: user
errors are one line before any model or Lean starts (a twin of a corpus
theorem among them); every command takes --profile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.data.theorems.load import load_theorems
from tests.core.eval.test_hygiene import renamed_copy


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


def test_a_file_of_twins_only_is_an_error_before_lean_starts(tmp_path: Path) -> None:
    """A user file holding nothing but a renamed copy (definitions, constructors, names, numerals) of a theorem
    of the profile's corpus: nothing is left to evaluate: exit 1, before any model or Lean starts (a file with
    other theorems is evaluated without its twins: `test_plan_lean.py`)."""
    original = next(t for t in load_theorems("bundled:corpus") if t.name == "tree_mirror_bump_2")
    copy = renamed_copy(original, "my_flip_add")
    lean = tmp_path / "mine.lean"
    lean.write_text(f"{copy.preamble}\ntheorem my_flip_add {copy.statement} := by\n  sorry\n", encoding="utf-8")
    assert [t.name for t in load_theorems(lean)] == ["my_flip_add"]
    r = run("eval", "--theorems", str(lean), "--out", str(tmp_path / "o"), "--profile", "tiny")
    last = r.stderr.strip().splitlines()[-1]  # (after the log lines)
    assert r.returncode == 1 and last.startswith(f"error: {lean}: every theorem is a twin of a corpus theorem"), \
        r.stderr
    assert "my_flip_add" in r.stderr and "tree_mirror_bump_2" in r.stderr
    assert "starting Lean" not in r.stdout and not (tmp_path / "o").exists()


def test_every_eval_command_takes_profile() -> None:
    for cmd in (["eval", "--help"], ["compare", "--help"], ["trajectories", "stats", "--help"]):
        res = CliRunner().invoke(app, cmd)
        assert res.exit_code == 0 and "--profile" in res.output, (cmd, res.output)
    assert "--pass-k" in CliRunner().invoke(app, ["eval", "--help"]).output
