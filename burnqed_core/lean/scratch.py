"""The embedded Lean worker's scratch directory: the one directory it may write (and its cwd).

A worker's directory is removed when the worker is closed, but a process killed outright (SIGKILL, the OOM
killer, a pre-empted box) never closes its workers, and its directories stayed in the temp dir for good. Each
directory's name now carries the pid of the process that made it (``burnqed-lean-scratch-<pid>-<random>``), and
making a new one first removes those whose process is gone. A directory of a live process, of another user's
process, or without a pid in its name (made before this rule) is left alone.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

PREFIX = "burnqed-lean-scratch-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)-[^/]+")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep(root: str | Path | None = None) -> list[Path]:
    """Remove the scratch directories in ``root`` (the temp dir) whose owning process has exited; returns them."""
    base = Path(root if root is not None else tempfile.gettempdir())
    removed: list[Path] = []
    for path in base.glob(PREFIX + "*"):
        m = _OWNED.fullmatch(path.name)
        if m is None or not path.is_dir() or path.is_symlink() or _alive(int(m.group(1))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    if removed:
        log.info("removed %d scratch director%s left by exited processes in %s", len(removed),
                 "y" if len(removed) == 1 else "ies", base)
    return removed


def make(root: str | Path | None = None) -> str:
    """A new scratch directory owned by this process (after sweeping those of exited processes)."""
    sweep(root)
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root)
