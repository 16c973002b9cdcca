"""The sets an eval reports: data.benchmark, then eval.also (sampled when asked), names unique across sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.errors import DataError
from burnqed_core.eval.steps import eval_set_specs, set_out, set_slug
from burnqed_core.loop.inputs import eval_theorems
from burnqed_core.record_io import write_jsonl
from burnqed_core.records import Theorem


def _set(path: Path, names: list[str], family: str = "f") -> str:
    write_jsonl([Theorem(name=n, statement=f": {i} + 0 = {i}", family=family) for i, n in enumerate(names)], path)
    return str(path)


def test_eval_sets_in_order_sampled_and_placed(tmp_path: Path) -> None:
    main = _set(tmp_path / "main.jsonl", ["m1", "m2", "m3"])
    other = _set(tmp_path / "other.jsonl", [f"o{i}" for i in range(10)])
    prof = load_profile("tiny", environ={}, overrides={"data.benchmark": main, "eval.also": [other, main]})
    assert eval_set_specs(prof) == [main, other]  # the repeat dropped
    sets = eval_theorems(prof)
    assert list(sets) == [main, other] and [len(v) for v in sets.values()] == [3, 10]
    prof = prof.model_copy(update={"eval": prof.eval.model_copy(update={"also_sample": 4})})
    sampled = eval_theorems(prof)
    assert len(sampled[main]) == 3 and len(sampled[other]) == 4  # only eval.also is sampled
    assert sampled == eval_theorems(prof)
    out = tmp_path / "eval"
    assert set_out(out, prof, main) == out and set_out(out, prof, other) == out / "sets" / set_slug(other)
    assert set_slug("bundled:handwritten") == "bundled_handwritten"


def test_a_theorem_in_two_eval_sets_is_an_error(tmp_path: Path) -> None:
    main = _set(tmp_path / "main.jsonl", ["m1", "shared"])
    other = _set(tmp_path / "other.jsonl", ["shared", "o1"])
    prof = load_profile("tiny", environ={}, overrides={"data.benchmark": main, "eval.also": [other]})
    with pytest.raises(DataError, match=r"'shared' is in two eval sets"):
        eval_theorems(prof)


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
    from burnqed_core.data.core_pool import PoolTheorem
    from burnqed_core.loop.inputs import search_selection

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
    first = search_selection(prof, 0, [])
    names0 = {t.name for t in first.theorems}
    assert len(names0) == 4 and not names0 & held and all(t.module for t in first.theorems)
    # iteration 1: up to search_retry_max of those that failed come back (drawn first), the rest are new
    failed = sorted(names0)[:3]
    traj = _searched(tmp_path / "it0" / "search.traj", {n: n not in failed for n in names0})
    second = search_selection(prof, 1, [traj])
    names1 = {t.name for t in second.theorems}
    assert len(names1) == 4 and not names1 & held
    assert len(names1 & set(failed)) == 2 and not names1 & (names0 - set(failed))
