"""A cache of traced theorems: the tactic pairs of a known proof that Lean accepted, by theorem and Lean.

Tracing the corpus (`burnqed_core.lean.tracing.trace_theorems`) checks every known proof with the trusted
checker and reads the state before each tactic: minutes on the embedded Lean, and the same for every run that
traces the same theorems (a new work dir, a transfer fold that leaves one family out). The cache keeps, per
theorem, the pairs of a theorem that was traced completely (accepted by the checker), under a key of the
theorem's text (name, preamble, statement, proof), the Lean version and the Lean settings that can change a
verdict (the `machine` fields left out), and `TRACE_CACHE_VERSION`. A theorem is read from it only under the same
key, so a change of Lean, of its settings or of the theorem traces again; a failed trace is never stored. The
files are the project's own output under ``paths.home`` (like the baseline caches), not user input.

``rm -rf <paths.home>/trace-cache`` empties it (docs/results.md: the main job's time is measured without it).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from burnqed_core.config import is_machine
from burnqed_core.record_io import atomic_write_bytes
from burnqed_core.records import TacticPair, Theorem

log = logging.getLogger(__name__)

TRACE_CACHE_VERSION = 2  # 2: `case` steps are traced by the step replay (their states were the focused goal)
CACHE_DIR = "trace-cache"
_PAIRS = TypeAdapter(list[TacticPair])


def decisive(cls: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a ``model_dump(mode="json")`` of a ``cls``) without the `machine` fields (workers, paths,
    limits of the process), recursively."""
    out: dict[str, Any] = {}
    for name, field in cls.model_fields.items():
        if is_machine(field) or name not in data:
            continue
        ann = field.annotation
        value = data[name]
        if isinstance(ann, type) and issubclass(ann, BaseModel) and isinstance(value, dict):
            value = decisive(ann, value)
        out[name] = value
    return out


class TraceCache:
    """The cache directory of one Lean (version and settings); `get`/`put` by theorem."""

    def __init__(self, directory: Path, lean_version: str, lean_settings: dict[str, Any]) -> None:
        """``lean_settings``: ``profile.lean.model_dump(mode="json")``."""
        from burnqed_core.config import LeanConfig

        self.directory = directory
        self._lean = json.dumps({"version": TRACE_CACHE_VERSION, "lean": lean_version,
                                 "settings": decisive(LeanConfig, lean_settings)}, sort_keys=True)

    def key(self, t: Theorem) -> str:
        h = hashlib.sha256(self._lean.encode())
        h.update(json.dumps([t.name, t.preamble, t.statement, list(t.proof or [])], ensure_ascii=False).encode())
        return h.hexdigest()

    def _path(self, t: Theorem) -> Path:
        k = self.key(t)
        return self.directory / k[:2] / f"{k}.json"

    def get(self, t: Theorem) -> list[TacticPair] | None:
        """The cached pairs of ``t`` (None: not cached, or an unreadable file, which is then ignored)."""
        path = self._path(t)
        if not path.is_file():
            return None
        try:
            pairs = _PAIRS.validate_json(path.read_bytes())
        except (OSError, ValidationError) as e:
            log.warning("trace cache: ignoring unreadable %s (%s)", path, e)
            return None
        if not pairs or any(p.theorem != t.name for p in pairs):
            log.warning("trace cache: ignoring %s: its pairs are not %s's", path, t.name)
            return None
        return pairs

    def put(self, t: Theorem, pairs: Sequence[TacticPair]) -> None:
        """Store the pairs of a theorem traced completely (none: nothing is stored)."""
        if not pairs:
            return
        # Every run on the machine shares the cache: two runs tracing the same theorem write its file at once,
        # each through a temporary file of its own (a shared one was truncated and renamed under the other).
        atomic_write_bytes(self._path(t), _PAIRS.dump_json(list(pairs)))

    def split(self, theorems: Sequence[Theorem]) -> tuple[dict[str, list[TacticPair]], list[Theorem]]:
        """(theorem name -> cached pairs, the theorems to trace)."""
        hits: dict[str, list[TacticPair]] = {}
        misses: list[Theorem] = []
        for t in theorems:
            pairs = self.get(t)
            if pairs is None:
                misses.append(t)
            else:
                hits[t.name] = pairs
        return hits, misses
