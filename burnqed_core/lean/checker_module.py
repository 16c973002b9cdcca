"""The trusted checker compiled once into a module that every embedded worker imports.

Elaborating the checker's source (`judge.lean`) was ~3/4 of every worker start (docs/trusted-checker.md, "The
checker as a module"). This module compiles it once per install and checker version: Lean elaborates a copy of
`judge.lean`, the extra trusted sources (`judge.EXTRA_SOURCES`: the library enumeration) and
`checker_build.lean`, whose last command writes the module data as one ``BurnqedChecker.olean`` (why one file,
written by the checker itself and not by ``lean -o``: `checker_build.lean`'s header). The file goes into
``<install>/checker/<key>/``, the key a hash of the sources, so a changed checker never loads an old module. A
worker's header then imports it (`judge.worker_header` with ``compiled``) and runs ``burnqed_store_init``; what
Lean computes is the same code, compiled from the same text.

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
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.install import LeanInstall, lean_identity
from burnqed_core.lean.judge import (
    CHECKER_MODULE,
    EXTRA_SOURCES,
    IMPORT_LINE,
    JUDGE_PATH,
    LOAD_MARKER,
    imports_end,
    lean_string,
)
from burnqed_core.lean.scratch import make as make_scratch

log = logging.getLogger(__name__)

MODULE = CHECKER_MODULE
BUILD_PATH = JUDGE_PATH.with_name("checker_build.lean")
DONE_LINE = "burnqed: the checker module is written"
BUILD_TIMEOUT_S = 900.0


def build_source(judge: str | None = None, extra: Sequence[str] | None = None, tail: str | None = None,
                 out: str = "") -> str:
    """The file that compiles the checker: ``judge.lean``, then each extra trusted source after its load marker
    (default `EXTRA_SOURCES`: the library enumeration; their imports hoisted after the checker's), the build
    tail, and the command that writes the module to ``out`` (a path the Lean process may write)."""
    judge = JUDGE_PATH.read_text(encoding="utf-8") if judge is None else judge
    extras = [p.read_text(encoding="utf-8") for p in EXTRA_SOURCES] if extra is None else list(extra)
    tail = BUILD_PATH.read_text(encoding="utf-8") if tail is None else tail
    hoisted: list[str] = []
    bodies: list[str] = []
    for text in extras:
        before, marker, after = text.partition(LOAD_MARKER)
        if not marker:
            raise ValueError("a trusted source has no load marker")
        hoisted += [line.strip() for line in before.split("\n")
                    if IMPORT_LINE.match(line.strip()) and line.strip() not in judge and line.strip() not in hoisted]
        bodies.append(after.split("\n", 1)[1].strip())
    if hoisted:
        eol = imports_end(judge)
        judge = judge[:eol] + "".join(f"{line}\n" for line in hoisted) + judge[eol:]
    parts = [judge.rstrip(), *bodies, tail.rstrip(), f"run_cmd BurnqedCheckerBuild.save {lean_string(out)}"]
    return "\n\n".join(parts) + "\n"


def module_key() -> str:
    """A hash of what the module is compiled from and by: the checker's, the extra sources' and the build tail's
    text, and the Lean build (`install.lean_identity`: an `.olean` is read only by the Lean that wrote it)."""
    h = hashlib.sha256(lean_identity().encode())
    for p in (JUDGE_PATH, *EXTRA_SOURCES, BUILD_PATH):
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
    try:
        d.parent.mkdir(parents=True, exist_ok=True)
        lock_file = (d.parent / ".build.lock").open("a")
    except OSError as e:
        raise LeanSetupError(f"the trusted checker is not compiled for this install and {d.parent} cannot be "
                             f"written ({e.strerror}): run `burnqed lean setup` as the install's owner") from None
    with lock_file as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (d / f"{MODULE}.olean").is_file():
            log.info("compiling the trusted checker for this install (once per checker version)")
            build(inst)
    return d


def lean_path(inst: LeanInstall, checker: Path) -> str:
    """``LEAN_PATH`` for a worker that imports the compiled checker: its directory, then the library."""
    return f"{checker}{os.pathsep}{inst.lib}"
