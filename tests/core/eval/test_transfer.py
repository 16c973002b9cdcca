"""Leave-one-family-out folds (`burnqed_core.eval.transfer`): planning, twins left out, the fold's profile
file and theorems, and the table read from real eval summaries. The folds run through the pipeline in
``tests/pipeline/test_transfer_e2e.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.synthetic.catalogue import BY_NAME
from burnqed_core.data.synthetic.generate_sets import family_theorems
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.errors import DataError
from burnqed_core.eval.baselines.records import Baselines, StructuralBaseline
from burnqed_core.eval.summary import SummaryOptions, summarize
from burnqed_core.eval.transfer import (
    PROFILE_FILE,
    THEOREMS_FILE,
    Fold,
    TransferReport,
    corpus_key,
    fold_result,
    format_transfer,
    plan_folds,
    report_files,
    result_file,
    write_fold,
    write_transfer,
)
from burnqed_core.records import EvalResult, Theorem


def _corpus() -> list[Theorem]:
    tmul = family_theorems(BY_NAME["tmul"])[:4]
    tsort = family_theorems(BY_NAME["tsort"])[:3]
    onat = family_theorems(BY_NAME["onat"])[:3]
    # a renamed copy of a tsort theorem under another family: its twin, whichever family is held out
    twin = tsort[0].model_copy(update={"name": "copy_of_tsort", "family": "treach"})
    return [*tmul, *tsort, *onat, twin]


def test_one_fold_per_family_with_its_technique_and_twins_left_out() -> None:
    prof = load_profile("tiny")
    folds = {f.family: f for f in plan_folds(prof, _corpus())}
    assert sorted(folds) == ["onat", "tmul", "treach", "tsort"]
    assert folds["tmul"].technique == "predicates" and folds["onat"].technique == "arith"
    assert len(folds["tmul"].theorems) == 4 and folds["tmul"].twins == []
    # held out, tsort's first theorem has its twin in the rest of the corpus (and the copy has tsort's)
    assert folds["tsort"].twins == [_corpus()[4].name] and len(folds["tsort"].theorems) == 2
    assert folds["treach"].twins == ["copy_of_tsort"] and folds["treach"].theorems == []
    # restricted by family and by technique
    assert [f.family for f in plan_folds(prof, _corpus(), families=["onat"])] == ["onat"]
    assert [f.family for f in plan_folds(prof, _corpus(), techniques=["predicates"])] == ["tmul", "treach", "tsort"]
    # named families run in the order given (a plan registered in advance), then the techniques' in name order
    assert [f.family for f in plan_folds(prof, _corpus(), families=["tsort", "onat", "tsort"])] == ["tsort", "onat"]
    assert [f.family for f in plan_folds(prof, _corpus(), families=["tsort"], techniques=["predicates"])] == [
        "tsort", "tmul", "treach"]
    with pytest.raises(DataError, match=r"\['nope'\] are not in the corpus"):
        plan_folds(prof, _corpus(), families=["nope"])
    with pytest.raises(DataError, match=r"techniques \['structures'\] have no family"):
        plan_folds(prof, _corpus(), techniques=["structures"])


def test_the_fold_profile_extends_the_base_and_holds_the_family_out(tmp_path: Path) -> None:
    prof = load_profile("small")
    fold = plan_folds(prof, _corpus(), families=["tmul"])[0]
    path = write_fold(prof, fold, tmp_path / "tmul")
    assert path == tmp_path / "tmul" / PROFILE_FILE
    fp = load_profile(path)
    assert fp.name == "small-without-tmul"
    assert fp.training.tiny_model.hidden_size == prof.training.tiny_model.hidden_size
    assert fp.data.exclude_families == [*prof.data.exclude_families, "tmul"]
    assert fp.data.withhold_families == prof.data.withhold_families and fp.eval.also == []
    assert Path(fp.paths.work_dir) == (tmp_path / "tmul" / "work").resolve()
    assert [t.name for t in load_theorems(fp.data.benchmark)] == [t.name for t in fold.theorems]
    assert Path(fp.data.benchmark) == (tmp_path / "tmul" / THEOREMS_FILE).resolve()
    # written again unchanged: the files are not touched (the fold's stages stay up to date)
    before = {p: p.stat().st_mtime_ns for p in (path, tmp_path / "tmul" / THEOREMS_FILE)}
    write_fold(prof, fold, tmp_path / "tmul")
    assert {p: p.stat().st_mtime_ns for p in before} == before
    # a withheld family that is held out is no longer withheld; a fold with nothing left is an error
    withheld = prof.model_copy(update={"data": prof.data.model_copy(update={"withhold_families": ["tmul", "x"]})})
    assert load_profile(write_fold(withheld, fold, tmp_path / "w")).data.withhold_families == ["x"]
    with pytest.raises(DataError, match="no held-out theorem left"):
        write_fold(prof, Fold(family="treach", technique="predicates", theorems=[], twins=["a"]), tmp_path / "t")


def _row(name: str, cluster: str, solved_at: int | None, iteration: int = 0) -> EvalResult:
    proved = solved_at is not None
    return EvalResult(iteration=iteration, benchmark="fold", theorem=name, budget=6, proved=proved,
                      nodes_to_proof=solved_at, nodes_used=solved_at or 6, time_s=1.0,
                      proof=["cases h"] if proved else [], hard=True, cluster=cluster)


def _summary(prover: int, structural: int, clusters: int = 6, iteration: int = 0) -> object:
    """2 theorems in each of ``clusters`` template clusters; the prover solves the first ``prover``, (c) the
    first ``structural``."""
    names = [f"tmul_hit_{c}_{i}" for c in range(clusters) for i in range(2)]
    cluster = {n: n.rsplit("_", 1)[0] for n in names}
    nodes = {n: (2 if k < structural else None) for k, n in enumerate(names)}
    b = Baselines(single={n: None for n in names}, defaware={n: None for n in names},
                  structural=StructuralBaseline(key="k", budget=6, nodes=nodes))
    rows = [_row(n, cluster[n], 3 if k < prover else None, iteration) for k, n in enumerate(names)]
    return summarize(rows, b, SummaryOptions(iteration=iteration, benchmark="fold", budgets=[2, 6]))


def test_fold_results_and_the_table(tmp_path: Path) -> None:
    fold = Fold(family="tmul", technique="predicates", theorems=[], twins=["x"])
    strong = fold_result(fold, _summary(prover=12, structural=2))  # type: ignore[arg-type]
    assert strong.theorems == 12 and strong.twins == 1 and strong.structural is not None
    assert str(strong.structural) == "2/12 (16.7%)" and strong.prover.value == 1.0
    assert strong.versus_structural is not None and strong.versus_structural.change.value == pytest.approx(10 / 12)
    assert strong.above_structural
    even = fold_result(fold.model_copy(update={"family": "tsort"}), _summary(prover=4, structural=4))  # type: ignore[arg-type]
    assert even.versus_structural is not None and even.versus_structural.change.value == 0
    assert even.above_structural is False
    # every theorem of every cluster for the prover and none for (c), but two clusters: a point "interval"
    few = fold_result(Fold(family="dayh", technique="cases", theorems=[]), _summary(prover=4, structural=0,
                                                                                  clusters=2))  # type: ignore[arg-type]
    assert few.versus_structural is not None and few.versus_structural.change.low == pytest.approx(1.0)
    assert not few.judged and few.above_structural is None
    report = TransferReport(profile="tiny", folds=[strong, even, few], missing=["aff (all 22 theorems are twins)"])
    md = format_transfer(report)
    assert "| predicates | tmul | 12 (1) | 6 | 100% [100, 100] | 2/12 (16.7%) | +83.3 pp [" in md
    assert "| cases | dayh | 4 (0) | 2 | 100% [100, 100] | 0/4 (0.0%) | +100.0 pp [+100.0, +100.0]" in md
    assert "- predicates: above (c) on 1 of 2 held-out families (tmul)" in md
    assert "- cases: above (c) on 0 of 0 held-out families; not judged (fewer than 6 clusters): dayh" in md
    assert "- techniques with a held-out family above (c): 1 of 1 (1 more with no fold of 6+ clusters)" in md
    assert "no result (failed or not run): aff (all 22 theorems are twins)" in md
    j, m = write_transfer(report, tmp_path)
    assert TransferReport.model_validate_json(j.read_text()) == report and m.read_text() == md + "\n"


def test_a_fold_read_at_a_later_iteration_carries_its_change_since_iteration_0(tmp_path: Path) -> None:
    fold = Fold(family="tmul", technique="predicates", theorems=[])
    first = _summary(prover=2, structural=2)
    later = fold_result(fold, _summary(prover=12, structural=2, iteration=2), first)  # type: ignore[arg-type]
    assert later.iteration == 2 and later.versus_iteration0 is not None
    v0 = later.versus_iteration0
    assert v0.name == "pass@k, budget 6" and not v0.by_cluster
    assert (v0.before, v0.after) == (pytest.approx(2 / 12), 1.0) and v0.change.value == pytest.approx(10 / 12)
    assert v0.change.low > 0  # ten theorems in five clusters gained, none lost
    flat = fold_result(fold.model_copy(update={"family": "tsort"}), _summary(prover=2, structural=2, iteration=2),
                       first)  # type: ignore[arg-type]
    assert flat.versus_iteration0 is not None and flat.versus_iteration0.change.value == 0
    # iteration 0 itself (or no first summary) has no change to report
    assert fold_result(fold, first).versus_iteration0 is None  # type: ignore[arg-type]
    alone = fold_result(fold, _summary(prover=3, structural=2, iteration=1))  # type: ignore[arg-type]
    assert alone.versus_iteration0 is None
    report = TransferReport(profile="tiny", iteration=2, folds=[later, flat])
    md = format_transfer(report)
    assert md.startswith("Leave-one-family-out transfer, profile tiny (iteration 2;")
    assert "| (a) | since iteration 0 |" in md
    assert "| predicates | tmul | 12 (0) | 6 | 100% [100, 100] | 2/12 (16.7%) | +83.3 pp [" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| predicates | tmul |"))
    assert row.endswith("| +83.3 pp [+50.0, +100.0] (17% -> 100%) |"), row  # the change since iteration 0
    assert "- since iteration 0 (judged folds, interval of the paired change): up on 1 of 2 (tmul), down on 0" in md
    j, m = write_transfer(report, tmp_path)
    assert (j.name, m.name) == report_files(2) == ("transfer-iter2.json", "transfer-iter2.md")
    assert TransferReport.model_validate_json(j.read_text()) == report
    assert result_file(0) == "fold.json" and result_file(2) == "fold-iter2.json"
    # iteration 0's table has no such column, and its files keep their names
    md0 = format_transfer(TransferReport(profile="tiny", folds=[fold_result(fold, first)]))  # type: ignore[arg-type]
    assert "since iteration 0" not in md0 and report_files(0) == ("transfer.json", "transfer.md")


def test_a_table_counts_only_the_folds_read_on_the_current_corpus() -> None:
    """Folds gathered from an output directory may have run before the corpus changed: the fold records the
    corpus it was planned on, and a table over another corpus marks it and leaves it out of the counts."""
    corpus = _corpus()
    key = corpus_key(corpus)
    assert key == corpus_key(list(reversed(corpus))) and len(key) == 16  # the order does not matter
    rewritten = [corpus[0].model_copy(update={"proof": ["omega"]}), *corpus[1:]]
    assert corpus_key(rewritten) != key and corpus_key(corpus[:-1]) != key  # a proof, a theorem
    folds = plan_folds(load_profile("tiny"), corpus)
    assert {f.corpus for f in folds} == {key}
    tmul = next(f for f in folds if f.family == "tmul")
    now = fold_result(tmul, _summary(prover=12, structural=2))  # type: ignore[arg-type]
    assert now.corpus == key and now.above_structural
    before = now.model_copy(update={"family": "tsort", "corpus": corpus_key(rewritten)})
    unknown = now.model_copy(update={"family": "tocc", "corpus": None})  # written before the key was recorded
    md = format_transfer(TransferReport(profile="tiny", folds=[now, before, unknown], corpus=key))
    assert "| predicates | tmul | 12 (0) |" in md
    assert "| predicates | tsort * | 12 (0) |" in md and "| predicates | tocc * | 12 (0) |" in md
    assert "- predicates: above (c) on 1 of 1 held-out families (tmul)" in md
    assert "- read on an earlier corpus (rows marked *, not counted above; run them again to count them): " \
           "tsort\n" in md
    assert "- corpus not recorded (written before folds recorded it; rows marked *, not counted above): tocc" in md
    # with no current corpus named (a report of one run), every fold counts
    md_all = format_transfer(TransferReport(profile="tiny", folds=[now, before]))
    assert "above (c) on 2 of 2" in md_all and " * |" not in md_all
