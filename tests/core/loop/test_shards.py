"""Theorem shards of a stage (`burnqed_core.loop.shards`): a shard is whole or absent, a finished one is read
back (never recomputed), a failed one resumes in its partial directory, the merge refuses a plan the shards do
not cover, and merged search outputs hold each theorem once (real Parquet parts, no Lean)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from burnqed_core.loop import shards
from burnqed_core.records import StageResult, Theorem, TrajectoryRecord
from burnqed_core.search.engine import SearchOutcome
from burnqed_core.search.merge import MergeError, merge_search_outputs
from burnqed_core.search.trajectories import TrajectoryWriter
from burnqed_core.trajectory_io import SearchResult, finished_theorems, read_trajectories

THEOREMS = [Theorem(name=f"t{i}", statement=f": {i} = {i}") for i in range(7)]


def _outcome(name: str) -> SearchOutcome:
    rec = TrajectoryRecord(theorem=name, iteration=0, node_id=0, parent_id=-1, state=f"⊢ {name}", goal=f"⊢ {name}",
                           tactic="", depth=0, logprob=0.0, cum_logprob=0.0, label="positive", proved=True)
    return SearchOutcome(result=SearchResult(theorem=name, proved=True, stop="proved", nodes=1), records=[rec])


def _search(work: Path, theorems: list[Theorem], fail_after: int | None = None) -> StageResult:
    """A stand-in for the search: one flushed part per theorem in ``work/search.traj``, resuming saved ones."""
    out = work / "search.traj"
    saved = finished_theorems(out) if out.is_dir() else set()
    w = TrajectoryWriter(out, 1, already_saved=saved)
    for k, t in enumerate(x for x in theorems if x.name not in saved):
        if fail_after is not None and k == fail_after:
            raise RuntimeError("killed")
        w.add(_outcome(t.name))
    w.close()
    return StageResult(stage="shard", path=str(work), metrics={"searched": len(theorems) - len(saved)})


async def test_shards_are_whole_or_absent_and_finished_ones_are_read_back(tmp_path: Path) -> None:
    root = tmp_path / "trajectories"
    specs, saved = shards.plan("trajectories", 0, root, "fp1", THEOREMS, 3)
    assert saved is None and [s.names for s in specs] == [["t0", "t1", "t2"], ["t3", "t4", "t5"], ["t6"]]
    assert [s.key for s in specs] == ["shard_00000", "shard_00001", "shard_00002"]

    r0 = await shards.run_shard(specs[0], lambda w: _async(_search, w, specs[0].theorems))
    assert not r0.skipped and shards.shard_dir(root, 0).is_dir()
    with pytest.raises(RuntimeError, match="killed"):  # dies after saving one theorem
        await shards.run_shard(specs[1], lambda w: _async(_search, w, specs[1].theorems, 1))
    assert not shards.shard_dir(root, 1).exists() and shards.partial_dir(root, 1).is_dir()
    with pytest.raises(shards.ShardError, match=r"got shards \[0\], the plan has 3"):
        shards.gather(root, "fp1", [r0])
    assert [s.index for s in shards.missing(root, "fp1", [r0])] == [1, 2]

    again = await shards.run_shard(specs[0], lambda w: pytest.fail("a finished shard is recomputed"))
    assert again.skipped and again.metrics == r0.metrics
    r1 = await shards.run_shard(specs[1], lambda w: _async(_search, w, specs[1].theorems))
    assert r1.metrics["searched"] == 2  # resumed mid-shard: one theorem was saved
    r2 = await shards.run_shard(specs[2], lambda w: _async(_search, w, specs[2].theorems))
    dirs = shards.gather(root, "fp1", [r2, r0, r1])
    assert dirs == [shards.shard_dir(root, i) for i in range(3)]
    out = merge_search_outputs([d / "search.traj" for d in dirs], root / "search.traj")
    assert sorted(finished_theorems(out)) == [t.name for t in THEOREMS]
    assert len(read_trajectories(out)) == len(THEOREMS)
    res = shards.finish_stage(root, "fp1", lambda: StageResult(stage="trajectories", path=str(root)))
    assert not res.skipped and shards.finish_stage(root, "fp1", lambda: pytest.fail("merged twice")).skipped

    # the stage finished: every shard is read back even without its directory
    specs2, saved2 = shards.plan("trajectories", 0, root, "fp1", THEOREMS, 3)
    assert saved2 is not None and saved2.skipped
    assert (await shards.run_shard(specs2[2], lambda w: pytest.fail("recomputed"))).skipped
    # other inputs: the stage directory is cleared
    shards.plan("trajectories", 0, root, "fp2", THEOREMS, 3)
    assert not (root / "shards").exists() and not (root / "search.traj").exists()


async def test_a_theorem_in_two_shards_is_refused_by_the_merge(tmp_path: Path) -> None:
    a, b = tmp_path / "a.traj", tmp_path / "b.traj"
    _search(a.parent / "a", THEOREMS[:2])
    _search(b.parent / "b", THEOREMS[1:3])
    with pytest.raises(MergeError, match="saved twice"):
        merge_search_outputs([tmp_path / "a" / "search.traj", tmp_path / "b" / "search.traj"],
                                    tmp_path / "merged.traj")
    assert not (tmp_path / "merged.traj").exists()


def _same_shard_in_a_process(spec_json: str, hold_s: float) -> tuple[int, bool, int]:
    """Run one shard in this (spawned) process; the search holds the shard for ``hold_s`` first."""
    import asyncio
    import os
    import time

    spec = shards.ShardSpec.model_validate_json(spec_json)

    async def compute(work: Path) -> StageResult:
        time.sleep(hold_s)
        return _search(work, spec.theorems)

    res = asyncio.run(shards.run_shard(spec, compute))
    return os.getpid(), res.skipped, int(res.metrics.get("searched", -1))


def test_two_processes_running_one_shard_write_it_once(tmp_path: Path) -> None:
    """A shard step sent twice (a retry while the first worker still runs, a duplicate delivery): the second
    process waits for the shard's lock, then reads the finished shard back; each theorem is written once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    root = tmp_path / "trajectories"
    specs, _ = shards.plan("trajectories", 0, root, "fp1", THEOREMS, 4)
    spec = specs[0].model_dump_json()
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        runs = [f.result(timeout=120) for f in [pool.submit(_same_shard_in_a_process, spec, 2.0),
                                                pool.submit(_same_shard_in_a_process, spec, 2.0)]]
    assert len({pid for pid, _, _ in runs}) == 2
    assert sorted((skipped, searched) for _, skipped, searched in runs) == [(False, 4), (True, 4)]
    out = shards.shard_dir(root, 0) / "search.traj"
    assert sorted(finished_theorems(out)) == [t.name for t in THEOREMS[:4]]
    assert len(read_trajectories(out)) == 4


def test_split_sizes() -> None:
    assert [len(p) for p in shards.split(THEOREMS, 16)] == [7]
    assert shards.split([], 4) == [[]]
    with pytest.raises(ValueError):
        shards.split(THEOREMS, 0)


async def _async(fn: Callable[..., StageResult], *args: Any) -> StageResult:
    return fn(*args)
