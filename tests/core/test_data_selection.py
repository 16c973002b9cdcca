"""Theorem selection for search: exclusions, counts, seeded sample."""

from __future__ import annotations

import random

from burnqed_core.data.selection import select_theorems
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
