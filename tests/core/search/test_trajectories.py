"""Trajectory output on real Parquet files: parts, atomic flush, resume
bookkeeping, run record, statistics; the runner's resume and SIGTERM logic
on the toy engine environment of test_search_engine (the real-process kill
and resume tests are in test_search_faults.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from burnqed_core.config import SearchConfig
from burnqed_core.errors import BurnqedError, RecordFileError
from burnqed_core.records import TrajectoryRecord
from burnqed_core.search.engine import Sampling, SearchEngine, SearchOutcome
from burnqed_core.search.job import run_search
from burnqed_core.search.trajectories import (
    OutputExistsError,
    ResumeMismatchError,
    RunRecord,
    TrajectoryWriter,
    format_stats,
    model_identity,
    read_run_record,
    timeout_note,
    trajectory_stats,
    write_part,
)
from burnqed_core.trajectory_io import (
    SearchResult,
    finished_theorems,
    list_parts,
    read_results,
    read_trajectories,
    read_trajectory_table,
)
from tests.core.search.test_engine import ToyEnv, ToyPolicy, thm


def outcome(name: str, nodes: int, proved: bool) -> SearchOutcome:
    recs = [
        TrajectoryRecord(theorem=name, iteration=0, node_id=i, parent_id=i - 1, state=f"⊢ {nodes - i}",
                         goal=f"⊢ {nodes}", tactic="" if i == 0 else "dec", depth=i, logprob=-0.5 * (i > 0),
                         cum_logprob=-0.5 * i, label="positive" if proved else "unknown", proved=proved)
        for i in range(nodes)
    ]
    res = SearchResult(theorem=name, proved=proved, stop="proved" if proved else "max_nodes", nodes=nodes,
                       expansions=max(nodes - 1, 0), time_s=1.5, policy_s=1.0, lean_s=0.4, engine_s=0.01,
                       candidates_min=2, candidates_avg=3.0, candidates_max=4)
    return SearchOutcome(res, recs)


def test_writer_flushes_parts_every_k_and_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "traj.parquet"
    w = TrajectoryWriter(out, flush_every=2)
    assert w.add(outcome("a", 3, True)) is None
    assert w.add(outcome("b", 2, False)) is not None  # second theorem: a part is written
    assert len(list_parts(out)) == 1
    w.add(outcome("c", 1, False))
    assert len(list_parts(out)) == 1 and len(w.buffer) == 1
    w.close()
    assert [p.name for p in list_parts(out)] == ["part-00000.parquet", "part-00001.parquet"]
    assert finished_theorems(out) == {"a", "b", "c"}
    recs = read_trajectories(out)
    assert [(r.theorem, r.node_id) for r in recs] == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("c", 0)]
    # plain pyarrow reads the directory as a dataset (the run record starts with "_")
    (out / "_run.json").write_text("{}")
    assert pq.read_table(out).num_rows == 6
    assert [r.theorem for r in read_results(out)] == ["a", "b", "c"]


def test_stats(tmp_path: Path) -> None:
    out = tmp_path / "traj.parquet"
    w = TrajectoryWriter(out, flush_every=10)
    for name, n, p in [("a", 3, True), ("b", 5, False), ("c", 2, True)]:
        w.add(outcome(name, n, p))
    start_err = SearchResult(theorem="d", proved=False, stop="start_error", error="start")
    w.add(SearchOutcome(start_err, []))
    w.close()
    s = trajectory_stats(out)
    assert (s.theorems, s.proved, s.start_errors, s.nodes, s.rows) == (4, 2, 1, 10, 10)
    assert (s.positive, s.unknown) == (5, 5)
    assert s.candidates_min == 2 and s.candidates_max == 4 and s.candidates_avg == pytest.approx(3.0)
    assert s.time_s == pytest.approx(4.5) and s.expansions == 7
    text = format_stats(s)
    assert "proved        2 (50.0%)" in text and "min 2  avg 3.00  max 4" in text and "1 start" in text
    assert s.timeouts == 0 and "timeouts" not in text and timeout_note(s) == ""
    # a search the time cap stopped is counted and named: its outcome is the machine's, not the budget's
    capped = tmp_path / "capped.parquet"
    w = TrajectoryWriter(capped, flush_every=10)
    w.add(outcome("a", 3, True))
    slow = outcome("b", 4, False)
    w.add(SearchOutcome(slow.result.model_copy(update={"stop": "timeout"}), slow.records))
    w.close()
    sc = trajectory_stats(capped)
    assert (sc.theorems, sc.proved, sc.timeouts) == (2, 1, 1)
    assert ("timeouts      1 search stopped at the time cap (search.timeout_s), not the node budget: "
            "machine-dependent") in format_stats(sc)
    # a single plain Parquet file of records: row-based figures only
    single = tmp_path / "one.parquet"
    pq.write_table(read_trajectory_table(out), single)
    s1 = trajectory_stats(single)
    assert (s1.theorems, s1.proved, s1.nodes, s1.candidates_avg) == (3, 2, 10, None)


def test_never_writes_a_theorem_twice(tmp_path: Path) -> None:
    out = tmp_path / "t"
    w = TrajectoryWriter(out, flush_every=5, already_saved={"x"})
    with pytest.raises(BurnqedError, match="twice"):
        w.add(outcome("x", 1, False))
    w.add(outcome("y", 1, False))
    with pytest.raises(BurnqedError, match="twice"):
        w.add(outcome("y", 1, False))
    w.close()
    # a duplicate on disk (hand-copied part) is an error, not silently merged
    write_part(out, 7, [outcome("y", 2, True)])
    with pytest.raises(RecordFileError, match="saved twice"):
        finished_theorems(out)


def test_half_written_part_is_ignored(tmp_path: Path) -> None:
    out = tmp_path / "t"
    w = TrajectoryWriter(out, flush_every=1)
    w.add(outcome("a", 2, True))
    # what a SIGKILL during pq.write_table leaves: a hidden, truncated temporary
    good = list_parts(out)[0].read_bytes()
    (out / ".part-00001.parquet.tmp-999").write_bytes(good[: len(good) // 2])
    assert finished_theorems(out) == {"a"} and len(read_trajectories(out)) == 2
    # a new writer continues the numbering
    w2 = TrajectoryWriter(out, flush_every=1, already_saved={"a"})
    assert w2.add(outcome("b", 1, False)).name == "part-00001.parquet"


def test_corrupt_part_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "t"
    out.mkdir()
    (out / "part-00000.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(RecordFileError, match=r"part-00000\.parquet"):
        finished_theorems(out)
    with pytest.raises(RecordFileError):
        read_trajectory_table(tmp_path / "missing")


def _record(**kw: object) -> RunRecord:
    base: dict[str, object] = dict(
        model=model_identity(None), prompt_version="v1", sampling=Sampling(temperature=0.8, num_candidates=4),
        budgets={"max_nodes": 10, "max_depth": 5, "timeout_s": 30.0}, theorems_sha256="abc", theorems_total=5)
    base.update(kw)
    return RunRecord(**base)


def test_model_identity_and_run_record_mismatch(tmp_path: Path) -> None:
    m = tmp_path / "model"
    m.mkdir()
    (m / "config.json").write_text(json.dumps({"hidden_size": 8}))
    (m / "model.safetensors").write_bytes(b"\0" * 100)
    ident = model_identity(m)
    assert ident.config_sha256 and ident.weights == [("model.safetensors", 100)]
    (m / "config.json").write_text(json.dumps({"hidden_size": 16}))
    assert model_identity(m).config_sha256 != ident.config_sha256
    a = _record(model=ident)
    assert a.mismatches(_record(model=ident)) == []
    diffs = a.mismatches(_record(model=ident, sampling=Sampling(temperature=1.2, num_candidates=4)))
    assert len(diffs) == 1 and diffs[0].startswith("sampling")


def toy_engine(concurrency: int = 2, delay: float = 0.0) -> SearchEngine:
    config = SearchConfig(max_nodes=30, max_depth=10, frontier_batch=4, concurrency=concurrency, timeout_s=30)
    return SearchEngine(ToyPolicy({"dec": -0.2, "half": -0.1}, delay=delay), ToyEnv(), config)


async def test_runner_resume_skips_saved_theorems(tmp_path: Path) -> None:
    out = tmp_path / "traj.parquet"
    theorems = [thm(k) for k in range(1, 9)]
    rep = await run_search(toy_engine(), theorems[:5], out, _record(), flush_every=2, progress=False)
    assert (rep.searched, rep.proved, rep.interrupted) == (5, 5, False)
    with pytest.raises(OutputExistsError):
        await run_search(toy_engine(), theorems, out, _record(), progress=False)
    with pytest.raises(ResumeMismatchError, match="sampling"):
        await run_search(toy_engine(), theorems, out,
                         _record(sampling=Sampling(temperature=1.0, num_candidates=4)), resume=True, progress=False)
    engine = toy_engine()
    rep2 = await run_search(engine, theorems, out, _record(), resume=True, flush_every=2, progress=False)
    assert (rep2.skipped, rep2.searched) == (5, 3)
    assert engine.stats.theorems == 3  # the saved ones were not searched again
    names = [r.theorem for r in read_results(out)]
    assert sorted(names) == sorted(t.name for t in theorems) and len(names) == len(set(names))
    rec = read_run_record(out)
    assert rec is not None and [s.status for s in rec.sessions] == ["complete", "complete"]
    assert rec.sessions[1].resumed and rec.sessions[1].theorems_at_start == 5
    assert rec.sessions[0].theorems_written == 5 and rec.sessions[1].theorems_written == 3
    st = trajectory_stats(out)
    assert (st.theorems, st.proved, st.sessions) == (8, 8, 2) and st.wall_s is not None and st.wall_s >= 0


async def test_runner_sigterm_flushes_and_closes(tmp_path: Path) -> None:
    out = tmp_path / "traj.parquet"
    theorems = [thm(k) for k in range(2, 40)]
    engine = toy_engine(concurrency=1, delay=0.01)
    loop = asyncio.get_running_loop()
    loop.call_later(0.4, os.kill, os.getpid(), signal.SIGTERM)
    rep = await run_search(engine, theorems, out, _record(), flush_every=1000, progress=False)
    assert rep.interrupted and rep.signal == "SIGTERM"
    assert 0 < rep.searched < len(theorems)
    # flush_every was never reached: everything finished was flushed on the signal
    assert len(finished_theorems(out)) == rep.searched
    rec = read_run_record(out)
    assert rec is not None and rec.sessions[-1].status == "interrupted" and rec.sessions[-1].ended
    assert not loop.remove_signal_handler(signal.SIGTERM)  # the runner removed its handler
