"""Reading a search output: the per-theorem `SearchResult` and the trajectory
rows of a directory of Parquet parts (or of one Parquet file of rows).

The format (written by `burnqed_core.search.trajectories`, which keeps the
writers, the run record and the statistics) is read by the search itself (to
resume), the EBM, the evaluation and the loop; it lives here, at the bottom
layer with `burnqed_core.records`, so that none of them reads it through the
search package.

Layout of an output ``traj.parquet`` (a directory): ``part-00000.parquet``,
``part-00001.parquet`` ... each hold the `TrajectoryRecord` rows of a group
of finished theorems and the `SearchResult` of each of those theorems as
JSON in the file's key-value metadata (``burnqed.search_results``), so that
a theorem with no rows (a start error) is known to be done too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from burnqed_core.errors import RecordFileError
from burnqed_core.record_io import read_table, validate_rows
from burnqed_core.records import TrajectoryRecord, arrow_schema

RESULTS_KEY = b"burnqed.search_results"
PART_PREFIX = "part-"

StopReason = Literal["proved", "max_nodes", "max_checks", "exhausted", "timeout", "start_error", "infra"]


class SearchResult(BaseModel):
    """Summary of one theorem's search (one line per theorem in the output)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    theorem: str
    proved: bool
    proof: list[str] = Field(default_factory=list)
    stop: StopReason
    error: Literal["", "start", "infra"] = Field(
        "", description="'start': the statement did not elaborate; 'infra': Lean failed, not a verdict")
    message: str = ""
    nodes: int = 0
    nodes_to_proof: int | None = Field(
        None, description="nodes created before the accepted proof's closing node (None: not proved)")
    expansions: int = 0
    depth_reached: int = 0
    time_s: float = 0.0
    policy_s: float = Field(0.0, description="share of generate() time (a call serves several theorems)")
    lean_s: float = Field(0.0, description="share of apply_many() time, plus start and re-check")
    engine_s: float = Field(0.0, description="share of the engine's own bookkeeping")
    ebm_s: float = 0.0
    candidates_min: int = 0
    candidates_avg: float = 0.0
    candidates_max: int = 0
    tactics_tried: int = 0
    tactic_errors: int = 0
    infra_failures: int = 0
    transpositions: int = 0
    recheck_failures: int = 0
    automation_tried: int = Field(0, description="automation candidates tried that the policy did not sample")
    proof_sources: list[str] = Field(default_factory=list,
                                     description="per proof step: 'policy', 'automation', 'both', 'structural' "
                                     "or 'premise' (its origin)")


def list_parts(path: str | Path) -> list[Path]:
    """The committed part files of an output directory, in write order."""
    path = Path(path)
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if p.name.startswith(PART_PREFIX) and p.suffix == ".parquet")


def _part_results(part: Path) -> list[SearchResult]:
    try:
        meta = pq.read_schema(part).metadata or {}
    except (pa.ArrowException, OSError) as e:
        raise RecordFileError(f"{part}: not a readable Parquet file ({e})") from None
    raw = meta.get(RESULTS_KEY)
    if raw is None:
        raise RecordFileError(f"{part}: no search results in its metadata (not written by burnqed search)")
    try:
        return [SearchResult.model_validate(x) for x in json.loads(raw)]
    except (ValueError, ValidationError) as e:
        raise RecordFileError(f"{part}: search results metadata is invalid ({e})") from None


def read_results(path: str | Path) -> list[SearchResult]:
    """Every theorem's `SearchResult` in an output directory."""
    out: list[SearchResult] = []
    for part in list_parts(path):
        out.extend(_part_results(part))
    return out


def finished_theorems(path: str | Path) -> set[str]:
    """Names of the theorems whose search is saved (the skip set of --resume).
    A theorem saved twice means the output was corrupted by hand or by two
    writers: an error, never silently merged."""
    seen: set[str] = set()
    for part in list_parts(path):
        for r in _part_results(part):
            if r.theorem in seen:
                raise RecordFileError(f"{path}: theorem {r.theorem!r} is saved twice (second time in {part.name})")
            seen.add(r.theorem)
    return seen


def read_trajectory_table(path: str | Path) -> pa.Table:
    """All rows of an output directory (or of one Parquet file) as one table."""
    path = Path(path)
    if not path.exists():
        raise RecordFileError(f"{path}: no such file or directory")
    schema = arrow_schema(TrajectoryRecord)
    if path.is_file():
        return _conform(read_table(path, TrajectoryRecord), schema)
    parts = list_parts(path)
    if not parts:
        return schema.empty_table()
    tables = [_conform(read_table(p, TrajectoryRecord), schema) for p in parts]
    return pa.concat_tables(tables)


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The table in the current schema: a column added since the file was
    written (e.g. ``source``) is filled with the field's default."""
    for name in schema.names:
        if name not in table.column_names:
            default = TrajectoryRecord.model_fields[name].get_default(call_default_factory=True)
            table = table.append_column(schema.field(name), pa.array([default] * table.num_rows,
                                                                     type=schema.field(name).type))
    return table.select(schema.names).cast(schema)


def read_trajectories(path: str | Path) -> list[TrajectoryRecord]:
    """All rows as validated records (for small outputs; use the table for large ones)."""
    return validate_rows(read_trajectory_table(path).to_pylist(), TrajectoryRecord, path, "trajectory record")
