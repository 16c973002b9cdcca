"""Baseline files keyed by what they were measured on: a hash of the theorems (name, statement, preamble) and of
what else the measurement depends on (`theorems_key`), a file ``<prefix><key24>.json`` (`keyed_path`), read only
when its key matches (`read_keyed`), and written replacing the older file of the same set (`write_keyed`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from burnqed_core.errors import DataError
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Theorem

M = TypeVar("M", bound=BaseModel)


def theorems_key(header: str, theorems: Sequence[Theorem]) -> str:
    """The key of a file measured on ``theorems`` (name, statement, preamble, in name order) under ``header``
    (what else the measurement depends on, as JSON)."""
    h = hashlib.sha256(header.encode())
    for t in sorted(theorems, key=lambda t: t.name):
        h.update(json.dumps([t.name, t.statement, t.preamble], ensure_ascii=False).encode())
    return h.hexdigest()


def keyed_path(directory: Path, prefix: str, key: str) -> Path:
    return directory / f"{prefix}{key[:24]}.json"


def read_keyed(path: Path, model: type[M], key: str, what: str) -> M | None:
    """The ``model`` record in ``path`` (None when absent); corrupt, or holding another key: an error naming
    the file."""
    if not path.exists():
        return None
    try:
        b = model.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as e:
        raise DataError(f"{path}: corrupt {what} ({str(e).splitlines()[0]}); delete it to re-measure") from None
    if getattr(b, "key", None) != key:
        raise DataError(f"{path}: {what} of another benchmark or settings (key {getattr(b, 'key', '')[:12]} != "
                        f"{key[:12]})")
    return b


def write_keyed(record: M, directory: Path, prefix: str, same_set: Callable[[M], bool]) -> Path:
    """Write ``record`` as ``<prefix><key24>.json`` in ``directory``; an older file of the prefix for which
    ``same_set`` holds (the same set re-measured) is removed, the files of other sets stay."""
    model = type(record)
    for old in directory.glob(f"{prefix}*.json"):
        try:
            other = model.model_validate_json(old.read_text(encoding="utf-8"))
        except (ValidationError, ValueError):
            continue
        if same_set(other):
            old.unlink()
    return atomic_write_text(keyed_path(directory, prefix, record.key),  # type: ignore[attr-defined]
                             record.model_dump_json(indent=1) + "\n")
