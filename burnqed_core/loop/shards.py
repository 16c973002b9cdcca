"""A stage fanned out over theorem shards: plan, run one shard, gather the finished shards.

A search stage (``trajectories``, ``eval_report``) splits its theorem list
into shards of ``pipeline.shard_size`` theorems (`plan`); each shard runs on
its own (in the Dagster pipeline: a mapped step, a pod of its own on
Kubernetes) and a last step merges the shards into the stage's output.

Layout under the stage directory::

    _started.json, _plan.json         the stage's fingerprint, the shards' theorem names
    shards/shard-00003/               a FINISHED shard: whole, with its _done.json
    shards/.shard-00003.partial/      a shard being computed (resumable inside)
    _done.json                        written last by the merge

A shard's output is complete or absent: it is computed in its ``.partial``
directory (where the search keeps its resumable flushed parts, so a killed
shard resumes mid-shard) and renamed to ``shard-NNNNN`` once its own
``_done.json`` is written. A finished shard whose fingerprint (the stage's
fingerprint, its index and its theorems) matches, and none of whose read files
changed, is never recomputed. A stage whose inputs changed is cleared as a
whole (`burnqed_core.loop.markers`). The files the plan's theorem selection read
(`burnqed_core.reads`) are kept in ``_plan.json``; the merge's ``_done.json``
holds them with every shard's and its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core import reads
from burnqed_core.file_lock import file_lock
from burnqed_core.loop.layout import DONE, STARTED
from burnqed_core.loop.markers import (
    finish,
    prepare_stage,
    read_marker,
    read_started,
    run_stage_async,
    stale_reads,
    write_started,
)
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import StageResult, Theorem
from burnqed_core.search.merge import MergeError, fsync_dir

log = logging.getLogger(__name__)

PLAN = "_plan.json"
SHARDS_DIR = "shards"


class ShardError(MergeError):
    """The shards of a stage do not add up to its plan (a missing, foreign or duplicated shard)."""


class ShardSpec(BaseModel):
    """One shard of a stage: what the mapped step needs besides the resources."""

    model_config = ConfigDict(frozen=True)
    stage: str
    iteration: int
    index: int
    count: int
    stage_dir: str
    stage_fingerprint: str
    theorems: list[Theorem]

    @property
    def key(self) -> str:
        """The Dagster mapping key (letters, digits, underscores)."""
        return f"shard_{self.index:05d}"

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.theorems]

    @property
    def fingerprint(self) -> str:
        """The stage's fingerprint, the shard's index and its theorems (statements and preambles included: a
        theorem edited under the same name makes another shard)."""
        theorems = hashlib.sha256("\n".join(t.model_dump_json() for t in self.theorems).encode()).hexdigest()
        payload = {"stage": self.stage_fingerprint, "index": self.index, "theorems": self.names,
                   "contents": theorems}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    @property
    def dir(self) -> Path:
        return shard_dir(Path(self.stage_dir), self.index)


class ShardResult(BaseModel):
    """What one shard step did (the mapped output, small: the data stays in the shard directory)."""

    model_config = ConfigDict(frozen=True)
    index: int
    path: str
    theorems: list[str]
    fingerprint: str
    skipped: bool = Field(description="finished earlier with the same fingerprint: not recomputed")
    seconds: float = 0.0
    metrics: dict[str, Any] = Field(default_factory=dict)
    worker: str | None = Field(None, description="where the shard step ran (the pipeline's Celery worker, host)")


class Plan(BaseModel):
    stage: str
    iteration: int
    fingerprint: str
    shard_size: int
    shards: list[list[str]]
    specs: list[ShardSpec] = Field(default_factory=list, description="every shard, for a merge that must run one")
    reads: dict[str, str] = Field(default_factory=dict, description="the files the theorem selection read")

    @property
    def theorems(self) -> list[str]:
        return [n for s in self.shards for n in s]


def shard_dir(stage_dir: Path, index: int) -> Path:
    return stage_dir / SHARDS_DIR / f"shard-{index:05d}"


def partial_dir(stage_dir: Path, index: int) -> Path:
    return stage_dir / SHARDS_DIR / f".shard-{index:05d}.partial"


def lock_path(stage_dir: Path, index: int) -> Path:
    return stage_dir / SHARDS_DIR / f".shard-{index:05d}.lock"


@contextlib.asynccontextmanager
async def shard_lock(stage_dir: Path, index: int) -> AsyncIterator[None]:
    """Hold the shard's lock (`burnqed_core.file_lock`, a file beside it) while the block runs: two steps of
    one shard (a step sent again while its first worker still runs, a duplicate delivery) never write its
    directory at once; the second waits, then reads back or resumes what the first left."""
    async with file_lock(lock_path(stage_dir, index), f"{stage_dir} shard {index + 1}"):
        yield


def split(theorems: Sequence[Theorem], size: int) -> list[list[Theorem]]:
    """Consecutive shards of at most ``size`` theorems (one empty shard for an empty list)."""
    if size < 1:
        raise ValueError(f"shard size must be >= 1, got {size}")
    out = [list(theorems[i:i + size]) for i in range(0, len(theorems), size)]
    return out or [[]]


def read_plan(stage_dir: Path) -> Plan | None:
    path = stage_dir / PLAN
    if not path.is_file():
        return None
    return Plan.model_validate_json(path.read_text(encoding="utf-8"))


def plan(stage: str, iteration: int, stage_dir: Path, fp: str,
         select: Callable[[], Sequence[Theorem]] | Sequence[Theorem],
         size: int) -> tuple[list[ShardSpec], StageResult | None]:
    """The theorems ``select()`` gives (its file reads recorded; or ``select`` itself, a list), cut into shards,
    with ``stage_dir`` prepared for fingerprint ``fp`` (cleared if it holds another one, or a file it read
    changed); returns the shard specs and, when the stage already finished with ``fp`` from unchanged files,
    its saved result."""
    with reads.recording() as rec:
        theorems = list(select() if callable(select) else select)
    saved = prepare_stage(stage_dir, fp)
    _, started = read_started(stage_dir)
    write_started(stage_dir, fp, {**started, **rec.reads})
    parts = split(theorems, size)
    old = read_plan(stage_dir)
    specs = [ShardSpec(stage=stage, iteration=iteration, index=i, count=len(parts), stage_dir=str(stage_dir),
                       stage_fingerprint=fp, theorems=p) for i, p in enumerate(parts)]
    new = Plan(stage=stage, iteration=iteration, fingerprint=fp, shard_size=size,
               shards=[[t.name for t in p] for p in parts], specs=specs, reads=rec.reads)
    if old is None or old != new:
        if old is not None and old.fingerprint == fp and old.shard_size != size:
            log.info("%s: shard size %d -> %d: finished shards of the old plan are not reused", stage_dir,
                     old.shard_size, size)
        atomic_write_text(stage_dir / PLAN, new.model_dump_json(indent=1))
    log.info("%s: %d theorems in %d shard(s) of at most %d", stage, len(theorems), len(parts), size)
    return specs, saved


def _finished(spec: ShardSpec) -> StageResult | None:
    saved = read_marker(spec.dir)
    if saved is None or saved.fingerprint != spec.fingerprint or stale_reads(saved):
        return None
    return saved


def _stage_started_for(spec: ShardSpec) -> None:
    started = Path(spec.stage_dir) / STARTED
    try:
        fp = json.loads(started.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError):
        fp = None
    if fp != spec.stage_fingerprint:
        raise ShardError(f"{spec.stage} shard {spec.index}: {spec.stage_dir} was prepared for other inputs "
                         f"(re-run the whole stage)")


def _result(spec: ShardSpec, res: StageResult, skipped: bool) -> ShardResult:
    return ShardResult(index=spec.index, path=str(spec.dir), theorems=spec.names, fingerprint=spec.fingerprint,
                       skipped=skipped, seconds=res.seconds, metrics=res.metrics)


async def run_shard(spec: ShardSpec, compute: Callable[[Path], Awaitable[StageResult]]) -> ShardResult:
    """The shard's result: read back when it finished before with the same fingerprint (or when the whole stage
    did), else ``compute(work_dir)`` in the shard's ``.partial`` directory (resumed there after a kill),
    then renamed to the shard directory in one step."""
    stage_dir = Path(spec.stage_dir)
    whole = read_marker(stage_dir)
    if whole is not None and whole.fingerprint == spec.stage_fingerprint and not stale_reads(whole):
        return ShardResult(index=spec.index, path=str(spec.dir), theorems=spec.names, fingerprint=spec.fingerprint,
                           skipped=True)
    async with shard_lock(stage_dir, spec.index):
        return await _run_locked(spec, compute)


async def _run_locked(spec: ShardSpec, compute: Callable[[Path], Awaitable[StageResult]]) -> ShardResult:
    stage_dir = Path(spec.stage_dir)
    done = _finished(spec)
    if done is not None:
        log.info("%s shard %d/%d: finished earlier, not recomputed", spec.stage, spec.index + 1, spec.count)
        return _result(spec, done, skipped=True)
    _stage_started_for(spec)
    if spec.dir.exists():  # a shard of other inputs or of an older plan
        shutil.rmtree(spec.dir)
    work = partial_dir(stage_dir, spec.index)
    t0 = time.perf_counter()
    log.info("%s shard %d/%d: %d theorems", spec.stage, spec.index + 1, spec.count, len(spec.theorems))
    res = await run_stage_async(work, spec.fingerprint, lambda: compute(work))
    if not res.seconds:
        res = res.model_copy(update={"seconds": round(time.perf_counter() - t0, 1)})
    os.replace(work, spec.dir)
    fsync_dir(spec.dir.parent)
    return _result(spec, res, skipped=False)


def missing(stage_dir: Path, fp: str, results: Sequence[ShardResult]) -> list[ShardSpec]:
    """The planned shards absent from ``results``: their steps never ran in this run. Dagster's re-execution
    from failure re-runs failed and interrupted mapped steps but not those that never started (a run killed
    before reaching them), so the merge runs these itself (`run_shard`: finished ones are read back)."""
    p = read_plan(stage_dir)
    if p is None or p.fingerprint != fp:
        raise ShardError(f"{stage_dir}: no shard plan for these inputs (run the split step again)")
    have = {r.index for r in results}
    return [s for s in p.specs if s.index not in have]


def gather(stage_dir: Path, fp: str, results: Sequence[ShardResult]) -> list[Path]:
    """The finished shard directories, in plan order, after checking that they cover the plan exactly: each
    shard once, with its planned theorems, finished for ``fp``."""
    p = read_plan(stage_dir)
    if p is None or p.fingerprint != fp:
        raise ShardError(f"{stage_dir}: no shard plan for these inputs (run the split step again)")
    by_index: dict[int, ShardResult] = {}
    for r in results:
        if r.index in by_index:
            raise ShardError(f"{stage_dir}: shard {r.index} was given twice to the merge")
        by_index[r.index] = r
    if sorted(by_index) != list(range(len(p.shards))):
        raise ShardError(f"{stage_dir}: the merge got shards {sorted(by_index)}, the plan has {len(p.shards)}")
    dirs = []
    for i, names in enumerate(p.shards):
        d = shard_dir(stage_dir, i)
        saved = read_marker(d)
        if by_index[i].theorems != names or saved is None or saved.fingerprint != by_index[i].fingerprint:
            raise ShardError(f"{d}: missing or not finished for the planned theorems (re-run shard {i})")
        dirs.append(d)
    seen: set[str] = set()
    dup = [n for n in p.theorems if n in seen or seen.add(n)]
    if dup:
        raise ShardError(f"{stage_dir}: theorem {dup[0]!r} is in two shards")
    return dirs


def finish_stage(stage_dir: Path, fp: str, merge: Callable[[], StageResult]) -> StageResult:
    """The stage's result: saved if it finished with ``fp`` from unchanged files, else ``merge()`` marked
    done (`run_stage`), with the files read by the plan, every shard and the merge."""
    saved = read_marker(stage_dir)
    if saved is not None and saved.fingerprint == fp and not stale_reads(saved):
        return saved.model_copy(update={"skipped": True})
    t0 = time.perf_counter()
    p = read_plan(stage_dir)
    with reads.recording() as rec:
        res = merge()
    gathered: dict[str, str] = dict(p.reads) if p is not None else {}
    for i in range(len(p.shards) if p is not None else 0):
        marker = read_marker(shard_dir(stage_dir, i))
        if marker is not None:
            gathered |= marker.reads
    return finish(stage_dir, fp, res, t0, {**gathered, **rec.reads})


def stage_done(stage_dir: Path) -> bool:
    return (stage_dir / DONE).is_file()
