"""Eval aggregation over real rows: budgets read off one search, pass@k, both
baselines, solved beyond automation, the EBM ablation, reports, the plot,
`burnqed compare` and the go/no-go verdict. Pure functions: no Lean."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.errors import DataError
from burnqed_core.eval.baselines.records import Baselines, StructuralBaseline
from burnqed_core.eval.compare import compare_dirs, format_compare
from burnqed_core.eval.gonogo import go_no_go
from burnqed_core.eval.report import (
    PLOT_FILE,
    format_comparison,
    format_markdown,
    format_table,
    read_summary,
    write_report,
)
from burnqed_core.eval.summary import (
    EvalSummary,
    SummaryOptions,
    ebm_change,
    ebm_change_line,
    summarize,
    summarize_variants,
)
from burnqed_core.records import EvalResult

# easy1: single tactic; easy2: only the definition-aware baseline; hard1/hard2: neither
BASE = Baselines(single={"easy1": "omega", "easy2": None, "hard1": None, "hard2": None},
                 defaware={"easy1": "simp", "easy2": "induction n <;> simp_all [f]", "hard1": None, "hard2": None})


def row(theorem: str, nodes_to_proof: int | None, attempt: int = 0, ebm: str = "", iteration: int = 0,
        error: str = "", timeout: bool = False, sources: tuple[str, ...] = ("policy",)) -> EvalResult:
    proved = nodes_to_proof is not None
    return EvalResult(iteration=iteration, benchmark="bench", theorem=theorem, budget=32, attempt=attempt,
                      proved=proved, nodes_to_proof=nodes_to_proof, nodes_used=nodes_to_proof or 32, time_s=1.0,
                      proof=["simp"] * len(sources) if proved else [],
                      proof_sources=list(sources) if proved else [], error=error, timeout=timeout, ebm=ebm,
                      hard=BASE.hard(theorem))


def results() -> list[EvalResult]:
    return [row("easy1", 2), row("easy2", 12), row("hard1", 20), row("hard2", None, error="infra")]


def test_budgets_are_read_off_one_search_and_the_curve_is_monotone() -> None:
    s = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[1, 8, 16, 32]))
    assert [b.all.solved for b in s.budgets] == [0, 1, 2, 3]
    rates = [b.all.rate for b in s.budgets]
    assert rates == sorted(rates)
    b16 = s.budgets[2]
    assert (b16.hard.solved, b16.hard.total, b16.easy.solved, b16.easy.total) == (0, 2, 2, 2)
    assert s.budgets[-1].avg_nodes_proved == (2 + 12 + 20) / 3
    assert s.cumulative.solved == 3 and s.cumulative_hard.solved == 1 and s.infra_errors == 1


def test_pass_at_k_counts_a_theorem_once() -> None:
    rows = [row("easy1", 3, attempt=0), row("easy1", 5, attempt=1), row("easy1", 4, attempt=2),
            row("hard1", None, attempt=0), row("hard1", 7, attempt=1), row("hard1", None, attempt=2)]
    s = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[4, 8]))
    assert s.pass_k == 3
    b4, b8 = s.budgets
    assert (b4.all.solved, b4.all.total) == (1, 2)  # easy1 solved by two attempts within 4 nodes: once
    assert (b8.all.solved, b8.all.total) == (2, 2)
    assert b8.pass1 == pytest.approx((2 / 2 + 1 / 2 + 1 / 2) / 3)
    assert b4.pass1 == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)


def test_both_baselines_and_solved_beyond_automation() -> None:
    s = summarize(results(), BASE,
                  SummaryOptions(iteration=1, benchmark="bench", budgets=[8, 32], earlier_solved={"easy1"}))
    assert str(s.automation_baseline) == "1/4 (25.0%)"
    assert str(s.defaware_baseline) == "2/4 (50.0%)"
    assert s.either_baseline.solved == 2 and s.hard_theorems == 2
    assert s.beyond_automation == ["hard1"] and s.beyond_count == 1
    assert s.newly_solved == ["easy2", "hard1"]
    table = format_table(s)
    assert "baseline (a) single tactic" in table and "1/4 (25.0%)" in table
    assert "baseline (b) definition-aware" in table and "2/4 (50.0%)" in table
    assert "solved beyond automation (a proof step only the policy proposed): 1 (hard1)" in table
    md = format_markdown(s)
    assert "solved beyond automation (a proof step only the policy proposed): **1**: `hard1`" in md and "pass@1" in md


def test_beyond_automation_needs_a_policy_step() -> None:
    """A hard theorem counts beyond automation only through a proof with a
    step only the policy proposed at its node ('policy'); one whose policy
    steps the automation also proposed ('both') is counted apart, as is one
    proved by automation candidates alone (or with no recorded origins), also
    when another attempt failed; any attempt with a policy step is enough."""
    rows = [row("easy1", 2, sources=("automation",)),
            row("hard1", 5, sources=("automation", "automation")),
            row("hard2", 6, sources=("automation", "both"))]
    s = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert s.beyond_automation == [] and s.beyond_by_both == ["hard2"] and s.automation_only == ["hard1"]
    table = format_table(s)
    assert "solved beyond automation (a proof step only the policy proposed): 0" in table
    assert "hard, with policy steps the automation also proposed ('both'), not beyond it: 1 (hard2)" in table
    assert "hard but by automation steps alone: 1 (hard1)" in table
    assert "automation steps alone: 1: `hard1`" in format_markdown(s)
    mixed = summarize([row("hard2", 6, sources=("both", "policy"))], BASE,
                      SummaryOptions(iteration=0, benchmark="bench",
                      budgets=[8]))
    assert mixed.beyond_automation == ["hard2"] and mixed.beyond_by_both == []
    unknown = summarize([row("hard1", 5, sources=())], BASE,
                        SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert unknown.beyond_automation == [] and unknown.automation_only == ["hard1"]
    two = summarize([row("hard1", 5, sources=("automation",)), row("hard1", 7, attempt=1)], BASE,
                    SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert two.beyond_automation == ["hard1"] and two.automation_only == []
    late = summarize([row("hard1", 5, sources=("automation",)), row("hard1", 30, attempt=1)], BASE,
                     SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert late.beyond_automation == [] and late.automation_only == ["hard1"]


def test_timeouts_are_counted_and_reported() -> None:
    rows = [*results()[:3], row("hard2", None, timeout=True)]
    s = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[32]))
    assert s.timeouts == 1
    assert "1 timeouts (per-theorem cap)" in format_table(s)


def test_ebm_ablation_rows_give_a_summary_with_and_without() -> None:
    rows = [*results(), row("easy1", 1, ebm="ebm_dir"), row("easy2", 30, ebm="ebm_dir"),
            row("hard1", 5, ebm="ebm_dir"), row("hard2", 9, ebm="ebm_dir")]
    s = summarize_variants(rows, BASE, SummaryOptions(iteration=1, benchmark="bench", budgets=[8, 32]))
    assert s.ebm == "ebm_dir" and s.without_ebm is not None and s.without_ebm.ebm == ""
    assert s.rate_at(8) == 0.5 and s.without_ebm.rate_at(8) == 0.25 and s.rate_at(32) == 1.0
    assert s.beyond_automation == ["hard1", "hard2"]
    assert "EBM ablation (without -> with)" in format_table(s)
    # with its paired intervals (the same theorems and seeds with and without), deterministic by seed
    ch = ebm_change(s)
    assert ch is not None and ch.theorems == 4 and ch == ebm_change(s)
    at8 = next(d for d in ch.deltas if d.name == "pass@k, budget 8")
    assert (at8.before, at8.after) == (0.25, 0.5) and at8.change.value == pytest.approx(0.25)
    assert at8.change.low <= 0.25 <= at8.change.high
    line = ebm_change_line(s)
    assert line is not None and line.startswith("EBM ablation at 32 nodes (without -> with, same seeds, 4 theorems")
    assert "pass@k, budget 32:" in line and "by cluster" in line and "budget 8" not in line
    assert line in format_table(s) and line in format_markdown(s)
    assert ebm_change(s.without_ebm) is None and ebm_change_line(s.without_ebm) is None
    with pytest.raises(ValueError, match="several EBM"):
        summarize(rows, BASE, SummaryOptions(iteration=1, benchmark="bench"))


def twelve(solved: dict[str, int | None], iteration: int, ebm: str = "") -> list[EvalResult]:
    """Twelve theorems in twelve clusters (enough to decide): ``solved`` gives nodes to proof per theorem."""
    return [row(n, solved.get(n), iteration=iteration, ebm=ebm) for n in WIDE]


WIDE = [f"t{i:02d}" for i in range(12)]
WIDE_BASE = Baselines(single={n: "omega" if n < "t02" else None for n in WIDE},
                      defaware={n: "simp" if n < "t04" else None for n in WIDE})


def test_go_no_go_verdicts() -> None:
    """The point rule, on the primary statistic (pass@1 by cluster): better, the same, a regression; fewer than
    ten clusters decide nothing; an EBM gaining nothing over its ablation is a no-go."""
    def at(solved: list[str], iteration: int) -> EvalSummary:
        return summarize(twelve(dict.fromkeys(solved, 3), iteration), WIDE_BASE, SummaryOptions(iteration=iteration,
                         benchmark="bench", budgets=[8, 32]))

    base = at(WIDE[:6], 0)
    first = go_no_go(base, None)
    assert first.go and first.reasons[0].code == "first_iteration"
    v = go_no_go(at(WIDE[:6], 1), base)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["no_improvement"]
    assert go_no_go(at(WIDE[:7], 1), base).go
    worse = at(WIDE[:3], 1)
    v = go_no_go(worse, base, regression_pp=2.0)
    assert not v.go and "regression" in {r.code for r in v.reasons}
    assert "pass@1 by cluster: -25.0pp" in v.summary()
    small = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))  # four clusters
    better = summarize([*results()[:3], row("hard2", 6)], BASE,
                       SummaryOptions(iteration=1, benchmark="bench", budgets=[8, 32]))
    v = go_no_go(better, small)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["too_few_clusters"]
    # an EBM that gains nothing over its own ablation is a no-go
    flat = summarize_variants(results() + [r.model_copy(update={"ebm": "e"}) for r in results()], BASE,
                              SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    v = go_no_go(flat, None)
    assert not v.go and [r.code for r in v.reasons if r.blocking] == ["ebm_no_gain"]
    ebm_line = next(r for r in v.reasons if r.code == "ebm_change")  # the ablation's interval, shown
    assert not ebm_line.blocking and "+0.0 pp" in ebm_line.message


def test_reports_plot_compare_and_errors_naming_files(tmp_path: Path) -> None:
    s0 = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    s1 = summarize([row("easy1", 2, iteration=1), row("easy2", 4, iteration=1), row("hard1", None, iteration=1),
                    row("hard2", 9, iteration=1)], BASE,
                   SummaryOptions(iteration=1, benchmark="bench", budgets=[8, 32]))
    d0, d1 = tmp_path / "iter_0", tmp_path / "iter_1"
    write_report(s0, d0)
    write_report(s1, d1)
    assert read_summary(d0) == s0
    png = (d0 / PLOT_FILE).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    table = format_comparison([s0, s1])
    assert "Δ 0→1" in table and "+25.0pp" in table

    c = compare_dirs([d0, d1])
    assert c.changes[0].newly_solved == ["hard2"] and c.changes[0].newly_lost == ["hard1"]
    text = format_compare(c)
    assert "pass@k, budget 8" in text and "hard split, 32" in text and "newly lost 1 (hard1)" in text
    assert "NO-GO (iteration 1): 4 clusters in both evals (fewer than 10): the set decides nothing" in text

    res = CliRunner().invoke(app, ["compare", str(d0), str(d1), "--plot", str(tmp_path / "cmp.png")])
    assert res.exit_code == 0, res.output
    assert "newly solved 1 (hard2)" in res.output and (tmp_path / "cmp.png").stat().st_size > 5000

    (d1 / "summary.json").write_text(json.dumps({"iteration": "one"}))
    with pytest.raises(DataError, match=str(d1 / "summary.json")):
        read_summary(d1)
    with pytest.raises(DataError, match=str(tmp_path / "nope" / "summary.json")):
        compare_dirs([d0, tmp_path / "nope"])


# -- clusters and intervals --------------------------------------------------------------------------------


def crow(theorem: str, cluster: str, nodes_to_proof: int | None, attempt: int = 0, iteration: int = 0,
         hard: bool | None = None) -> EvalResult:
    proved = nodes_to_proof is not None
    return EvalResult(iteration=iteration, benchmark="bench", theorem=theorem, budget=32, attempt=attempt,
                      seed=attempt, proved=proved, nodes_to_proof=nodes_to_proof, nodes_used=nodes_to_proof or 32,
                      time_s=1.0, proof=["simp"] if proved else [], hard=hard, cluster=cluster)


def template_rows() -> list[EvalResult]:
    """One template of 8 instances, all solved; 2 single-theorem clusters, unsolved."""
    return ([crow(f"tmpl_{i}", "tmpl_*", 4) for i in range(8)]
            + [crow("alone_a", "alone_a", None), crow("alone_b", "alone_b", None)])


def test_each_cluster_weighs_one() -> None:
    s = summarize(template_rows(), None, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    assert s.theorems == 10 and s.clusters == 3
    assert s.cumulative.rate == 0.8 and s.cumulative_ci is not None and s.cumulative_ci.value == 0.8
    assert s.cumulative_by_cluster is not None and s.cumulative_by_cluster.value == pytest.approx(1 / 3)
    assert s.budgets[0].all_by_cluster is not None and s.budgets[0].all_by_cluster.value == pytest.approx(1 / 3)
    assert [o.cluster for o in s.outcomes][:2] == ["alone_a", "alone_b"]
    assert "80.0% [" in format_table(s) and "of 10 theorems; by cluster 33.3% [" in format_table(s)
    assert "of 3 clusters" in format_markdown(s)


def test_the_cluster_bootstrap_is_deterministic_by_seed_and_holds_the_estimate() -> None:
    rows = [crow(f"t{c}_{i}", f"c{c}", 3 if (c * 7 + i) % 3 else None, hard=c % 2 == 0)
            for c in range(12) for i in range(c % 3 + 1)]
    a = summarize(rows, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[2, 8], bootstrap_seed=1))
    b = summarize(rows, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[2, 8], bootstrap_seed=1))
    assert a == b and a.bootstrap_samples == 2000 and a.bootstrap_seed == 1
    others = [summarize(rows, None,
                        SummaryOptions(iteration=0, benchmark="bench", budgets=[8], bootstrap_seed=seed)).cumulative_ci
              for seed in (2, 3, 4)]
    assert any(o != a.cumulative_ci for o in others)  # another seed may give another interval
    for e in (a.cumulative_ci, a.cumulative_by_cluster, a.per_attempt, a.per_attempt_by_cluster):
        assert e is not None and e.low <= e.value <= e.high and e.width > 0
    for bs in a.budgets:
        for e in (bs.all_ci, bs.all_by_cluster, bs.pass1_ci, bs.pass1_by_cluster):
            assert e is not None and e.low <= e.value <= e.high
    # the hard split: rows' hard flags are ignored, the baselines decide; none here
    assert a.hard_ci is None and a.hard_clusters == 0
    fewer = summarize(rows, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[8], bootstrap_samples=0))
    assert fewer.cumulative_ci is None and fewer.bootstrap_samples == 0 and fewer.clusters == 12


def test_one_cluster_gives_a_zero_width_interval() -> None:
    rows = [crow(f"tmpl_{i}", "tmpl_*", 4 if i % 2 else None) for i in range(6)]
    s = summarize(rows, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert s.clusters == 1
    for e in (s.cumulative_ci, s.cumulative_by_cluster, s.per_attempt):
        assert e is not None and e.low == e.value == e.high == 0.5


def test_hard_split_is_bootstrapped_over_the_hard_theorems_clusters() -> None:
    rows = [row("easy1", 2), row("easy2", 12), row("hard1", 20), row("hard2", None)]
    rows = [r.model_copy(update={"cluster": "h" if r.theorem.startswith("hard") else r.theorem}) for r in rows]
    s = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    assert s.hard_clusters == 1 and s.clusters == 3
    assert s.hard_ci is not None and s.hard_ci.value == 0.5 and s.hard_ci.width == 0  # one hard cluster
    assert s.hard_by_cluster is not None and s.hard_by_cluster.value == 0.5
    assert ("hard split: 50.0% [50.0, 50.0] of 2 theorems; by cluster 50.0% [50.0, 50.0] of 1 clusters"
            in format_table(s))


def test_rows_without_a_cluster_are_one_cluster_per_theorem() -> None:
    s = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    assert s.clusters == 4 and [o.cluster for o in s.outcomes] == ["easy1", "easy2", "hard1", "hard2"]
    assert s.cumulative_by_cluster is not None and s.cumulative_by_cluster.value == s.cumulative.rate


def test_pass_at_k_and_the_mean_per_attempt_rate_with_intervals() -> None:
    rows = [crow(f"t{c}", f"t{c}", 5 if (c + a) % 3 == 0 else None, attempt=a) for c in range(9) for a in range(3)]
    s = summarize(rows, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert s.pass_k == 3 and s.cumulative.rate == 1.0  # every theorem proved by one of its three attempts
    assert s.per_attempt is not None and s.per_attempt.value == pytest.approx(s.budgets[-1].pass1) == \
        pytest.approx(1 / 3)
    assert s.outcomes[0].nodes == [5, None, None] and s.outcomes[1].nodes == [None, None, 5]
    assert "mean per attempt (pass@1 over 3 attempts): 33.3% [" in format_table(s)


def test_old_summaries_without_clusters_still_load(tmp_path: Path) -> None:
    s = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    write_report(s, tmp_path, plot=False)
    data = json.loads((tmp_path / "summary.json").read_text())
    new = {"clusters", "hard_clusters", "cumulative_ci", "cumulative_by_cluster", "hard_ci", "hard_by_cluster",
           "per_attempt", "per_attempt_by_cluster", "bootstrap_samples", "bootstrap_seed", "confidence", "outcomes"}
    assert new <= data.keys()
    old = {k: v for k, v in data.items() if k not in new}
    old["budgets"] = [{k: v for k, v in b.items() if not k.endswith(("_ci", "_by_cluster"))} for b in old["budgets"]]
    (tmp_path / "summary.json").write_text(json.dumps(old))
    back = read_summary(tmp_path)
    assert back.cumulative == s.cumulative and back.clusters == 0 and back.outcomes == []
    assert back.cumulative_ci is None and back.budgets[0].all_ci is None
    assert "of 4 theorems" in format_table(back) and "by cluster" not in format_markdown(back).split("|")[0]


# -- baseline (c) and the best baseline ----------------------------------------------------------------------


def c_bench(prover: int = 25, structural: int = 15, c_budget: int = 32, iteration: int = 0,
            budgets: tuple[int, ...] = (2, 8, 32)) -> EvalSummary:
    """30 clusters c00..c29 of 2 theorems. (a) closes c00-c04, (b) c00-c09 (so c10-c29 are hard); (c) proves
    c00..c<structural - 1> at 2 nodes and c<structural> at 20 nodes; the prover solves c00..c<prover - 1>."""
    def cl(n: str) -> int:
        return int(n[1:3])

    names = [f"c{c:02d}_{i}" for c in range(30) for i in range(2)]
    nodes = {n: (2 if cl(n) < structural else 20 if cl(n) == structural else None) for n in names}
    b = Baselines(single={n: "omega" if cl(n) < 5 else None for n in names},
                  defaware={n: "simp [f]" if cl(n) < 10 else None for n in names},
                  structural=StructuralBaseline(key="k", budget=c_budget, nodes=nodes))
    rows = [crow(n, n[:3], 4 if cl(n) < prover else None, iteration=iteration) for n in names]
    return summarize(rows, b, SummaryOptions(iteration=iteration, benchmark="bench", budgets=list(budgets)))


def test_baseline_c_rates_per_budget_and_on_the_hard_split() -> None:
    s = c_bench()
    assert str(s.structural_baseline) == "32/60 (53.3%)" and s.structural_budget == 32
    assert [str(b.structural) for b in s.budgets] == ["30/60 (50.0%)", "30/60 (50.0%)", "32/60 (53.3%)"]
    assert s.hard_theorems == 40 and str(s.structural_hard) == "12/40 (30.0%)"
    assert s.structural_ci is not None and s.structural_ci.value == pytest.approx(32 / 60)
    assert s.structural_ci.low < s.structural_ci.value < s.structural_ci.high
    assert s.structural_by_cluster is not None and s.structural_by_cluster.value == pytest.approx(16 / 30)
    assert s.structural_hard_ci is not None and s.structural_hard_ci.value == pytest.approx(0.3)
    # measured at a smaller budget than the eval's largest: read at its own budget, no figure beyond it
    short = c_bench(c_budget=8)
    assert [b.structural is not None for b in short.budgets] == [True, True, False]
    assert str(short.structural_baseline) == "30/60 (50.0%)"


def test_the_best_baseline_and_the_prover_against_it() -> None:
    s = c_bench()
    best, hard = s.best_baseline, s.best_baseline_hard
    assert best is not None and best.name == "c" and str(best.rate) == "32/60 (53.3%)"
    assert best.versus is not None and best.versus_by_cluster is not None
    assert best.versus.before == pytest.approx(32 / 60) and best.versus.after == pytest.approx(50 / 60)
    assert best.versus.change.value == pytest.approx(0.3) and best.versus_by_cluster.change.value == pytest.approx(0.3)
    assert 0 < best.versus.change.low <= 0.3 <= best.versus.change.high and best.beaten
    assert not best.versus.decides
    assert hard is not None and hard.name == "c" and str(hard.rate) == "12/40 (30.0%)"
    assert hard.versus is not None and hard.versus.change.value == pytest.approx(18 / 40) and hard.beaten
    # (c) weaker than (b): (b) is the best on all theorems, (c) still the best on the hard split
    weak = c_bench(structural=3)
    assert weak.best_baseline is not None and weak.best_baseline.name == "b"
    assert weak.best_baseline.versus is not None and weak.best_baseline.versus.change.value == pytest.approx(30 / 60)
    assert weak.best_baseline_hard is not None and weak.best_baseline_hard.name == "c"
    # a tie goes to the later baseline; the prover equal to it does not beat it
    tie = c_bench(structural=9, prover=10)  # (c): c00-c08 at 2 nodes, c09 at 20: 20/60 like (b)
    assert tie.best_baseline is not None and tie.best_baseline.name == "c"
    assert tie.best_baseline.versus is not None and tie.best_baseline.versus.change.value == 0
    assert tie.best_baseline.beaten is False
    # without (c): the better of (a) and (b), and no hard-split comparison
    rows = [crow(n, n, 4) for n in ("easy1", "easy2", "hard1", "hard2")]
    plain = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert plain.structural_baseline is None and plain.best_baseline_hard is None
    assert plain.best_baseline is not None and plain.best_baseline.name == "b"
    assert summarize(rows, None, SummaryOptions(iteration=0, benchmark="bench", budgets=[8])).best_baseline is None
    assert summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8],
                     bootstrap_samples=0)).best_baseline.versus is None  # type: ignore[union-attr]


def test_the_prover_against_baseline_c_also_when_c_is_not_the_best() -> None:
    weak = c_bench(structural=3)  # (b) is the best; (c) proves c00-c02 at 2 nodes and c03 at 20
    vs = weak.versus_structural
    assert vs is not None and vs.name == "c" and str(vs.rate) == "8/60 (13.3%)"
    assert vs.versus is not None and vs.versus.change.value == pytest.approx((50 - 8) / 60)
    assert vs.versus_by_cluster is not None and vs.versus_by_cluster.change.value == pytest.approx((25 - 4) / 30)
    assert vs.beaten
    # the prover solving only what (c) proves: no change, not beaten
    even = c_bench(structural=10, prover=11)
    assert even.versus_structural is not None and even.versus_structural.versus is not None
    assert even.versus_structural.versus.change.value == 0 and even.versus_structural.beaten is False
    # no (c) measured: no comparison
    rows = [crow(n, n, 4) for n in ("easy1", "hard1")]
    assert summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8])).versus_structural is None


def test_reports_and_the_verdict_show_baseline_c_and_the_best_baseline(tmp_path: Path) -> None:
    s = c_bench()
    table = format_table(s)
    assert "baseline (c) structural steps + automation, no learned policy (32 nodes): 32/60 (53.3%) [" in table
    assert "per budget 2: 50.0%, 8: 50.0%, 32: 53.3%; hard split 12/40 (30.0%)" in table
    assert re.search(r"best baseline \(all theorems\): \(c\) structural search, no learned policy 32/60 \(53\.3%\), "
                     r"pass@1 53\.3%; prover vs it, pass@1 by cluster: \+30\.0 pp \[\+\d+\.\d, \+\d+\.\d\]; at pass@k "
                     r"\+30\.0 pp \[\+\d+\.\d, \+\d+\.\d\], by cluster \+30\.0 pp .* \(beats it", table)
    assert "best baseline (hard split): (c) structural search, no learned policy 12/40 (30.0%)" in table
    md = format_markdown(s)
    assert "| avg nodes to proof | baseline (c) |" in md and "| 30/60 (50.0%) |" in md
    assert "- best baseline (all theorems): (c)" in md
    assert "(c) +30.0 pp [" in format_comparison([s])
    flat = c_bench(structural=24, prover=25)  # (c) proves c00-c24 too: no gain over it
    assert "does not beat it: interval reaches zero" in format_table(flat)
    v = go_no_go(s, None)
    reason = next(r for r in v.reasons if r.code == "best_baseline")
    assert not reason.blocking and v.go
    assert "all theorems: beats the best baseline (c) structural search, no learned policy on pass@1 by cluster, " \
        "83.3% vs 53.3%" in reason.message and "hard split: beats" in reason.message
    assert "does not beat the best baseline (c)" in next(r.message for r in go_no_go(flat, None).reasons
                                                           if r.code == "best_baseline")
    low = c_bench(structural=24, prover=5)  # (c) proves 19 clusters more: the interval lies below zero
    assert "(below it: interval below zero)" in format_table(low)
    assert "all theorems: is below the best baseline (c)" in next(r.message for r in go_no_go(low, None).reasons
                                                                  if r.code == "best_baseline")
    write_report(s, tmp_path)  # the plot draws (c) too
    assert (tmp_path / PLOT_FILE).stat().st_size > 5000 and read_summary(tmp_path) == s


def test_old_summaries_without_baseline_c_still_load(tmp_path: Path) -> None:
    s = c_bench()
    write_report(s, tmp_path, plot=False)
    data = json.loads((tmp_path / "summary.json").read_text())
    new = {k for k in data if k.startswith(("structural", "best_baseline", "versus_structural", "similarity",
                                            "unseen", "beyond_by_both", "start_failures"))}
    assert new == {"structural_baseline", "structural_budget", "structural_ci", "structural_by_cluster",
                   "structural_pass1", "structural_pass1_by_cluster", "structural_checks",
                   "structural_hard", "structural_hard_ci", "structural_hard_by_cluster", "best_baseline",
                   "best_baseline_hard", "versus_structural", "similarity", "unseen", "beyond_by_both",
                   "start_failures"}
    old = {k: v for k, v in data.items() if k not in new}
    old["budgets"] = [{k: v for k, v in b.items() if k != "structural"} for b in old["budgets"]]
    (tmp_path / "summary.json").write_text(json.dumps(old))
    back = read_summary(tmp_path)
    assert back.structural_baseline is None and back.best_baseline is None and back.budgets[0].structural is None
    assert back.cumulative == s.cumulative
    assert "baseline (c)" not in format_table(back) and "best baseline" not in format_markdown(back)
    assert all(r.code != "best_baseline" for r in go_no_go(back, None).reasons)
    old_row, new_row = format_comparison([back, s]).splitlines()[2:4]
    assert [c.strip() for c in old_row.split("|")[-2:]] == ["-", "-"]
    assert new_row.split("|")[-2].strip() == "53.3%" and new_row.split("|")[-1].strip().startswith("(c) +30.0 pp")


# -- held out in substance, and theorems that cannot start -------------------------------------------------


def test_a_theorem_that_cannot_start_is_reported_with_leans_error() -> None:
    rows = [row("easy1", 2), row("easy2", 4),
            row("hard1", None, error="start").model_copy(update={"message": "<stdin>:3:40: Unknown identifier `x`"}),
            row("hard2", None)]
    s = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8]))
    assert s.start_errors == 1 and s.start_failures == {"hard1": "<stdin>:3:40: Unknown identifier `x`"}
    assert s.cumulative.total == 4  # counted unsolved, and said so
    table = format_table(s)
    assert "could not start (the statement did not elaborate; counted unsolved): 1" in table
    assert "  hard1: <stdin>:3:40: Unknown identifier `x`" in table
    assert "hard1: <stdin>:3:40: Unknown identifier `x`" in format_markdown(s)


def test_the_similarity_block_and_the_unseen_theorems() -> None:
    from burnqed_core.data.twins.similarity import similarity_report
    from burnqed_core.records import Theorem

    corpus = [Theorem(name="c_rev", statement="(xs : List Nat) : xs.reverse.reverse = xs", proof=["simp"]),
              Theorem(name="c_add", statement="(a b : Nat) : a + b = b + a", proof=["omega"])]
    bench = [Theorem(name=n, statement=st, proof=["omega"]) for n, st in (
        ("easy1", "(m n : Nat) : m + n = n + m"),          # the corpus's statement renamed: a twin
        ("easy2", "(k : Nat) : k * 1 = k"),
        ("hard1", "(p q : Nat) (h : p < q) : p + 1 ≤ q"),
        ("hard2", "(xs ys : List Nat) : (xs ++ ys).length = xs.length + ys.length"))]
    report = similarity_report(corpus, bench, reference_name="tiny corpus")
    assert {n.theorem: n.how for n in report.strong} == {"easy1": "statement"}
    rows = [row("easy1", 2), row("easy2", 4), row("hard1", 20), row("hard2", None)]
    s = summarize(rows, BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32], similarity=report))
    assert s.similarity == report and s.unseen is not None
    assert s.unseen.theorems == sorted(set(n.name for n in bench) - report.with_near_twin())
    assert "easy1" not in s.unseen.theorems and s.unseen.solved.total == len(s.unseen.theorems)
    assert s.unseen.pass1_by_cluster is not None
    table = format_table(s)
    assert "nearest-neighbour similarity to the training corpus (tiny corpus, 2 theorems" in table
    assert "statement with definitions: median" in table and "easy1 ~ c_add (statement, 1.00)" in table
    assert f"unseen (no near-twin of any kind in the corpus): {len(s.unseen.theorems)} theorems" in table
    assert "Held out in substance:" in format_markdown(s)
    # the block is carried once, on the main variant, and survives summary.json
    both = summarize_variants(rows + [r.model_copy(update={"search_automation": True}) for r in rows], BASE,
                              SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32], similarity=report))
    assert both.similarity == report and both.policy_only is not None and both.policy_only.similarity is None
    assert EvalSummary.model_validate_json(both.model_dump_json()) == both


def test_baseline_c_with_retrieval_is_reported_and_the_stronger_baseline_is_the_one_to_beat() -> None:
    """Issue 65: with premise steps the eval also measures (c) with retrieval; the summary reports it, the checks
    each searcher spent, the hard theorems a premise step proved, and picks the stronger of (c) and (c) with
    retrieval as the best baseline."""
    def cl(n: str) -> int:
        return int(n[1:3])

    names = [f"c{c:02d}_{i}" for c in range(30) for i in range(2)]
    c = StructuralBaseline(key="k", budget=32, nodes={n: 2 if cl(n) < 12 else None for n in names},
                           checks={n: 40.0 for n in names})
    r = StructuralBaseline(key="r", budget=32, nodes={n: 2 if cl(n) < 18 else None for n in names},
                           checks={n: 60.0 for n in names})
    b = Baselines(single={n: "omega" if cl(n) < 5 else None for n in names},
                  defaware={n: "simp [f]" if cl(n) < 10 else None for n in names}, structural=c,
                  structural_retrieval=r)
    rows = [crow(n, n[:3], 4 if cl(n) < 20 else None).model_copy(update={
        "checks": 50, "proof_sources": ["premise", "automation"] if cl(n) in (10, 11) else ["policy"]})
        for n in names]
    s = summarize(rows, b, SummaryOptions(iteration=0, benchmark="bench", budgets=[32]))
    assert str(s.retrieval_baseline) == "36/60 (60.0%)" and str(s.structural_baseline) == "24/60 (40.0%)"
    assert s.best_baseline is not None and s.best_baseline.name == "r"
    assert s.versus_retrieval is not None and s.versus_retrieval.versus_primary is not None
    assert s.versus_retrieval.versus_primary.change.value == pytest.approx((20 - 18) / 30)
    assert s.checks_per_theorem == 50 and s.structural_checks == 40 and s.retrieval_checks == 60
    assert s.beyond_by_premise == sorted(n for n in names if cl(n) in (10, 11))
    text = format_table(s)
    assert "baseline (c) with retrieval" in text and "Lean checks per theorem (compute): prover 50.0, (c) 40.0, " \
        "(c) with retrieval 60.0" in text and "hard, with a premise step" in text
    assert "baseline (c) with retrieval" in format_markdown(s)
    # without it, nothing of it shows
    plain = summarize(rows, b.model_copy(update={"structural_retrieval": None}),
                      SummaryOptions(iteration=0, benchmark="bench",
                      budgets=[32]))
    assert plain.retrieval_baseline is None and plain.best_baseline is not None and plain.best_baseline.name == "c"
    assert "with retrieval" not in format_table(plain)
