"""The eval rows' clusters: computed over the whole eval (a shard sees its twins in other shards), and
``results.parquet`` files written before the ``cluster`` column still read back. No Lean."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.data.twins.clusters import clusters
from burnqed_core.eval.run import RESULTS_FILE, eval_clusters, read_eval_results
from burnqed_core.eval.summary import SummaryOptions, summarize
from burnqed_core.record_io import read_parquet, write_parquet
from burnqed_core.records import EvalResult, Theorem, arrow_schema


def result(theorem: str, cluster: str = "") -> EvalResult:
    return EvalResult(iteration=0, benchmark="bench", theorem=theorem, budget=8, proved=True, nodes_to_proof=3,
                      nodes_used=3, time_s=0.5, proof=["omega"], cluster=cluster)


def test_cluster_is_a_string_column_of_the_schema(tmp_path: Path) -> None:
    schema = arrow_schema(EvalResult)
    assert schema.field("cluster").type == pa.string() and not schema.field("cluster").nullable
    rows = [result("a", "tmpl_*"), result("b")]
    write_parquet(rows, tmp_path / RESULTS_FILE, EvalResult)
    assert read_eval_results(tmp_path) == rows


def test_results_written_before_the_cluster_column_read_back(tmp_path: Path) -> None:
    rows = [result("a", "x"), result("b", "y")]
    table = pa.Table.from_pylist([r.model_dump(exclude={"cluster"}) for r in rows],
                                 schema=arrow_schema(EvalResult).remove(arrow_schema(EvalResult)
                                                                        .get_field_index("cluster")))
    assert "cluster" not in table.column_names
    pq.write_table(table, tmp_path / RESULTS_FILE)
    back = read_parquet(tmp_path / RESULTS_FILE, EvalResult)
    assert [r.cluster for r in back] == ["", ""] and [r.theorem for r in back] == ["a", "b"]
    s = summarize(back, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert s.clusters == 2 and [o.cluster for o in s.outcomes] == ["a", "b"]  # one cluster per theorem


def test_a_shard_gets_the_clusters_of_the_whole_benchmark() -> None:
    bench = load_theorems("bundled:benchmark")
    whole = clusters(bench)
    shard = [t for t in bench if t.name in ("weave_weave_sum", "two_odd_1_1_2", "barith_s0_3", "wlst_len_sum_2")]
    got = eval_clusters(shard, "bundled:benchmark")
    assert got == {t.name: whole[t.name] for t in shard}
    assert got["wlst_len_sum_2"] == "wlst_len_sum_*"
    # their twins are in other shards: alone, the shard would not know
    assert got["weave_weave_sum"] == "weave_weave_length" and got["two_odd_1_1_2"] == "two_even_*"
    assert clusters(shard)["weave_weave_sum"] == "weave_weave_sum"
    # theorems that are not the profile's benchmark: clustered among themselves
    own = [Theorem(name="p", statement="(a b : Nat) : a + b = b + a"),
           Theorem(name="q", statement="(x y : Nat) : x + y = y + x")]
    assert eval_clusters(own, "bundled:benchmark") == {"p": "p", "q": "p"}
    assert eval_clusters(own, "/nonexistent/set.jsonl") == {"p": "p", "q": "p"}
    assert eval_clusters(own) == {"p": "p", "q": "p"}
