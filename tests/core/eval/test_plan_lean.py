"""One plan, the same report however it runs (issue 57): in one process (`run`: what ``burnqed eval``, the nightly
eval and the EBM ablation do) and over shards (`prepare`, `search` per shard, `merge`: what the ``eval_report``
stage does), on the real embedded Lean with the fixed automation policy (no model to train), two sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.eval import plan as eval_plan
from burnqed_core.eval.report import REPORT_FILE, SUMMARY_FILE
from burnqed_core.eval.run import RESULTS_FILE, read_eval_results
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.eval.steps import set_slug
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.record_io import write_jsonl

pytestmark = [pytest.mark.lean]

WALL_CLOCK = ("time", "seconds", "elapsed")


def _without_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_clock(v) for k, v in value.items() if not any(w in k for w in WALL_CLOCK)}
    if isinstance(value, list):
        return [_without_clock(v) for v in value]
    return value


def _report(out: Path) -> tuple[Any, list[Any], str]:
    summary = _without_clock(json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8")))
    rows = sorted((r.theorem, r.attempt, r.proved, r.nodes_to_proof, r.proof, r.cluster)
                  for r in read_eval_results(out))
    return summary, rows, (out / REPORT_FILE).read_text(encoding="utf-8")


async def test_one_plan_in_one_process_and_over_shards_gives_one_report(tmp_path: Path, lean_pool: Any) -> None:
    bench, other = tmp_path / "bench.jsonl", tmp_path / "other.jsonl"
    test = load_theorems("bundled:test")
    write_jsonl(test[:4], bench)
    write_jsonl(test[4:6], other)
    prof = load_profile("tiny", environ={}, overrides={
        "policy.backend": "fixed", "eval.budgets": [2, 4], "eval.also": [str(other)], "eval.ebm_ablation": False,
        "paths.baselines": str(tmp_path / "baselines"), "data.benchmark": str(bench)})
    settings = EvalSettings.of(prof)
    policy = FixedTacticsPolicy(prof.policy.fixed_tactics)

    async def env() -> Any:
        return lean_pool

    whole = eval_plan.plan_sets(settings, 0, tmp_path / "whole", None)
    await eval_plan.run(settings, whole, policy, env, progress=False)

    sharded = eval_plan.plan_sets(settings, 0, tmp_path / "sharded", None)
    await eval_plan.prepare(settings, sharded, env, progress=False)
    theorems = sharded.theorems()
    works = []
    for i in range(0, len(theorems), 2):  # three shards of two: the benchmark's in two, the other set's in one
        work = tmp_path / f"shard-{i}"
        await eval_plan.search(settings, sharded, policy, lean_pool, theorems[i:i + 2], work, progress=False)
        works.append(work)
    res = eval_plan.merge(settings, sharded, works)

    assert [s.spec for s in whole.sets] == [str(bench), str(other)]
    for a, b in zip(whole.sets, sharded.sets, strict=True):
        assert (a.out / RESULTS_FILE).is_file() and (b.out / RESULTS_FILE).is_file()
        assert _report(a.out)[:2] == _report(b.out)[:2], a.spec
    combined = (whole.out / REPORT_FILE).read_text(encoding="utf-8")
    assert combined == (sharded.out / REPORT_FILE).read_text(encoding="utf-8")
    assert f"# {bench}" in combined and f"# {other}" in combined
    assert res.metrics["shards"] == 2 and res.metrics[f"{set_slug(str(other))}_shards"] == 1


async def test_a_users_file_with_a_corpus_twin_is_evaluated_without_it(tmp_path: Path, lean_pool: Any) -> None:
    """A user's set holding a renamed copy of a corpus theorem beside honest ones: evaluated as it is, the twin
    left out of the searches and the headline, reported apart (report section, ``twins.json``, the count)."""
    from burnqed_core.eval.steps import TWINS_FILE
    from tests.core.eval.test_hygiene import renamed_copy

    original = next(t for t in load_theorems("bundled:corpus") if t.name == "tree_mirror_bump_2")
    twin = renamed_copy(original, "my_flip_add")
    honest = load_theorems("bundled:test")[:2]
    prof = load_profile("tiny", environ={}, overrides={
        "policy.backend": "fixed", "eval.budgets": [2], "eval.ebm_ablation": False,
        "paths.baselines": str(tmp_path / "baselines")})
    settings = EvalSettings.of(prof)

    async def env() -> Any:
        return lean_pool

    plan = eval_plan.plan_set("mine.lean", [twin, *honest], 0, tmp_path / "o", None)
    res = await eval_plan.run(settings, plan, FixedTacticsPolicy(prof.policy.fixed_tactics), env, progress=False)
    out = plan.sets[0].out
    assert {r.theorem for r in read_eval_results(out)} == {t.name for t in honest}
    report = (out / REPORT_FILE).read_text(encoding="utf-8")
    assert "Left out of the headline: 1 twin(s) of corpus theorems" in report and "`my_flip_add`" in report
    assert "tree_mirror_bump_2" in json.loads((out / TWINS_FILE).read_text(encoding="utf-8"))["my_flip_add"]
    assert res.metrics.get("corpus_twins_left_out", 1) == 1
