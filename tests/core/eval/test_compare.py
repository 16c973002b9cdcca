"""`burnqed compare` with intervals: paired cluster-bootstrap changes between consecutive evals and the
go/no-go on the primary statistic (pass@1 by cluster; better only when its interval lies above zero), nothing
decided with fewer than 10 clusters, the point rule where no interval can be had, the text, markdown and plot.
Pure functions: no Lean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from burnqed_core.eval.baselines.records import Baselines, StructuralBaseline
from burnqed_core.eval.compare import (
    MIN_CLUSTERS,
    compare_dirs,
    compare_summaries,
    format_compare,
    format_compare_markdown,
    interval_verdict,
    write_compare_plot,
)
from burnqed_core.eval.gonogo import BEST_BASELINE_FIGURE, go_no_go
from burnqed_core.eval.report import write_report
from burnqed_core.eval.summary import (
    EvalSummary,
    SummaryOptions,
    joint_clusters,
    paired_deltas,
    primary_delta_name,
    summarize,
)
from burnqed_core.records import EvalResult

PP = re.compile(r"[+-]\d+\.\d pp \[[+-]\d+\.\d, [+-]\d+\.\d\]")


def crow(theorem: str, cluster: str, solved: bool, iteration: int, nodes: int = 4) -> EvalResult:
    return EvalResult(iteration=iteration, benchmark="bench", theorem=theorem, budget=32, proved=solved,
                      nodes_to_proof=nodes if solved else None, nodes_used=nodes if solved else 32, time_s=1.0,
                      proof=["simp"] if solved else [], cluster=cluster)


def bench(solved: set[str], iteration: int, clusters: int = 30, size: int = 2, extra: int = 0) -> EvalSummary:
    """``clusters`` clusters ``c00``... of ``size`` theorems each (and ``extra`` more clusters of one); a
    cluster's theorems are solved when its name is in ``solved``."""
    rows = [crow(f"c{c:02d}_{i}", f"c{c:02d}", f"c{c:02d}" in solved, iteration)
            for c in range(clusters) for i in range(size)]
    rows += [crow(f"x{c:02d}", f"x{c:02d}", f"x{c:02d}" in solved, iteration) for c in range(extra)]
    return summarize(rows, None, SummaryOptions(iteration=iteration, benchmark="bench", budgets=[2, 8, 32]))


def names(prefix: str, n: int) -> set[str]:
    return {f"{prefix}{c:02d}" for c in range(n)}


def test_a_clear_improvement_is_better() -> None:
    before, after = bench(names("c", 10), 0), bench(names("c", 25), 1)
    v, cv = interval_verdict(after, before)
    assert v.go and [r.code for r in v.reasons] == ["improved"] and cv.passed
    paired = paired_deltas(before, after)
    assert paired is not None and paired.theorems == 60 and paired.clusters == 30
    top = next(d for d in paired.deltas if d.name == "pass@k, budget 32")
    assert top.before == pytest.approx(1 / 3) and top.after == pytest.approx(5 / 6)
    assert top.change.value == pytest.approx(0.5) and 0 < top.change.low <= 0.5 <= top.change.high
    by_cluster = next(d for d in paired.deltas if d.name == "pass@k by cluster, budget 32")
    assert by_cluster.by_cluster and by_cluster.change.value == pytest.approx(0.5)
    assert next(f for f in cv.figures if f.name == "best lower bound").value > 0
    assert "paired cluster bootstrap over 60 theorems" in cv.markdown()
    # the primary statistic alone decides: pass@1 by cluster at the largest budget
    deciding = [d.name for d in paired.deltas if d.decides]
    assert deciding == [primary_delta_name(32)]  # no hard split here (no baselines)
    assert not next(d for d in paired.deltas if d.name == "pass@1 (mean per attempt), budget 32").decides


def test_one_more_cluster_is_noise_not_an_improvement() -> None:
    before, after = bench(names("c", 10), 0), bench(names("c", 11), 1)
    assert go_no_go(after, before).go  # the point rule calls +3.3pp better
    v, cv = interval_verdict(after, before)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["no_improvement"] and not cv.passed
    assert "95% interval above zero" in v.summary() and PP.search(v.summary())


def test_a_memorised_template_counts_as_one_cluster() -> None:
    """8 instances of one template newly solved (+28.6pp of the theorems) are one cluster of 21: no go."""
    def rows(template: bool, iteration: int) -> list[EvalResult]:
        return ([crow(f"tmpl_{i}", "tmpl_*", template, iteration) for i in range(8)]
                + [crow(f"t{c:02d}", f"t{c:02d}", c < 10, iteration) for c in range(20)])

    before = summarize(rows(False, 0), None, SummaryOptions(iteration=0, benchmark="bench", budgets=[32]))
    after = summarize(rows(True, 1), None, SummaryOptions(iteration=1, benchmark="bench", budgets=[32]))
    assert after.cumulative.rate - before.cumulative.rate == pytest.approx(8 / 28)
    assert after.cumulative_by_cluster is not None and before.cumulative_by_cluster is not None
    assert after.cumulative_by_cluster.value - before.cumulative_by_cluster.value == pytest.approx(1 / 21)
    assert go_no_go(after, before).go
    v, _ = interval_verdict(after, before)
    assert not v.go and "no_improvement" in {r.code for r in v.reasons}


def test_a_clear_drop_is_a_regression() -> None:
    before, after = bench(names("c", 25), 0), bench(names("c", 5), 1)
    v, cv = interval_verdict(after, before, regression_pp=2.0)
    assert not v.go and "regression" in {r.code for r in v.reasons}
    assert "the whole 95% interval below -2.0pp" in v.summary()
    assert any(f.failed and f.name == f"upper bound of {primary_delta_name(32)}" for f in cv.figures)
    # a drop whose interval reaches above -regression_pp is no regression (but no improvement either)
    v, _ = interval_verdict(bench(names("c", 9), 1), bench(names("c", 10), 0))
    assert {r.code for r in v.reasons if r.blocking} == {"no_improvement"}


def test_too_few_clusters_decide_nothing_and_the_point_rule_decides_where_no_interval_can_be_had() -> None:
    small_before, small_after = bench(names("c", 1), 0, clusters=4), bench(names("c", 2), 1, clusters=4)
    v, cv = interval_verdict(small_after, small_before)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["too_few_clusters"] and not cv.passed
    assert f"4 clusters in both evals (fewer than {MIN_CLUSTERS}): the set decides nothing" in v.summary()
    point = go_no_go(small_after, small_before)  # the point rule says so too
    assert not point.go and [r.code for r in point.reasons if r.blocking] == ["too_few_clusters"]
    old_before = bench(names("c", 10), 0).model_copy(update={"outcomes": []})  # a summary.json from before
    after = bench(names("c", 11), 1)
    v, cv = interval_verdict(after, old_before)
    assert v.go and any("no per-theorem outcomes" in n for n in cv.notes)
    assert paired_deltas(old_before, after) is None
    first, cv = interval_verdict(after, None)
    assert first.go and first.reasons[0].code == "first_iteration"


def test_only_theorems_in_both_evals_are_paired_and_clusterings_are_joined() -> None:
    before = bench(names("c", 10), 0, extra=5)  # x00..x04 only before
    after = bench(names("c", 10) | names("c", 20), 1)
    paired = paired_deltas(before, after)
    assert paired is not None and paired.theorems == 60 and paired.clusters == 30
    assert joint_clusters(["a", "b", "c", "d"], {"a": "1", "b": "1", "c": "c", "d": "d"},
                          {"a": "a", "b": "b", "c": "2", "d": "2"}) == ["a", "a", "c", "c"]
    assert paired_deltas(before, after, seed=5) == paired_deltas(before, after, seed=5)


def test_compare_shows_each_change_with_its_interval(tmp_path: Path) -> None:
    s0, s1, s2 = bench(names("c", 10), 0), bench(names("c", 25), 1), bench(names("c", 24), 2)
    dirs = [tmp_path / f"iter_{i}" for i in range(3)]
    for s, d in zip((s0, s1, s2), dirs, strict=True):
        write_report(s, d, plot=False)
    c = compare_dirs(dirs)
    assert c == compare_summaries([s0, s1, s2], [str(d) for d in dirs])  # deterministic
    assert [ch.paired is not None for ch in c.changes] == [True, True]
    text = format_compare(c)
    assert re.search(r"pass@k, budget 32 .*\+50\.0 pp \[\+\d+\.\d, \+\d+\.\d\]", text)
    assert "by cluster, 32" in text and "hard split, 32" in text and "theorems / clusters" in text
    assert len(PP.findall(text)) >= 8 and "go/no-go (decided on pass@1 by cluster): NO-GO (iteration 2)" in text
    assert "paired cluster bootstrap over 60 theorems in both evals (30 clusters" in text
    md = format_compare_markdown(c)
    assert "| statistic | before | after | change [95% interval] |" in md and PP.search(md)
    png = write_compare_plot(c, tmp_path / "cmp.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_the_verdict_says_whether_the_prover_beats_the_best_baseline() -> None:
    """Informational: a prover not above the best of (a), (b), (c) is still a go when it improved."""
    names_ = [f"c{c:02d}_{i}" for c in range(30) for i in range(2)]
    b = Baselines(single=dict.fromkeys(names_), defaware={n: "simp" if n < "c05" else None for n in names_},
                  structural=StructuralBaseline(key="k", budget=32, nodes={n: 3 if n < "c20" else None
                                                                           for n in names_}))

    def at(solved: int, iteration: int) -> EvalSummary:
        return summarize([crow(n, n[:3], n < f"c{solved:02d}", iteration) for n in names_], b,
                         SummaryOptions(iteration=iteration, benchmark="bench", budgets=[8, 32]))

    v, cv = interval_verdict(at(20, 1), at(5, 0))
    assert v.go and [r.code for r in v.reasons] == ["improved", "best_baseline"]
    assert "does not beat the best baseline (c)" in v.summary()
    fig = next(f for f in cv.figures if f.name == BEST_BASELINE_FIGURE)
    assert not fig.blocking and not fig.ok and cv.passed and fig.value is not None and fig.value <= 0
    v, cv = interval_verdict(at(30, 2), at(20, 1))
    assert v.go and "all theorems: beats the best baseline (c)" in v.summary()
    assert next(f for f in cv.figures if f.name == BEST_BASELINE_FIGURE).ok
    text = format_compare(compare_summaries([at(20, 1), at(30, 2)], ["one", "two"]))
    assert "baseline (c) | vs best baseline [95%]" in text and "(c) +33.3 pp [" in text


def test_baseline_c_at_pass_k_is_read_at_equal_compute() -> None:
    """The prover at pass@3 against (c) searched three times: its pass@k against (c)'s pass@k, its pass@1 (the
    primary statistic) against (c)'s mean over its three attempts; never three searches against one."""
    names_ = [f"c{c:02d}_{i}" for c in range(20) for i in range(2)]
    # (c) proves c00..c09 in every attempt and c10..c14 in one attempt of three
    per = {n: [3, 3, 3] if n < "c10" else [None, 3, None] if n < "c15" else [None, None, None] for n in names_}
    c = StructuralBaseline(key="k", budget=32, attempts=3, per_attempt=per,
                           nodes={n: min((x for x in v if x is not None), default=None) for n, v in per.items()})
    b = Baselines(single=dict.fromkeys(names_), defaware=dict.fromkeys(names_), structural=c)
    rows = [EvalResult(iteration=0, benchmark="bench", theorem=n, budget=32, attempt=a, proved=ok,
                       nodes_to_proof=3 if ok else None, nodes_used=3 if ok else 32, time_s=1.0,
                       proof=["simp"] if ok else [], cluster=n[:3])
            for n in names_ for a in range(3) for ok in [(n < "c15" and a == 0) or n < "c10"]]
    s = summarize(rows, b, SummaryOptions(iteration=0, benchmark="bench", budgets=[32]))
    assert s.pass_k == 3 and s.structural_baseline is not None and s.structural_baseline.solved == 30
    assert s.structural_pass1 is not None and s.structural_pass1.value == pytest.approx((20 + 10 / 3) / 40)
    best = s.best_baseline
    assert best is not None and best.name == "c"
    assert best.versus is not None and best.versus.change.value == pytest.approx(0.0)  # 30 = 30 at pass@3
    assert best.versus_primary is not None and best.versus_primary.change.value == pytest.approx(0.0)
    assert best.versus_primary.name.startswith("prover vs baseline (c)") and "pass@1 by cluster" in \
        best.versus_primary.name
