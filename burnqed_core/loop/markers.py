"""Stage markers keyed by a fingerprint of the stage's inputs and settings.

A finished stage directory holds ``_done.json``: the stage's `StageResult`
plus the fingerprint it was computed for. Running the stage again

* with the same fingerprint returns the saved result at once (a retry after
  a preemption, a re-materialisation with nothing changed);
* with another fingerprint (an input or a setting changed) clears the
  directory and recomputes, so a re-materialisation never returns a stale
  result.

An unfinished directory (no ``_done.json``) is resumed inside by the stage
itself (training checkpoints, flushed search parts) only when its
``_started.json`` names the same fingerprint; partial outputs made for
other inputs are cleared first.

The fingerprint hashes the settings section the stage receives (its spec,
`burnqed_core.loop.spec`) and a digest of each input: an upstream stage directory by its
``_done.json`` (so any recompute upstream changes it), a file by its bytes,
another directory by its listing, anything else by its text (e.g. a Hugging
Face model name).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

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
) -> str:
    """sha256 over the stage name, its settings section (`burnqed_core.loop.settings.section_payload`), the
    digests of its named inputs and ``extra`` (e.g. the iteration)."""
    digests: dict[str, Any] = {}
    for name, item in dict(inputs).items():
        if isinstance(item, (list, tuple)):
            digests[name] = [input_digest(x) for x in item]
        else:
            digests[name] = input_digest(item)  # type: ignore[arg-type]
    payload = {"stage": stage, "settings": dict(settings), "inputs": digests, "extra": dict(extra or {})}
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


def _prepare(out_dir: Path, fp: str) -> StageResult | None:
    """The saved result if it was made for ``fp``; else make ``out_dir`` ready
    to (re)compute for ``fp`` and return None."""
    saved = read_marker(out_dir)
    if saved is not None and saved.fingerprint == fp:
        return saved.model_copy(update={"skipped": True})
    started = out_dir / STARTED
    old = None
    if started.is_file():
        try:
            old = json.loads(started.read_text(encoding="utf-8")).get("fingerprint")
        except ValueError:
            old = None
    if saved is not None or (out_dir.exists() and old != fp and any(out_dir.iterdir())):
        why = "its inputs or settings changed" if saved is not None or old else "it holds unknown partial output"
        log.info("%s: recomputing from scratch (%s)", out_dir, why)
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(started, json.dumps({"fingerprint": fp}))
    return None


def _finish(out_dir: Path, fp: str, res: StageResult, t0: float) -> StageResult:
    upd: dict[str, Any] = {"fingerprint": fp, "skipped": False}
    if not res.seconds:
        upd["seconds"] = round(time.perf_counter() - t0, 1)
    res = res.model_copy(update=upd)
    atomic_write_text(out_dir / DONE, res.model_dump_json(indent=1))
    return res


def prepare_stage(out_dir: Path, fp: str) -> StageResult | None:
    """The saved result (marked skipped) if ``out_dir`` finished for ``fp``; else ``out_dir`` made ready to
    compute or resume for ``fp`` (cleared if it holds output of other inputs) and None."""
    return _prepare(out_dir, fp)


def finish(out_dir: Path, fp: str, res: StageResult, t0: float) -> StageResult:
    """Mark ``out_dir`` finished for ``fp`` with ``res`` (``_done.json``, written last)."""
    return _finish(out_dir, fp, res, t0)


def run_stage(out_dir: Path, fp: str, fn: Callable[[], StageResult]) -> StageResult:
    """Run ``fn`` unless ``out_dir`` holds its result for fingerprint ``fp``."""
    saved = _prepare(out_dir, fp)
    if saved is not None:
        return saved
    t0 = time.perf_counter()
    return _finish(out_dir, fp, fn(), t0)


async def run_stage_async(out_dir: Path, fp: str, make: Callable[[], Awaitable[StageResult]]) -> StageResult:
    """`run_stage` for a stage that is a coroutine (Lean, search)."""
    saved = _prepare(out_dir, fp)
    if saved is not None:
        return saved
    t0 = time.perf_counter()
    return _finish(out_dir, fp, await make(), t0)
