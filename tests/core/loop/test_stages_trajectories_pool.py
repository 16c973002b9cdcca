"""The trajectories stage's selection on a search pool (``data.search_pool``: Lean's own library, issue 56):
new theorems each iteration, up to ``data.search_retry_max`` that earlier searches failed on, and never a
theorem of an eval set or of a held-out split (real Parquet trajectory parts, no Lean)."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.loop.stages.trajectories import Settings, search_selection


def _searched(out: Path, verdicts: dict[str, bool]) -> Path:
    """A trajectory output with one search per theorem (real Parquet parts), proved or not."""
    from burnqed_core.records import TrajectoryRecord
    from burnqed_core.search.engine import SearchOutcome
    from burnqed_core.search.trajectories import TrajectoryWriter
    from burnqed_core.trajectory_io import SearchResult

    w = TrajectoryWriter(out, 1)
    for name, proved in verdicts.items():
        rec = TrajectoryRecord(theorem=name, iteration=0, node_id=0, parent_id=-1, state="⊢ p", goal="⊢ p", tactic="",
                               depth=0, logprob=0.0, cum_logprob=0.0, proved=proved)
        w.add(SearchOutcome(result=SearchResult(theorem=name, proved=proved, stop="proved" if proved else
                                                "max_nodes", nodes=1), records=[rec]))
    w.close()
    return out


def test_pool_selection_searches_new_and_failed_never_held_out(tmp_path: Path) -> None:
    from burnqed_core.data.theorems.core_pool import PoolTheorem

    def row(name: str, split: str, family: str) -> PoolTheorem:
        return PoolTheorem(name=name, module=f"Init.Data.{family}.Lemmas", split=split, cluster="c",  # type: ignore[arg-type]
                           type="True")

    pool = [row(f"P.{f}{i}", "pool", f) for f in "AB" for i in range(6)]
    test = [row(f"T.t{i}", "test", "C") for i in range(3)]
    dev = [row(f"D.d{i}", "dev", "D") for i in range(2)]
    leak = row("T.t0", "pool", "C")  # an eval theorem in the pool's file, relabelled: held out by name
    mixed = tmp_path / "pool.jsonl"
    mixed.write_text("".join(r.model_dump_json() + "\n" for r in [*pool, *test[1:], dev[0], leak]))
    bench, also = tmp_path / "t" / "test.jsonl", tmp_path / "d" / "dev.jsonl"
    for rows, path in ((test, bench), (dev, also)):
        path.parent.mkdir()
        path.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    prof = load_profile("core", environ={}, overrides={
        "data.search_pool": str(mixed), "data.benchmark": str(bench), "eval.also": [str(also)],
        "data.search_theorems": 4, "data.search_retry_max": 2})
    held = {r.name for r in test + dev}
    first = search_selection(Settings.of(prof), 0, [])
    names0 = {t.name for t in first.theorems}
    assert len(names0) == 4 and not names0 & held and all(t.module for t in first.theorems)
    # iteration 1: up to search_retry_max of those that failed come back (drawn first), the rest are new
    failed = sorted(names0)[:3]
    traj = _searched(tmp_path / "it0" / "search.traj", {n: n not in failed for n in names0})
    second = search_selection(Settings.of(prof), 1, [traj])
    names1 = {t.name for t in second.theorems}
    assert len(names1) == 4 and not names1 & held
    assert len(names1 & set(failed)) == 2 and not names1 & (names0 - set(failed))
