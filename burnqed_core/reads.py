"""The one reader of the files a stage's result depends on: every read is recorded with the file's digest.

A stage is skipped only while nothing it read changed (`burnqed_core.loop.markers`): its fingerprint covers
its settings, its upstream stages and its code, but a file named by a setting (the corpus, the benchmark, a
hand-written set of ``eval.also``, the ``automation.json`` beside a set) can change under the same name. So
such files are read through `record` (`burnqed_core.data.theorems.load` does it for every theorem set and
automation map), which adds ``{path: digest}`` to the recording in progress (`recording`, opened by the
stage's marker around its run); the marker stores the recording in the stage's ``_done.json`` (and, while the
stage runs, in ``_started.json``), and `changed` names the recorded files whose digest is no longer the
same. A file that was looked for and missing is recorded too (``missing``): creating it later changes it.

What is not recorded: content-keyed caches (the trace cache, measured and shipped baselines), whose files
are named by a digest of what they were computed from, and a stage's upstream outputs, which its
fingerprint already covers.

The recording in progress is a `contextvars.ContextVar`: it follows the stage's coroutine into the tasks
and threads (`asyncio.to_thread`) it starts, and two stages running at once never see each other's.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path

MISSING = "missing"


class Recording:
    """The files read while a `recording` is open: resolved path -> digest at the time of the first read."""

    def __init__(self, on_new: Callable[[dict[str, str]], None] | None = None) -> None:
        self.reads: dict[str, str] = {}
        self.on_new = on_new

    def add(self, path: Path) -> None:
        key = str(path.resolve())
        if key in self.reads:
            return
        self.merge({key: digest(path)})

    def merge(self, reads: Mapping[str, str]) -> None:
        """Add reads recorded elsewhere (a nested recording, the shards of a stage), keeping the first digest
        of each file."""
        new = {k: v for k, v in reads.items() if k not in self.reads}
        if not new:
            return
        self.reads.update(new)
        if self.on_new is not None:
            self.on_new(dict(self.reads))


_CURRENT: ContextVar[Recording | None] = ContextVar("burnqed_reads", default=None)


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def digest(path: str | Path) -> str:
    """``file:<sha256>`` of a file's bytes, ``dir:<sha256>`` of a directory's files (relative names and
    contents, hidden files left out), or `MISSING`."""
    p = Path(path)
    if p.is_file():
        return "file:" + _file_digest(p)
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            rel = f.relative_to(p)
            if any(part.startswith(".") for part in rel.parts):
                continue
            h.update(f"{rel.as_posix()}\0{_file_digest(f)}\n".encode())
        return "dir:" + h.hexdigest()
    return MISSING


def record(path: str | Path) -> Path:
    """Note that the running stage reads ``path`` (a file, a directory, or a file looked for and missing);
    returns it. Outside a `recording` it does nothing but return the path."""
    p = Path(path)
    rec = _CURRENT.get()
    if rec is not None:
        rec.add(p)
    return p


def read_text(path: str | Path) -> str:
    """The text of ``path`` (UTF-8), recorded."""
    return record(path).read_text(encoding="utf-8")


@contextlib.contextmanager
def recording(on_new: Callable[[dict[str, str]], None] | None = None) -> Iterator[Recording]:
    """Record every `record` inside the block (in this context and the tasks and threads it starts);
    ``on_new(reads)`` is called with all reads so far whenever a new file is read. A recording opened inside
    another adds its reads to the outer one when it closes."""
    outer = _CURRENT.get()
    rec = Recording(on_new)
    token = _CURRENT.set(rec)
    try:
        yield rec
    finally:
        _CURRENT.reset(token)
        if outer is not None:
            outer.merge(rec.reads)


def changed(reads: Mapping[str, str]) -> list[str]:
    """The recorded files whose digest is not the recorded one any more (changed, created or removed)."""
    return [p for p, d in sorted(reads.items()) if digest(p) != d]
