"""The one atomic-write helper and the one file-hash helper of record_io."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from burnqed_core.record_io import atomic_open, atomic_write_bytes, atomic_write_text, file_sha256


def test_atomic_write_replaces_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.json"
    atomic_write_text(target, "old")
    atomic_write_bytes(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    atomic_write_text(target, "old")
    with pytest.raises(RuntimeError), atomic_open(target) as f:
        f.write(b"half of the new")
        raise RuntimeError("crash in the middle")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_file_sha256_matches_hashlib_over_chunk_boundaries(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000  # > 1 MiB: several chunks
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
