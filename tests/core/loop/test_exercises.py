"""The EBM ablation on unsearched exercises (`burnqed_core.loop.exercises`, ``burnqed ebm ablate``).

A real work dir: a corpus file with withheld exercises, the base split that withholds them, a real search of
iteration 0 (the exercise it searched is left out: the EBM trained on its tree), a real EBM trained through
the loop's stage functions, and iteration 1's model. The plan leaves out the searched and the short exercises;
on the embedded Lean every other exercise is searched with and without the EBM with the same seeds, the
report carries the ablation's paired intervals, and nothing is trained on or searched that should not be.
Settings that leave nothing to ablate are clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import Profile, load_profile
from burnqed_core.data.pairs.prepare import TheoremSplit, write_split
from burnqed_core.errors import DataError
from burnqed_core.loop.corpus import SPLIT_FILE
from burnqed_core.loop.exercises import PLAN_FILE, ExercisePlan, plan_exercises, run_exercise_ablation
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.stages import ebm as ebm_stage
from burnqed_core.loop.stages import embeddings as embeddings_stage
from burnqed_core.loop.stages import trajectories as trajectories_stage
from burnqed_core.record_io import write_parquet
from burnqed_core.records import Theorem, TrajectoryRecord
from tests.core.ebm_toy import toy_records


def ex(name: str, statement: str, proof: list[str], family: str = "ex") -> Theorem:
    return Theorem(name=name, statement=statement, proof=proof, family=family, split="train",
                   source="burnqed-generated")


CORPUS = [
    ex("ex_add_zero", "(n : Nat) : n + 0 = n", ["omega"]),  # searched at iteration 0
    ex("ex_imp_self", "(p : Prop) : p → p", ["intro h", "exact h"]),
    ex("ex_and", "(p q : Prop) (hp : p) (hq : q) : p ∧ q", ["constructor", "exact hp", "exact hq"]),
    ex("ex_three", ": 3 * 3 = 9", ["decide"]),  # shorter than min_steps
    ex("other_two", ": 2 + 2 = 4", ["decide"], family="other"),  # not withheld
]


def profile_for(tmp_path: Path, **over: object) -> Profile:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(t.model_dump_json() + "\n" for t in CORPUS), encoding="utf-8")
    return load_profile("tiny", environ={}, overrides={
        "paths.work_dir": str(tmp_path / "work"), "data.corpus": str(corpus), "data.withhold_families": ["ex"],
        "data.exclude_families": [], "eval.budgets": [4, 8], "eval.pass_k": 2, "search.max_depth": 4,
        "search.concurrency": 4, "search.frontier_batch": 4, "search.automation.enabled": False,
        "policy.max_new_tokens": 12, "ebm.steps": 30, "ebm.hidden_dims": [32, 16], "ebm.batch_size": 16,
        "ebm.eval_every": 10, "ebm.save_every": 10, **over})


def base_split(profile: Profile, withheld: list[str]) -> None:
    model = BaseLayout(root=profile.paths.work_dir).stage("base_model")
    model.mkdir(parents=True, exist_ok=True)
    train = [t.name for t in CORPUS if t.name not in withheld]
    write_split(TheoremSplit(seed=0, val_fraction=0.0, train=train, val=[], withheld=withheld), model / SPLIT_FILE)


@pytest.mark.lean
async def test_exercises_are_searched_with_and_without_the_ebm(lean_pool: object, search_model: Path,
                                                               tmp_path: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy

    prof = profile_for(tmp_path)
    layout = BaseLayout(root=prof.paths.work_dir)
    base_split(prof, [t.name for t in CORPUS if t.family == "ex"])
    it0, it1 = layout.iteration(0), layout.iteration(1)
    policy = LocalPolicy(search_model, batch_size=64, max_new_tokens=12, seed=0)
    try:
        # iteration 0 searched one exercise
        await trajectories_stage.trajectories(prof, 0, policy, lean_pool, [CORPUS[0]], it0.stage("trajectories"),  # type: ignore[arg-type]
                                  search_model)
        with pytest.raises(DataError, match="no merged_model"):
            plan_exercises(prof, 1)  # iteration 1 not materialised yet
        it1.dir.mkdir(parents=True)
        it1.stage("merged_model").symlink_to(search_model)
        with pytest.raises(DataError, match="no trained EBM"):
            plan_exercises(prof, 1)
        # iteration 1's EBM: the loop's stages on iteration 0's trees plus toy ones (held-out positives)
        dirs = trajectories_stage.trajectory_outputs(it0.stage("trajectories"))
        toy = write_parquet(toy_records(n_theorems=9), tmp_path / "toy.parquet", TrajectoryRecord)
        await embeddings_stage.embeddings(prof, 1, policy, [*dirs, toy], it1.stage("embeddings"), progress=False)
        trained = ebm_stage.ebm(prof, 1, it1.stage("embeddings"), [*dirs, toy], it1.stage("ebm"), progress=False)
        assert trained.metrics["trained"]
    finally:
        await policy.close()

    plan, thms = plan_exercises(prof, 1, min_steps=2)
    assert plan.searched_before == ["ex_add_zero"] and plan.too_short == ["ex_three"]
    assert plan.theorems == ["ex_and", "ex_imp_self"] == [t.name for t in thms] and plan.withheld == 4
    assert plan.ebm_positives is not None and plan.ebm_positives > 0
    assert "2 exercises of iteration 1 with proofs of 2+ steps" in plan.describe()

    out = tmp_path / "ablation"
    plan2, res = await run_exercise_ablation(prof, 1, out, min_steps=2, env=lean_pool,  # type: ignore[arg-type]
                                             progress=False)
    assert plan2 == ExercisePlan.model_validate_json((out / PLAN_FILE).read_text())
    from burnqed_core.eval.report import read_summary
    from burnqed_core.eval.run import read_eval_results

    rows = read_eval_results(out)
    # every exercise, both variants (with and without the EBM), two attempts each with the same seeds
    variants = {(r.theorem, bool(r.ebm), r.attempt): r.seed for r in rows}
    assert set(variants) == {(n, e, a) for n in plan.theorems for e in (True, False) for a in (0, 1)}
    assert all(variants[(n, True, a)] == variants[(n, False, a)] for n in plan.theorems for a in (0, 1))
    assert {r.benchmark for r in rows} == {"exercises:iter_1"} and all(r.error == "" for r in rows)
    s = read_summary(out)
    assert s.without_ebm is not None and s.ebm and s.pass_k == 2
    assert "EBM ablation at 8 nodes (without -> with, same seeds, 2 theorems" in res.summary
    assert (out / "report.md").read_text().count("EBM ablation at 8 nodes") == 1
    proved = {r.theorem for r in rows if r.proved}
    assert "ex_imp_self" in proved, res.summary  # intro h, exact h: the fine-tuned model's moves


def test_nothing_to_ablate_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="iteration 0 has no EBM"):
        plan_exercises(profile_for(tmp_path), 0)
    with pytest.raises(DataError, match="withholds no exercises"):
        plan_exercises(profile_for(tmp_path, **{"data.withhold_families": []}), 1)
    with pytest.raises(DataError, match="no base_model"):
        plan_exercises(profile_for(tmp_path), 1)
