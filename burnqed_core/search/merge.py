"""One search output from the outputs of disjoint theorem sets (the shards of a search stage)."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.errors import BurnqedError


class MergeError(BurnqedError):
    """Search outputs that do not merge into one (a theorem in two of them)."""


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def merge_search_outputs(srcs: Sequence[Path], dest: Path) -> Path:
    """One search output (`burnqed_core.search.trajectories`) from the outputs ``srcs`` of disjoint theorem
    sets: their parts in order (hard-linked, copied where links are not possible) and one run record (the
    first source's, with every source's sessions); built aside and renamed onto ``dest``. A theorem saved in
    two sources is an error (`finished_theorems`)."""
    from burnqed_core.search.trajectories import read_run_record, write_run_record
    from burnqed_core.trajectory_io import PART_PREFIX, finished_theorems, list_parts

    tmp = dest.parent / f".{dest.name}.merging"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    records = []
    seq = 0
    for src in srcs:
        rec = read_run_record(src) if src.is_dir() else None
        if rec is not None:
            records.append(rec)
        for part in list_parts(src):
            target = tmp / f"{PART_PREFIX}{seq:05d}.parquet"
            try:
                os.link(part, target)
            except OSError:
                shutil.copy2(part, target)
            seq += 1
    if records:
        digest = hashlib.sha256("".join(r.theorems_sha256 for r in records).encode()).hexdigest()
        merged = records[0].model_copy(update={
            "theorems_total": sum(r.theorems_total for r in records), "theorems_sha256": digest,
            "theorems_source": f"{records[0].theorems_source} ({len(records)} shards)",
            "sessions": [s for r in records for s in r.sessions]})
        write_run_record(tmp, merged)
    try:
        finished_theorems(tmp)  # raises on a theorem saved twice
    except Exception as e:
        raise MergeError(f"merging {len(srcs)} shard outputs into {dest}: {e}") from None
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    fsync_dir(dest.parent)
    return dest
