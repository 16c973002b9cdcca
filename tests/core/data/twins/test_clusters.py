"""Clusters of theorems: instances of one generated template together, other templates apart, twins merged,
the result independent of the input order. No Lean."""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.generate_sets import SOURCE
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.data.twins.clusters import GENERATED_SOURCE, cluster_members, cluster_of, clusters
from burnqed_core.records import Theorem


def gen(name: str, family: str, statement: str = "(n : Nat) : n = n", proof: tuple[str, ...] = ("rfl",)) -> Theorem:
    return Theorem(name=name, statement=statement, split="benchmark", source=GENERATED_SOURCE, family=family,
                   proof=list(proof))


def test_the_rule_reads_the_generators_names() -> None:
    assert GENERATED_SOURCE == SOURCE
    assert cluster_of(gen("barith_s0_3", "barith")) == "barith_s0_*"
    assert cluster_of(gen("barith_s1_10", "barith")) == "barith_s1_*"
    assert cluster_of(gen("wlst_len_sum_3", "wlst")) == "wlst_len_sum_*"
    assert cluster_of(gen("two_even_0_5_4", "two")) == "two_even_*"
    assert cluster_of(gen("wit_3_5", "wit")) == "wit_*"  # a key of numbers only: the family is the template
    # digits glued to a word are the shape; a name without a numeric tail is its own cluster
    assert cluster_of(gen("blogic_s0", "blogic")) == "blogic_s0"
    assert cluster_of(gen("suit_turn4", "suit")) == "suit_turn4"
    assert cluster_of(gen("fork_swap_swap", "fork")) == "fork_swap_swap"
    # the family prefix is never stripped, even when it ends in numbers
    assert cluster_of(gen("lst_2_s0_1", "lst_2")) == "lst_2_s0_*"
    # not generated: its own cluster, numbers or not
    assert cluster_of(Theorem(name="mathlib_lemma_3", statement="(n : Nat) : n = n")) == "mathlib_lemma_3"


def test_instances_of_one_template_share_a_cluster_and_templates_do_not() -> None:
    bench = load_theorems("bundled:benchmark")
    c = clusters(bench, twins=False)
    assert {c[f"wlst_len_sum_{i}"] for i in range(8)} == {"wlst_len_sum_*"}
    assert len({c[n] for n in ("barith_s1_1", "barith_s1_10", "barith_s1_4", "barith_s1_7")}) == 1
    assert len({c[n] for n in ("barith_s0_0", "barith_s1_1", "barith_s2_2")}) == 3
    assert c["weave_weave_length"] != c["weave_weave_sum"] and c["blogic_s0"] != c["blogic_s1"]
    with_twins = clusters(bench)
    assert with_twins["wlst_len_sum_0"] == "wlst_len_sum_*"
    assert with_twins["barith_s0_0"] != with_twins["barith_s1_1"]
    assert len(set(with_twins.values())) <= len(set(c.values())) < len(bench)


def test_twins_are_merged() -> None:
    a = Theorem(name="add_comm_a", statement="(a b : Nat) : a + b = b + a", proof=["omega"])
    b = Theorem(name="zz_renamed", statement="(x y : Nat) : x + y = y + x", proof=["omega"])
    other = Theorem(name="mul_comm_a", statement="(a b : Nat) : a * b = b * a", proof=["omega"])
    c = clusters([a, b, other])
    assert c == {"add_comm_a": "add_comm_a", "zz_renamed": "add_comm_a", "mul_comm_a": "mul_comm_a"}
    assert clusters([a, b, other], twins=False)["zz_renamed"] == "zz_renamed"
    # a twin of a template instance joins the whole template, under the smallest name
    t1 = gen("fam_s0_1", "fam", "(n : Nat) : n + 1 = 1 + n")
    t2 = gen("fam_s0_2", "fam", "(n : Nat) : n * 2 = 2 * n")
    twin = Theorem(name="a_copy", statement="(m : Nat) : m + 7 = 7 + m")
    c = clusters([t1, t2, twin])
    assert c == {"a_copy": "a_copy", "fam_s0_1": "a_copy", "fam_s0_2": "a_copy"}
    assert cluster_members(c) == {"a_copy": ["a_copy", "fam_s0_1", "fam_s0_2"]}


def test_clusters_are_deterministic() -> None:
    bench = load_theorems("bundled:benchmark")
    first = clusters(bench)
    shuffled = list(bench)
    random.Random(3).shuffle(shuffled)
    assert clusters(shuffled) == first == clusters(bench)
    assert list(first) == sorted(first)


def test_a_cluster_fixed_by_the_set_wins() -> None:
    a = Theorem(name="List.map_append", statement=": True", cluster="Init.Data.List.Lemmas", source="lean-library")
    b = Theorem(name="List.append_nil", statement=": False", cluster="Init.Data.List.Lemmas", source="lean-library")
    assert cluster_of(a) == "Init.Data.List.Lemmas"
    assert clusters([a, b], twins=False) == {a.name: "Init.Data.List.Lemmas", b.name: "Init.Data.List.Lemmas"}
