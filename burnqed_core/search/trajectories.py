"""Trajectory output: a directory of Parquet part files, resumable, with a run record.

Layout of an output ``traj.parquet`` (a directory, as Spark/Hive write it):

* ``part-00000.parquet``, ``part-00001.parquet`` ...: each holds the
  `TrajectoryRecord` rows of a group of finished theorems (``flush_every``),
  and the `SearchResult` of each of those theorems as JSON in the file's
  key-value metadata (``burnqed.search_results``), so that a theorem with no
  rows (a start error) is known to be done too. A part is written to a hidden
  temporary file, fsynced and renamed: it exists whole or not at all. A
  SIGKILL loses at most the theorems not yet flushed and never damages a part
  (a ParquetWriter file killed before ``close()`` has no footer and is
  unreadable: hence one whole file per flush).
* ``_run.json``: the run record (model identity, prompt version, sampling,
  budgets, Lean backend and version, seeds, sessions with start/end times).

Names starting with ``.`` or ``_`` are skipped by pyarrow/polars dataset
readers, so ``pq.read_table("traj.parquet")`` or
``pl.read_parquet("traj.parquet/*.parquet")`` read the rows directly. The
readers of the parts (`read_trajectories`, `read_results`,
`finished_theorems` ...) are in `burnqed_core.trajectory_io`, below every
package that reads them; this module keeps the writers, the run record and
the statistics.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from burnqed_core.errors import BurnqedError, RecordFileError
from burnqed_core.record_io import atomic_open, atomic_write_text, file_sha256, to_table
from burnqed_core.records import TrajectoryRecord
from burnqed_core.search.engine import Sampling, SearchOutcome
from burnqed_core.trajectory_io import (
    PART_PREFIX,
    RESULTS_KEY,
    SearchResult,
    list_parts,
    read_results,
    read_trajectory_table,
)

log = logging.getLogger(__name__)

RUN_RECORD = "_run.json"


class OutputExistsError(BurnqedError):
    """The output already holds results and resuming was not asked for."""


class ResumeMismatchError(BurnqedError):
    """Resuming with settings that differ from the run that wrote the output."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- parts ------------------------------------------------------------------


def write_part(directory: Path, seq: int, outcomes: Sequence[SearchOutcome]) -> Path:
    """One part file holding these theorems' rows and results, atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    records = [r for o in outcomes for r in o.records]
    table = to_table(records, TrajectoryRecord)
    results = json.dumps([o.result.model_dump(mode="json") for o in outcomes]).encode()
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), RESULTS_KEY: results})
    path = directory / f"{PART_PREFIX}{seq:05d}.parquet"
    if path.exists():
        raise RecordFileError(f"{path}: part already exists (two writers on one output?)")
    with atomic_open(path) as f:
        pq.write_table(table, f)
    return path


def clean_temporaries(path: str | Path) -> int:
    """Remove half-written part files left by a killed writer."""
    path = Path(path)
    n = 0
    if path.is_dir():
        for p in path.iterdir():
            if p.name.startswith(f".{PART_PREFIX}") and ".tmp-" in p.name:
                p.unlink(missing_ok=True)
                n += 1
    return n


class TrajectoryWriter:
    """Buffers finished searches and writes a part every ``flush_every``
    theorems. Refuses a theorem that is already saved or buffered."""

    def __init__(self, directory: str | Path, flush_every: int, already_saved: Iterable[str] = ()) -> None:
        if flush_every < 1:
            raise ValueError("flush_every must be >= 1")
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise OutputExistsError(f"{self.directory} is a file; the search output is a directory of parts")
        self.flush_every = flush_every
        self.saved: set[str] = set(already_saved)
        self.buffer: list[SearchOutcome] = []
        parts = list_parts(self.directory)
        self._seq = int(parts[-1].stem.removeprefix(PART_PREFIX)) + 1 if parts else 0
        self.theorems_written = 0

    def add(self, outcome: SearchOutcome) -> Path | None:
        name = outcome.result.theorem
        if name in self.saved or any(o.result.theorem == name for o in self.buffer):
            raise BurnqedError(f"theorem {name!r} would be written twice to {self.directory}")
        self.buffer.append(outcome)
        if len(self.buffer) >= self.flush_every:
            return self.flush()
        return None

    def flush(self) -> Path | None:
        if not self.buffer:
            return None
        part = write_part(self.directory, self._seq, self.buffer)
        self._seq += 1
        self.saved.update(o.result.theorem for o in self.buffer)
        self.theorems_written += len(self.buffer)
        log.info("checkpoint: %d theorems saved in %s (%s)", len(self.saved), self.directory, part.name)
        self.buffer = []
        return part

    def close(self) -> None:
        self.flush()


# -- statistics -----------------------------------------------------------------


class TrajectoryStats(BaseModel):
    """Summary of a search output (``burnqed trajectories stats``)."""

    model_config = ConfigDict(frozen=True)
    theorems: int
    proved: int
    start_errors: int = 0
    infra_errors: int = 0
    nodes: int
    rows: int
    positive: int = 0
    negative: int = 0
    unknown: int = 0
    time_s: float | None = Field(None, description="sum of per-theorem search times (concurrent: > wall)")
    wall_s: float | None = Field(None, description="wall time of the run's closed sessions (run record)")
    sessions: int = 0
    policy_s: float | None = None
    lean_s: float | None = None
    engine_s: float | None = None
    expansions: int | None = None
    candidates_min: int | None = None
    candidates_avg: float | None = None
    candidates_max: int | None = None
    automation_tried: int | None = Field(None, description="automation candidates tried (not sampled by the policy)")
    proved_with_automation: int = Field(0, description="proofs with a step only the automation proposed")
    timeouts: int = Field(0, description="searches stopped by the per-theorem time cap (search.timeout_s): their "
                          "outcome depends on the machine's speed, not on the node budget alone")
    checks: int | None = Field(None, description="Lean tactic checks sent (every candidate tried): the compute")
    proved_with_premise: int = Field(0, description="proofs with a premise step (source 'premise')")
    proved_with_policy: int = Field(0, description="proofs with a step only the policy proposed")
    stopped_by_checks: int = Field(0, description="searches that spent search.max_checks")

    @property
    def solve_rate(self) -> float:
        return self.proved / self.theorems if self.theorems else 0.0


def trajectory_stats(path: str | Path) -> TrajectoryStats:
    """From the saved results when there are any (directory output), else
    from the rows alone (a plain Parquet file: no timing or candidate stats)."""
    path = Path(path)
    table = read_trajectory_table(path)
    labels = table.column("label").to_pylist() if table.num_rows else []
    counts = {k: labels.count(k) for k in ("positive", "negative", "unknown")}
    results = read_results(path) if path.is_dir() else []
    record = read_run_record(path) if path.is_dir() else None
    sessions = record.sessions if record is not None else []
    closed = [(datetime.fromisoformat(x.started), datetime.fromisoformat(x.ended)) for x in sessions if x.ended]
    wall = sum((b - a).total_seconds() for a, b in closed) if closed else None
    if results:
        return TrajectoryStats(theorems=len(results), rows=table.num_rows, **counts, wall_s=wall,
                               sessions=len(sessions), **_outcome_fields(results), **_time_fields(results))
    names = table.column("theorem").to_pylist() if table.num_rows else []
    proved_col = table.column("proved").to_pylist() if table.num_rows else []
    return TrajectoryStats(
        theorems=len(set(names)),
        proved=len({n for n, p in zip(names, proved_col, strict=True) if p}),
        nodes=table.num_rows,
        rows=table.num_rows,
        **counts,
    )


def _outcome_fields(results: Sequence[SearchResult]) -> dict[str, int]:
    """How the searches ended: proved (and with which kinds of step), errors, stops, nodes, checks."""
    return {
        "proved": sum(r.proved for r in results),
        "start_errors": sum(r.error == "start" for r in results),
        "infra_errors": sum(r.error == "infra" for r in results),
        "nodes": sum(r.nodes for r in results),
        "automation_tried": sum(r.automation_tried for r in results),
        "proved_with_automation": sum(r.proved and "automation" in r.proof_sources for r in results),
        "timeouts": sum(r.stop == "timeout" for r in results),
        "checks": sum(r.tactics_tried for r in results),
        "proved_with_premise": sum(r.proved and "premise" in r.proof_sources for r in results),
        "proved_with_policy": sum(r.proved and "policy" in r.proof_sources for r in results),
        "stopped_by_checks": sum(r.stop == "max_checks" for r in results),
    }


def _time_fields(results: Sequence[SearchResult]) -> dict[str, float | int]:
    """Where the time went (policy, Lean, engine), the expansions and the candidates per expansion."""
    searched = [r for r in results if r.expansions > 0]
    exp = sum(r.expansions for r in results)
    return {
        "time_s": sum(r.time_s for r in results),
        "policy_s": sum(r.policy_s for r in results),
        "lean_s": sum(r.lean_s for r in results),
        "engine_s": sum(r.engine_s for r in results),
        "expansions": exp,
        "candidates_min": min((r.candidates_min for r in searched), default=0),
        "candidates_avg": sum(r.candidates_avg * r.expansions for r in results) / exp if exp else 0.0,
        "candidates_max": max((r.candidates_max for r in searched), default=0),
    }


def format_stats(stats: TrajectoryStats) -> str:
    lines = [
        f"theorems      {stats.theorems}",
        f"proved        {stats.proved} ({100 * stats.solve_rate:.1f}%)",
    ]
    if stats.start_errors or stats.infra_errors:
        lines.append(f"errors        {stats.start_errors} start (statement did not elaborate), "
                     f"{stats.infra_errors} infra (Lean failed: not a verdict)")
    per = stats.nodes / stats.theorems if stats.theorems else 0.0
    lines.append(f"nodes         {stats.nodes} ({per:.1f} per theorem)")
    lines.append(f"labels        {stats.positive} positive, {stats.negative} negative, {stats.unknown} unknown")
    if stats.time_s is not None:
        per_t = stats.time_s / stats.theorems if stats.theorems else 0.0
        lines.append(f"time          {stats.time_s:.1f} s searched ({per_t:.2f} s per theorem; "
                     f"policy {stats.policy_s or 0:.1f} s, Lean {stats.lean_s or 0:.1f} s, "
                     f"engine {stats.engine_s or 0:.2f} s)")
    if stats.wall_s is not None:
        lines.append(f"wall          {stats.wall_s:.0f} s over {stats.sessions} session(s)")
    if stats.expansions is not None:
        lines.append(f"expansions    {stats.expansions}")
        lines.append(f"candidates/expansion (unique)  min {stats.candidates_min}  avg {stats.candidates_avg or 0:.2f}"
                     f"  max {stats.candidates_max}")
    if stats.automation_tried:
        lines.append(f"automation    {stats.automation_tried} automation candidates tried; "
                     f"{stats.proved_with_automation} of {stats.proved} proofs use one")
    if stats.timeouts:
        lines.append(f"timeouts      {timeout_note(stats)}")
    return "\n".join(lines)


def timeout_note(stats: TrajectoryStats) -> str:
    """``2 searches stopped at the time cap (search.timeout_s), not the node budget: machine-dependent``, or
    "" when none did."""
    if not stats.timeouts:
        return ""
    return (f"{stats.timeouts} search{'es' if stats.timeouts > 1 else ''} stopped at the time cap "
            "(search.timeout_s), not the node budget: machine-dependent")


# -- run record -------------------------------------------------------------------


class ModelIdentity(BaseModel):
    """Enough to tell two model directories apart without hashing weights:
    the config's hash and the weight files' names and sizes."""

    model_config = ConfigDict(frozen=True)
    path: str
    config_sha256: str | None = None
    weights: list[tuple[str, int]] = Field(default_factory=list)


def model_identity(path: str | Path | None) -> ModelIdentity:
    if path is None:
        return ModelIdentity(path="")
    p = Path(path)
    cfg = p / "config.json"
    digest = file_sha256(cfg) if cfg.is_file() else None
    weights = sorted(
        (f.name, f.stat().st_size) for f in p.glob("*") if f.suffix in (".safetensors", ".bin") and f.is_file()
    ) if p.is_dir() else []
    return ModelIdentity(path=str(p.resolve()), config_sha256=digest, weights=weights)


class RunSession(BaseModel):
    started: str = Field(default_factory=now_iso)
    ended: str | None = None
    status: Literal["running", "complete", "interrupted", "failed"] = "running"
    resumed: bool = False
    theorems_at_start: int = 0
    theorems_written: int = 0
    host: str = Field(default_factory=socket.gethostname)
    pid: int = Field(default_factory=os.getpid)
    served_model: dict[str, str | None] | None = Field(
        None, description="what the policy server reported serving in this session (model_path, weight_version)")


class RunRecord(BaseModel):
    """What produced a trajectory output: enough to reproduce the run.
    ``sessions`` grows by one per invocation (resumes append)."""

    kind: Literal["search_run"] = "search_run"
    model: ModelIdentity
    policy_backend: str = ""
    prompt_version: str
    sampling: Sampling
    budgets: dict[str, Any]
    search: dict[str, Any] = Field(default_factory=dict, description="the whole search section of the profile")
    ebm: str | None = None
    lean_backend: str = ""
    lean_version: str = ""
    seeds: dict[str, int] = Field(default_factory=dict)
    theorems_source: str = ""
    theorems_sha256: str = ""
    theorems_total: int = 0
    iteration: int = 0
    profile: str = ""
    served_model: dict[str, str | None] | None = Field(
        None, description="what a policy server (SGLang) reported serving: its /model_info model_path and "
        "weight_version, which may differ from `model` after a refused weight swap; None for in-process policies")
    automation: dict[str, Any] | None = Field(
        None, description="the automation candidates added to the policy's samples (search.automation); "
        "None: the policy alone")
    sessions: list[RunSession] = Field(default_factory=list)

    # what must match for a resume to add to the same output
    FINGERPRINT_FIELDS: ClassVar[tuple[str, ...]] = (
        "model", "prompt_version", "sampling", "budgets", "ebm", "automation", "theorems_sha256", "theorems_total",
        "iteration",
    )

    def mismatches(self, other: RunRecord) -> list[str]:
        out = []
        for name in self.FINGERPRINT_FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            if a != b:
                out.append(f"{name}: saved {_short(a)} vs now {_short(b)}")
        return out


def _short(v: Any) -> str:
    s = v.model_dump_json() if isinstance(v, BaseModel) else json.dumps(v, default=str)
    return s if len(s) < 160 else s[:157] + "..."


def run_record_path(out: str | Path) -> Path:
    return Path(out) / RUN_RECORD


def write_run_record(out: str | Path, record: RunRecord) -> Path:
    path = run_record_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, record.model_dump_json(indent=2))
    return path


def read_run_record(out: str | Path) -> RunRecord | None:
    path = run_record_path(out)
    if not path.exists():
        return None
    try:
        return RunRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as e:
        raise RecordFileError(f"{path}: not a valid run record ({e.errors()[0]['msg']})") from None
