"""Stage markers keyed by a fingerprint of the stage's inputs, settings and code, and by the files it read.

A finished stage folder holds ``_done.json``: the stage's `StageResult`, the fingerprint it was computed
for, and the digest of every file it read (`burnqed_core.reads`). Running the stage again

* with the same fingerprint and none of those files changed returns the saved result at once (a retry
  after a preemption, a re-materialisation with nothing changed);
* otherwise (an input, a setting, the stage's code or a file it read changed) clears the folder and
  recomputes, so a re-materialisation never returns a stale result.

An unfinished folder (no ``_done.json``) is resumed inside by the stage itself (training checkpoints, flushed
search parts) only when its ``_started.json`` names the same fingerprint and none of the files read so far
(recorded there as the stage reads them) changed; partial outputs made for other inputs are cleared first.

The fingerprint hashes the settings the stage receives (`burnqed_core.projection`), its code version
(`burnqed_core.code_graph`) and a digest of each input: an upstream stage folder by its ``_done.json`` (so
any recompute upstream changes it), a file by its bytes, another folder by its listing, anything else by its
text (e.g. a Hugging Face model name).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from burnqed_core import reads as reads_mod
from burnqed_core.loop.layout import DONE, STARTED
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


def input_digest(item: str | Path | None) -> str:
    """What an input contributes to a fingerprint (see the module docstring)."""
    if item is None:
        return "none"
    p = Path(item)
    if (p / DONE).is_file():
        return "stage:" + hashlib.sha256((p / DONE).read_bytes()).hexdigest()
    if p.is_file():
        h = hashlib.sha256()
        with p.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return "file:" + h.hexdigest()
    if p.is_dir():
        listing = sorted((str(f.relative_to(p)), f.stat().st_size) for f in p.rglob("*") if f.is_file())
        return "dir:" + hashlib.sha256(json.dumps(listing).encode()).hexdigest()
    return "text:" + str(item)


def fingerprint_payload(
    stage: str,
    settings: Mapping[str, Any],
    inputs: Mapping[str, str | Path | Sequence[str | Path] | None] = (),  # type: ignore[assignment]
    extra: Mapping[str, Any] | None = None,
    code: str = "",
) -> str:
    """sha256 over the stage name, its settings (`burnqed_core.projection.Projection.payload`), the
    digests of its named inputs, ``extra`` (e.g. the iteration) and its code version ``code``."""
    digests: dict[str, Any] = {}
    for name, item in dict(inputs).items():
        if isinstance(item, (list, tuple)):
            digests[name] = [input_digest(x) for x in item]
        else:
            digests[name] = input_digest(item)  # type: ignore[arg-type]
    payload = {"stage": stage, "settings": dict(settings), "inputs": digests, "extra": dict(extra or {}),
               "code": code}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def read_marker(out_dir: Path) -> StageResult | None:
    """The saved result of a finished stage directory, or None."""
    done = out_dir / DONE
    if not done.is_file():
        return None
    try:
        return StageResult.model_validate_json(done.read_text(encoding="utf-8"))
    except ValueError:
        log.warning("%s is not a valid stage marker: the stage will be recomputed", done)
        return None


def is_done(out_dir: Path) -> bool:
    return read_marker(out_dir) is not None


def read_started(out_dir: Path) -> tuple[str | None, dict[str, str]]:
    """The fingerprint an unfinished folder was started for and the files read so far (None, {} if none)."""
    started = out_dir / STARTED
    if not started.is_file():
        return None, {}
    try:
        raw = json.loads(started.read_text(encoding="utf-8"))
    except ValueError:
        return None, {}
    return raw.get("fingerprint"), dict(raw.get("reads") or {})


def write_started(out_dir: Path, fp: str, reads: Mapping[str, str] | None = None) -> None:
    atomic_write_text(out_dir / STARTED, json.dumps({"fingerprint": fp, "reads": dict(reads or {})}))


def stale_reads(res: StageResult) -> list[str]:
    """The files a finished stage read that changed since (`burnqed_core.reads.changed`)."""
    return reads_mod.changed(res.reads)


def _prepare(out_dir: Path, fp: str) -> StageResult | None:
    """The saved result if it was made for ``fp`` from files that did not change since; else make ``out_dir``
    ready to (re)compute for ``fp`` and return None."""
    saved = read_marker(out_dir)
    if saved is not None and saved.fingerprint == fp:
        changed = stale_reads(saved)
        if not changed:
            return saved.model_copy(update={"skipped": True})
        log.info("%s: recomputing, a file it read changed: %s", out_dir, ", ".join(changed))
    old, old_reads = read_started(out_dir)
    stale = old == fp and bool(reads_mod.changed(old_reads))
    if saved is not None or (out_dir.exists() and (old != fp or stale) and any(out_dir.iterdir())):
        why = ("its inputs, settings, code or a file it read changed" if saved is not None or old
               else "it holds unknown partial output")
        log.info("%s: recomputing from scratch (%s)", out_dir, why)
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_started(out_dir, fp, old_reads if old == fp and not stale else None)  # a resume keeps what was read
    return None


def _finish(out_dir: Path, fp: str, res: StageResult, t0: float, reads: Mapping[str, str] | None = None
            ) -> StageResult:
    upd: dict[str, Any] = {"fingerprint": fp, "skipped": False, "reads": {**res.reads, **dict(reads or {})}}
    if not res.seconds:
        upd["seconds"] = round(time.perf_counter() - t0, 1)
    res = res.model_copy(update=upd)
    atomic_write_text(out_dir / DONE, res.model_dump_json(indent=1))
    return res


def prepare_stage(out_dir: Path, fp: str) -> StageResult | None:
    """The saved result (marked skipped) if ``out_dir`` finished for ``fp`` from unchanged files; else
    ``out_dir`` made ready to compute or resume for ``fp`` (cleared if it holds output of other inputs) and
    None."""
    return _prepare(out_dir, fp)


def finish(out_dir: Path, fp: str, res: StageResult, t0: float, reads: Mapping[str, str] | None = None
           ) -> StageResult:
    """Mark ``out_dir`` finished for ``fp`` with ``res`` and the files it read (``_done.json``, written last)."""
    return _finish(out_dir, fp, res, t0, reads)


@contextlib.contextmanager
def recording_into(out_dir: Path, fp: str) -> Iterator[reads_mod.Recording]:
    """A `burnqed_core.reads.recording` that starts from the files ``_started.json`` names (read by an
    interrupted attempt this one resumes) and keeps it up to date with the files read so far."""
    _, before = read_started(out_dir)
    with reads_mod.recording(on_new=lambda r: write_started(out_dir, fp, r)) as rec:
        rec.reads.update(before)
        yield rec


def run_stage(out_dir: Path, fp: str, fn: Callable[[], StageResult]) -> StageResult:
    """Run ``fn`` unless ``out_dir`` holds its result for fingerprint ``fp`` (and unchanged files)."""
    saved = _prepare(out_dir, fp)
    if saved is not None:
        return saved
    t0 = time.perf_counter()
    with recording_into(out_dir, fp) as rec:
        res = fn()
    return _finish(out_dir, fp, res, t0, rec.reads)


async def run_stage_async(out_dir: Path, fp: str, make: Callable[[], Awaitable[StageResult]]) -> StageResult:
    """`run_stage` for a stage that is a coroutine (Lean, search)."""
    saved = _prepare(out_dir, fp)
    if saved is not None:
        return saved
    t0 = time.perf_counter()
    with recording_into(out_dir, fp) as rec:
        res = await make()
    return _finish(out_dir, fp, res, t0, rec.reads)
