"""The trusted checker compiled once into a module that every embedded worker imports.

Elaborating the checker's source (`judge.lean`) was ~3/4 of every worker start (docs/testing.md). This module
compiles it once per install and checker version: Lean elaborates a copy of `judge.lean` followed by
`checker_build.lean`, whose last command writes the module data as one ``BurnqedChecker.olean`` (why one file,
written by the checker itself and not by ``lean -o``: `checker_build.lean`'s header). The file goes into
``<install>/checker/<key>/``, the key a hash of both sources, so a changed checker never loads an old module.
A worker's header then imports it (`judge.worker_header` with ``compiled=True``) and runs
``burnqed_store_init``; what Lean computes is the same code, compiled from the same text.

The compiled module is trusted as the source is: it is written by this code from the package's own sources,
before any untrusted text exists, into a directory that a worker mounts read-only (`patch_leanjs`, patch 6).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.install import LeanInstall
from burnqed_core.lean.judge import CHECKER_MODULE, JUDGE_PATH, lean_string
from burnqed_core.lean.scratch import make as make_scratch

log = logging.getLogger(__name__)

MODULE = CHECKER_MODULE
BUILD_PATH = JUDGE_PATH.with_name("checker_build.lean")
DONE_LINE = "burnqed: the checker module is written"
BUILD_TIMEOUT_S = 900.0


def build_source(judge: str | None = None, tail: str | None = None, out: str = "") -> str:
    """The file that compiles the checker: ``judge.lean``, the build tail, and the command that writes the
    module to ``out`` (a path the Lean process may write)."""
    judge = JUDGE_PATH.read_text(encoding="utf-8") if judge is None else judge
    tail = BUILD_PATH.read_text(encoding="utf-8") if tail is None else tail
    return f"{judge.rstrip()}\n\n{tail.rstrip()}\n\nrun_cmd BurnqedCheckerBuild.save {lean_string(out)}\n"


def module_key() -> str:
    """A hash of the sources the module is compiled from (the checker's and the build tail's)."""
    h = hashlib.sha256()
    for p in (JUDGE_PATH, BUILD_PATH):
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:20]


def module_dir(inst: LeanInstall) -> Path:
    """Where the install keeps the module of the current checker (a directory for ``LEAN_PATH``)."""
    return inst.root / "checker" / module_key()


def module_file(inst: LeanInstall) -> Path:
    return module_dir(inst) / f"{MODULE}.olean"


def build(inst: LeanInstall, timeout_s: float = BUILD_TIMEOUT_S) -> Path:
    """Compile the checker into ``module_dir(inst)`` (replacing what is there); the module's file."""
    scratch = Path(make_scratch())
    try:
        src = scratch / f"{MODULE}.lean"  # at the scratch root: the module is named by the file
        out = scratch / "out" / f"{MODULE}.olean"
        out.parent.mkdir()
        src.write_text(build_source(out=str(out)), encoding="utf-8")
        env = dict(inst.env(), BURNQED_LEAN_SCRATCH=str(scratch))
        t0 = time.monotonic()
        try:
            proc = subprocess.run(inst.command("-DElab.async=false", str(src)), cwd=scratch, env=env,
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise LeanSetupError(f"compiling the trusted checker took over {timeout_s:.0f} s") from None
        text = proc.stdout + proc.stderr
        errors = [line for line in text.splitlines() if ": error" in line]
        if proc.returncode != 0 or errors or DONE_LINE not in text or not out.is_file():
            detail = " | ".join((errors or text.strip().splitlines())[-5:])
            raise LeanSetupError(f"compiling the trusted checker failed (exit {proc.returncode}): {detail}")
        dest = module_file(inst)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        shutil.copyfile(out, tmp)
        tmp.chmod(0o444)
        os.replace(tmp, dest)
        log.info("compiled the trusted checker into %s (%.1f MB) in %.0f s", dest, dest.stat().st_size / 1e6,
                 time.monotonic() - t0)
        return dest
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def ensure(inst: LeanInstall) -> Path:
    """The directory holding the current checker's module, compiled first if it is missing (one process at a
    time: the others wait for it, then find it)."""
    d = module_dir(inst)
    if (d / f"{MODULE}.olean").is_file():
        return d
    d.parent.mkdir(parents=True, exist_ok=True)
    with (d.parent / ".build.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (d / f"{MODULE}.olean").is_file():
            log.info("compiling the trusted checker for this install (once per checker version)")
            build(inst)
    return d


def lean_path(inst: LeanInstall, checker: Path) -> str:
    """``LEAN_PATH`` for a worker that imports the compiled checker: its directory, then the library."""
    return f"{checker}{os.pathsep}{inst.lib}"
