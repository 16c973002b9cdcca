"""The core profile's loop (Lean's library as the search pool) through Dagster with the real embedded Lean and
real tiny models, on cheap settings: a held-out theorem (core:test, core:dev, or any theorem of an eval set) is
never searched, even when the search pool's file holds it, and iteration 1 searches new theorems beside the ones
iteration 0 failed on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from burnqed_core.data.theorems.core_pool import CORE_DIR, PoolTheorem, read_pool_rows
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.trajectory_io import read_results, read_trajectories
from burnqed_pipeline.commands.loop import parse_iterations, run_loop
from tests.pipeline.helpers import lend
from tests.pipeline.profiles import slice_set, write_profile

pytestmark = [pytest.mark.lean, pytest.mark.slow]


def _write(rows: list[PoolTheorem], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    return path


def _spread(rows: list[PoolTheorem], n: int) -> list[PoolTheorem]:
    """``n`` rows of distinct families (then any), by name: a fixed, varied slice."""
    out: list[PoolTheorem] = []
    seen: set[str] = set()
    for r in sorted(rows, key=lambda r: r.name):
        if r.family not in seen:
            out.append(r)
            seen.add(r.family)
        if len(out) == n:
            break
    return out


async def test_core_loop_never_searches_a_held_out_theorem(tmp_path: Path, lean_pool: object,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    pool = _spread(read_pool_rows(CORE_DIR / "pool.jsonl"), 6)
    test = _spread(read_pool_rows(CORE_DIR / "test.jsonl"), 4)
    dev = _spread(read_pool_rows(CORE_DIR / "dev.jsonl"), 2)
    bench = _write(test[:3], tmp_path / "core" / "test.jsonl")
    also = _write(dev, tmp_path / "core" / "dev.jsonl")
    # the search pool's file holds held-out theorems too: two test theorems and one dev theorem as they are
    # (held out by their split), and one test theorem of the eval set relabelled as a pool theorem (held out
    # only because the eval evaluates it)
    leak = test[0].model_copy(update={"split": "pool"})
    mixed = _write([*pool, test[1], test[3], dev[0], leak], tmp_path / "search" / "pool.jsonl")
    corpus = slice_set("bundled:corpus", 1, tmp_path / "corpus" / "corpus.jsonl")
    prof = write_profile(tmp_path / "profile.yaml", {
        "name": "core", "paths.work_dir": str(tmp_path / "work"), "data.corpus": str(corpus),
        "data.benchmark": str(bench), "eval.also": [str(also)], "data.search_pool": str(mixed),
        "data.search_theorems": 4, "data.search_retry_max": 2, "pipeline.shard_size": 4,
        "pipeline.eval_shard_size": 5})
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    rt = lend(lean_pool)  # the session's loop and Lean serve the run (the command would start its own)

    def loop(iterations: str) -> tuple[Exception | None, str]:
        lines: list[str] = []
        try:
            run_loop(str(prof), parse_iterations(iterations), runtime=rt, echo=lines.append)
        except Exception as e:
            return e, "\n".join(lines)
        return None, "\n".join(lines)

    err, out = await asyncio.to_thread(loop, "0,1")
    assert err is None, f"{out}\n{err!r}"

    layout = BaseLayout(root=tmp_path / "work")
    held = {t.name for t in test} | {t.name for t in dev}
    allowed = {t.name for t in pool}
    searched: list[set[str]] = []
    for n in (0, 1):
        recs = read_trajectories(layout.iteration(n).stage("trajectories") / "search.traj")
        names = {r.theorem for r in recs}
        assert names and not names & held, names & held
        assert names <= allowed
        searched.append(names)
    assert len(searched[0]) == 4  # search_theorems, all new
    results0 = read_results(layout.iteration(0).stage("trajectories") / "search.traj")
    failed0 = {r.theorem for r in results0 if not r.proved}
    again = searched[1] & searched[0]
    assert again <= failed0 and len(again) <= 2  # only failed ones come back, at most search_retry_max
    assert searched[1] - searched[0]  # and new ones
