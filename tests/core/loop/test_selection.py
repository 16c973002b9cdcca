"""Theorem selection for search: exclusions, counts, seeded sample."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from burnqed_core.data.theorems.sampling import allocate
from burnqed_core.loop.selection import family_fail_rates, select_theorems
from burnqed_core.records import Theorem


def thm(name: str, steps: int, split: str = "train") -> Theorem:
    return Theorem(name=name, statement=": True", proof=["skip"] * steps, split=split)  # type: ignore[arg-type]


def corpus() -> list[Theorem]:
    out = [thm(f"long_{i}", 2 + i % 4) for i in range(100)]
    out += [thm(f"short_{i}", 1) for i in range(30)]
    out += [thm(f"unknown_{i}", 0) for i in range(5)]
    out += [thm(f"bench_{i}", 3, split="benchmark") for i in range(10)]
    return out


def test_exclusions_and_counts() -> None:
    thms = corpus()
    searched = {f"long_{i}" for i in range(10)} | {"short_0"}
    held = {"long_50", "long_51"}
    easy = {"long_60", "short_1"}
    sel = select_theorems(thms, n=1000, seed=0, searched=searched, held_out=held, easy=easy)
    st = sel.stats
    assert st.total == len(thms)
    assert st.excluded_held_out == 10 + 2  # benchmark split + given names
    assert st.excluded_searched == 11  # counted before "short"
    assert st.excluded_easy == 2
    assert st.excluded_short == 28  # 30 short, two already counted as searched/easy
    assert st.unknown_length == 5
    names = {t.name for t in sel.theorems}
    assert st.eligible == st.selected == len(names) == 100 - 10 - 2 - 1 + 5
    assert not names & (searched | held | easy)
    assert not any(n.startswith(("short_", "bench_")) for n in names)


def test_pair_lengths_override_known_proofs() -> None:
    thms = [thm("a", 3), thm("b", 0), thm("c", 1)]
    sel = select_theorems(thms, n=10, seed=0, proof_lengths={"a": 1, "b": 4, "c": 2})
    assert {t.name for t in sel.theorems} == {"b", "c"}
    assert sel.stats.excluded_short == 1 and sel.stats.unknown_length == 0


def test_seeded_sample_independent_of_order() -> None:
    thms = corpus()
    a = select_theorems(thms, n=20, seed=42)
    shuffled = thms[:]
    random.Random(0).shuffle(shuffled)
    b = select_theorems(shuffled, n=20, seed=42)
    assert [t.name for t in a.theorems] == [t.name for t in b.theorems]
    assert a.stats.selected == 20 and len({t.name for t in a.theorems}) == 20
    c = select_theorems(thms, n=20, seed=43)
    assert [t.name for t in c.theorems] != [t.name for t in a.theorems]
    held_splits = select_theorems(thms, n=1000, seed=0, held_out_splits=())
    assert held_splits.stats.excluded_held_out == 0
    assert any(t.name.startswith("bench_") for t in held_splits.theorems)


def fam(name: str, family: str, steps: int = 3) -> Theorem:
    return Theorem(name=name, statement=": True", proof=["skip"] * steps, family=family)


def families_corpus() -> list[Theorem]:
    """Families a (40), b (40), c (20)."""
    return ([fam(f"a_{i:02d}", "a") for i in range(40)] + [fam(f"b_{i:02d}", "b") for i in range(40)]
            + [fam(f"c_{i:02d}", "c") for i in range(20)])


def test_allocate() -> None:
    q = allocate({"a": 40, "b": 40, "c": 20}, {"a": 40, "b": 40, "c": 20}, 10)
    assert q == {"a": 4, "b": 4, "c": 2}
    q = allocate({"a": 40, "b": 40, "c": 20}, {"a": 1, "b": 1, "c": 1}, 11)  # remainder: largest, ties by key
    assert q == {"a": 4, "b": 4, "c": 3}
    q = allocate({"a": 2, "b": 40}, {"a": 100, "b": 1}, 10)  # a capped at its size, the rest to b
    assert q == {"a": 2, "b": 8}
    assert allocate({"a": 3, "b": 2}, {"a": 1, "b": 1}, 50) == {"a": 3, "b": 2}  # all there is
    assert allocate({"a": 3, "b": 2}, {"a": 0, "b": 0}, 4) == {"a": 2, "b": 2}
    assert sum(allocate({"x": 7, "y": 5, "z": 9}, {"x": 0.3, "y": 2.0, "z": 1.1}, 13).values()) == 13


def test_family_fail_rates() -> None:
    families = {"a_00": "a", "a_01": "a", "a_02": "a", "a_03": "a", "b_00": "b"}
    rates = family_fail_rates({"a_00": True, "a_01": False, "a_02": False, "a_03": False, "b_00": True,
                               "x": False}, families)
    assert rates == {"": 1.0, "a": 0.75, "b": 0.0}


def test_first_iteration_is_stratified_by_family() -> None:
    sel = select_theorems(families_corpus(), n=20, seed=0, failed_family_boost=2.0)
    assert sel.stats.by_family == {"a": 8, "b": 8, "c": 4}  # no earlier search: proportional to size
    assert sel.stats.family_fail_rate == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert [t.name for t in sel.theorems] == sorted(t.name for t in sel.theorems)


def test_failed_families_get_more_of_the_selection() -> None:
    """Family a was solved by the earlier search, b half, c never: quotas follow size x (1 + boost x fail)."""
    thms = families_corpus()
    searched = {"a_00": True, "a_01": True, "b_00": True, "b_01": False, "c_00": False, "c_01": False}
    rates = family_fail_rates(searched, {t.name: t.family for t in thms})
    assert rates == {"a": 0.0, "b": 0.5, "c": 1.0}
    sel = select_theorems(thms, n=24, seed=1, searched=searched, family_fail_rate=rates, failed_family_boost=2.0)
    # eligible a 38, b 38, c 18; weights 38 x 1, 38 x 2, 18 x 3 = 38, 76, 54 of 168 -> 5.43, 10.86, 7.71 of 24
    assert sel.stats.by_family == {"a": 5, "b": 11, "c": 8}
    assert not {t.name for t in sel.theorems} & set(searched)
    assert sel.stats.family_fail_rate == {"a": 0.0, "b": 0.5, "c": 1.0}
    # boost 0: proportional to eligible size, whatever failed
    flat = select_theorems(thms, n=24, seed=1, searched=searched, family_fail_rate=rates)
    assert flat.stats.by_family == {"a": 10, "b": 10, "c": 4}
    # deterministic, and independent of input order
    shuffled = thms[:]
    random.Random(3).shuffle(shuffled)
    again = select_theorems(shuffled, n=24, seed=1, searched=searched, family_fail_rate=rates,
                            failed_family_boost=2.0)
    assert [t.name for t in again.theorems] == [t.name for t in sel.theorems]
    with pytest.raises(ValueError):
        select_theorems(thms, n=3, seed=0, failed_family_boost=-1)


def test_earlier_failures_are_searched_again_when_fresh_theorems_run_out() -> None:
    thms = [fam(f"a_{i}", "a") for i in range(6)] + [fam("short", "a", steps=1)]
    searched = {"a_0", "a_1", "a_2", "a_3", "short"}
    failed = ["a_1", "a_2", "a_3", "short"]  # a_0 was proved; short would be excluded anyway
    sel = select_theorems(thms, n=4, seed=0, searched=searched, retry=failed)
    names = {t.name for t in sel.theorems}
    assert {"a_4", "a_5"} <= names and len(names) == 4 and sel.stats.retried == 2
    assert names - {"a_4", "a_5"} <= {"a_1", "a_2", "a_3"}
    assert sel.stats.excluded_searched == 5 and sel.stats.excluded_short == 0  # counted before "short"
    none = select_theorems(thms, n=4, seed=0, searched=searched)
    assert {t.name for t in none.theorems} == {"a_4", "a_5"} and none.stats.retried == 0
    enough = select_theorems(thms, n=2, seed=0, searched=searched, retry=failed)
    assert enough.stats.retried == 0  # fresh theorems first


def test_search_selection_reads_the_earlier_searches(tmp_path: Path) -> None:
    """The loop's selection: families where iteration 0's search failed weigh more at iteration 1."""
    from burnqed_core.config import load_profile
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.loop.stages.trajectories import search_selection
    from burnqed_core.search.trajectories import TrajectoryWriter
    from tests.core.search.test_trajectories import outcome

    profile = load_profile("tiny", environ={}, overrides={"data.search_theorems": 30})
    first = search_selection(profile, 0, [])
    assert first.stats.selected == 30 and first.stats.retried == 0
    fams = {t.name: t.family for t in load_theorems(profile.data.corpus)}
    # iteration 0 proved every theorem of one family it searched, and nothing else
    solved_family = max(first.stats.by_family, key=lambda f: (first.stats.by_family[f], f))
    out = tmp_path / "search.traj"
    w = TrajectoryWriter(out, flush_every=100)
    for t in first.theorems:
        w.add(outcome(t.name, 2, fams[t.name] == solved_family))
    w.close()
    second = search_selection(profile, 1, [out])
    assert not {t.name for t in second.theorems} & {t.name for t in first.theorems}
    assert second.stats.family_fail_rate[solved_family] == 0.0
    assert all(r == 1.0 for f, r in second.stats.family_fail_rate.items() if f != solved_family)
    flat = search_selection(profile.model_copy(update={"data": profile.data.model_copy(
        update={"search_failed_family_boost": 0.0})}), 1, [out])
    assert second.stats.by_family.get(solved_family, 0) < flat.stats.by_family.get(solved_family, 0)


def test_preferred_theorems_are_drawn_first() -> None:
    """The withheld exercises (``prefer``) fill the selection before any other eligible theorem, stratified the
    same way; the others fill what is left; a preferred theorem that is not eligible is not chosen."""
    thms = families_corpus()
    prefer = {t.name for t in thms if t.name.endswith(("0", "5"))} | {"bench_x"}
    n_pref = sum(t.name in prefer for t in thms)
    sel = select_theorems(thms, n=n_pref - 2, seed=0, prefer=prefer, failed_family_boost=2.0)
    assert {t.name for t in sel.theorems} <= prefer and sel.stats.preferred == n_pref - 2
    more = select_theorems(thms, n=n_pref + 5, seed=0, prefer=prefer, failed_family_boost=2.0)
    names = {t.name for t in more.theorems}
    assert len(names) == n_pref + 5 and {t.name for t in thms if t.name in prefer} <= names
    assert more.stats.preferred == n_pref
    assert select_theorems(thms, n=10, seed=0).stats.preferred == 0
    # at most prefer_max of them (data.search_exercises): the same ones as a draw of that many, then the others
    few = select_theorems(thms, n=n_pref - 2, seed=0, prefer=prefer, failed_family_boost=2.0, prefer_max=3)
    capped = select_theorems(thms, n=3, seed=0, prefer=prefer, failed_family_boost=2.0)
    assert few.stats.preferred == 3 and len(few.theorems) == n_pref - 2
    assert {t.name for t in few.theorems if t.name in prefer} == {t.name for t in capped.theorems}
    assert select_theorems(thms, n=5, seed=0, prefer=prefer, prefer_max=0).stats.preferred == 0


def test_failed_exercises_come_back_first_every_iteration() -> None:
    """A preferred theorem (an exercise) that a search failed is drawn first again at the next iteration, even
    while never-searched theorems remain; a proved exercise is not, and failures of other theorems still wait
    for the fresh ones to run out."""
    thms = [fam(f"ex_{i}", "ex") for i in range(4)] + [fam(f"b_{i}", "b") for i in range(20)]
    prefer = {f"ex_{i}" for i in range(4)}
    searched = prefer | {"b_0", "b_1"}
    failed = ["ex_1", "ex_2", "b_0"]  # ex_0, ex_3 and b_1 were proved
    sel = select_theorems(thms, n=5, seed=0, searched=searched, retry=failed, prefer=prefer)
    names = {t.name for t in sel.theorems}
    assert {"ex_1", "ex_2"} <= names and not names & {"ex_0", "ex_3", "b_0", "b_1"}
    assert sel.stats.retried == 2 and sel.stats.preferred == 2
    # without retry (data.search_retry_failed off) nothing searched comes back
    plain = select_theorems(thms, n=5, seed=0, searched=searched, prefer=prefer)
    assert not {t.name for t in plain.theorems} & searched


def test_stratified_sample_is_spread_fixed_and_order_free() -> None:
    from burnqed_core.data.theorems.sampling import stratified_sample

    pool = [Theorem(name=f"{fam}_{i}", statement=f": {i} = {i}", family=fam)
            for fam, k in (("a", 12), ("b", 6), ("c", 2)) for i in range(k)]
    got = stratified_sample(pool, 10)
    assert len(got) == 10 and len({t.name for t in got}) == 10
    assert Counter(t.family for t in got) == {"a": 6, "b": 3, "c": 1}  # proportional to 12 : 6 : 2
    assert got == stratified_sample(list(reversed(pool)), 10) == sorted(got, key=lambda t: t.name)
    assert stratified_sample(pool, 10, seed=1) != got
    assert [t.name for t in stratified_sample(pool, 99)] == sorted(t.name for t in pool)


def test_a_curriculum_takes_each_familys_smallest_first_and_moves_on() -> None:
    """Issue 65: with a curriculum each family's quota takes its first eligible theorems in curriculum order
    (not a seeded draw), automation-closed and searched ones left out, so the next iteration takes the next."""
    from burnqed_core.data.theorems.core_pool import PoolTheorem, curriculum_rank

    rows = [PoolTheorem(name=f"{fam}.t{i}", module=f"Init.Data.{fam}.Lemmas", split="pool", cluster=fam,
                        type="x" * (10 - i), size=10 + (i * 7) % 13, twin="k")
            for fam in ("A", "B") for i in range(10)]
    rank = curriculum_rank(rows)
    theorems = [r.theorem() for r in rows]
    order = {fam: [r.name for r in sorted((r for r in rows if r.name.startswith(fam)),
                                          key=lambda r: (r.size, len(r.type), r.name))] for fam in ("A", "B")}
    easy = {order["A"][0]}
    first = select_theorems(theorems, 6, seed=0, easy=easy, curriculum=rank, min_length=0)
    assert {t.name for t in first.theorems} == set(order["A"][1:4] + order["B"][:3])
    assert select_theorems(theorems, 6, seed=5, easy=easy, curriculum=rank, min_length=0).theorems == first.theorems
    then = select_theorems(theorems, 6, seed=1, easy=easy, curriculum=rank, min_length=0,
                           searched={t.name for t in first.theorems})
    assert {t.name for t in then.theorems} == set(order["A"][4:7] + order["B"][3:6])
    # without it, a seeded draw
    drawn = [select_theorems(theorems, 6, seed=s, min_length=0).theorems for s in range(4)]
    assert len({tuple(t.name for t in d) for d in drawn}) > 1
