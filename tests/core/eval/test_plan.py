"""One evaluation plan (issue 57): the sets an eval reports (data.benchmark, then eval.also, sampled when asked;
names unique across sets) and their folders, the plan each entry point builds (``burnqed eval``, the
``eval_report`` and ``nightly_eval`` stages, the EBM ablation on exercises), and that nothing but
`burnqed_core.eval.plan` calls the eval's steps."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from burnqed_core.code_graph import modules
from burnqed_core.config import load_profile
from burnqed_core.errors import DataError
from burnqed_core.eval.plan import plan_set, plan_sets, set_out, set_specs, set_theorems
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.eval.steps import set_slug
from burnqed_core.loop.stages.nightly_eval import Settings as NightlySettings
from burnqed_core.record_io import write_jsonl
from burnqed_core.records import Theorem


def _set(path: Path, names: list[str], family: str = "f") -> str:
    write_jsonl([Theorem(name=n, statement=f": {i} + 0 = {i}", family=family) for i, n in enumerate(names)], path)
    return str(path)


def _settings(**overrides: object) -> EvalSettings:
    return EvalSettings.of(load_profile("tiny", environ={}, overrides=overrides))


def test_eval_sets_in_order_sampled_and_placed(tmp_path: Path) -> None:
    main = _set(tmp_path / "main.jsonl", ["m1", "m2", "m3"])
    other = _set(tmp_path / "other.jsonl", [f"o{i}" for i in range(10)])
    s = _settings(**{"data.benchmark": main, "eval.also": [other, main]})
    assert set_specs(s) == [main, other]  # the repeat dropped
    sets = set_theorems(s)
    assert list(sets) == [main, other] and [len(v) for v in sets.values()] == [3, 10]
    s = s.model_copy(update={"eval": s.eval.model_copy(update={"also_sample": 4})})
    sampled = set_theorems(s)
    assert len(sampled[main]) == 3 and len(sampled[other]) == 4  # only eval.also is sampled
    assert sampled == set_theorems(s)
    out = tmp_path / "eval"
    assert set_out(out, main, main) == out and set_out(out, main, other) == out / "sets" / set_slug(other)
    assert set_slug("bundled:handwritten") == "bundled_handwritten"


def test_a_theorem_in_two_eval_sets_is_an_error(tmp_path: Path) -> None:
    main = _set(tmp_path / "main.jsonl", ["m1", "shared"])
    other = _set(tmp_path / "other.jsonl", ["shared", "o1"])
    with pytest.raises(DataError, match=r"'shared' is in two eval sets"):
        set_theorems(_settings(**{"data.benchmark": main, "eval.also": [other]}))


def test_the_stages_plans_agree_and_the_nightly_samples_like_the_report(tmp_path: Path) -> None:
    """The nightly eval plans the eval_report's sets (eval.also_sample applied: it used to evaluate all 84
    hand-written theorems where eval_report evaluated 12), then its extra benchmarks, whole."""
    main = _set(tmp_path / "main.jsonl", ["m1", "m2"])
    also = _set(tmp_path / "also.jsonl", [f"a{i}" for i in range(10)])
    extra = _set(tmp_path / "extra.jsonl", [f"x{i}" for i in range(5)])
    prof = load_profile("tiny", environ={}, overrides={"data.benchmark": main, "eval.also": [also],
                                                      "eval.also_sample": 3, "nightly.extra_benchmarks": [extra]})
    model = tmp_path / "model"
    report = plan_sets(EvalSettings.of(prof), 1, tmp_path / "iter_1" / "eval_report", model,
                       earlier=[tmp_path / "iter_0" / "eval_report"])
    ns = NightlySettings.of(prof)
    nightly = plan_sets(ns, 1, tmp_path / "nightly", model, extra=ns.nightly.extra_benchmarks)
    assert [(s.spec, s.theorems) for s in nightly.sets[:2]] == [(s.spec, s.theorems) for s in report.sets]
    assert [len(s.theorems) for s in nightly.sets] == [2, 3, 5]
    assert report.sets[1].out == tmp_path / "iter_1" / "eval_report" / "sets" / set_slug(also)
    assert report.sets[1].earlier == [tmp_path / "iter_0" / "eval_report" / "sets" / set_slug(also)]
    assert report.theorems() == [t for s in report.sets for t in s.theorems]
    # a shard writes each set where the plan's folder has it
    assert report.work(report.sets[1], tmp_path / "w") == tmp_path / "w" / "sets" / set_slug(also)


def test_a_plan_of_one_set_is_what_the_cli_and_the_exercises_build(tmp_path: Path) -> None:
    t = [Theorem(name="a", statement=": 1 = 1")]
    p = plan_set("exercises:iter_1", t, 1, tmp_path / "out", tmp_path / "m", held_out=False)
    assert [(s.spec, s.out, s.held_out, s.shipped) for s in p.sets] == [("exercises:iter_1", tmp_path / "out",
                                                                         False, None)]
    p.save()
    assert (tmp_path / "out" / "_eval_plan.json").is_file()


STEPS = {"check_before_lean", "prepare_set", "eval_search", "eval_finish", "merge_eval", "combine_sets"}


def test_nothing_but_the_plan_calls_the_eval_steps() -> None:
    callers: dict[str, set[str]] = {}
    for name, path in modules().items():
        if name in ("burnqed_core.eval.steps", "burnqed_core.eval.plan"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            used = None
            if isinstance(node, ast.Attribute) and node.attr in STEPS:
                used = node.attr
            elif isinstance(node, ast.ImportFrom) and node.module == "burnqed_core.eval.steps":
                used = next((a.name for a in node.names if a.name in STEPS), None)
            if used:
                callers.setdefault(name, set()).add(used)
    assert callers == {}, f"eval steps called outside burnqed_core.eval.plan: {callers}"
