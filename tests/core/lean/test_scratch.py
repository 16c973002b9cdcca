"""Scratch directories of the embedded Lean worker: those of exited processes are removed when a new one is
made; those of live processes, and those without an owner in their name, are kept. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from burnqed_core.lean.scratch import PREFIX, make, sweep


def _exited_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_new_scratch_removes_those_of_exited_processes(tmp_path: Path) -> None:
    gone = tmp_path / f"{PREFIX}{_exited_pid()}-abc_12"
    (gone / "sub").mkdir(parents=True)
    (gone / "sub" / "left.olean").write_text("x")
    live = tmp_path / f"{PREFIX}{os.getpid()}-def34"
    live.mkdir()
    legacy = tmp_path / f"{PREFIX}q8x_z0k1"  # made before the pid was in the name: its owner is unknown
    legacy.mkdir()
    other = tmp_path / "not-ours-123-x"
    other.mkdir()

    mine = Path(make(tmp_path))

    assert not gone.exists()
    assert live.is_dir() and legacy.is_dir() and other.is_dir()
    assert mine.is_dir() and mine.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert sweep(tmp_path) == []  # nothing else to remove: this process is alive


def test_a_file_or_link_with_the_name_is_left_alone(tmp_path: Path) -> None:
    pid = _exited_pid()
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("x")
    link = tmp_path / f"{PREFIX}{pid}-link"
    link.symlink_to(target, target_is_directory=True)
    plain = tmp_path / f"{PREFIX}{pid}-file"
    plain.write_text("x")
    assert sweep(tmp_path) == []
    assert (target / "keep").exists() and plain.exists() and link.is_symlink()


def test_the_directory_of_a_killed_process_goes_at_the_next_start(tmp_path: Path) -> None:
    # a process makes its scratch directory, writes in it and is SIGKILLed: it never cleans up
    script = ("import sys, time, pathlib\n"
              "from burnqed_core.lean.scratch import make\n"
              "d = pathlib.Path(make(sys.argv[1])); (d / 'Doc.lean').write_text('x')\n"
              "print(d, flush=True); time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[3])
    assert proc.stdout is not None
    left = Path(proc.stdout.readline().strip())
    assert left.is_dir() and sweep(tmp_path) == []  # its owner is alive: kept
    proc.kill()
    proc.wait()
    assert left.is_dir()
    mine = Path(make(tmp_path))
    assert not left.exists() and mine.is_dir()
