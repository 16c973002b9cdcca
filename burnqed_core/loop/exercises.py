"""The EBM ablation on unsearched exercises: does the value function help the search where proofs are long?

The loop's eval measures the EBM on the benchmark (`eval.ebm_ablation`), where most theorems close in the
root expansion and nothing is left to rank. This is the setting the EBM was made for instead: corpus
theorems whose known proofs are never trained on (the withheld exercises of the base split,
``data.withhold_families`` / ``data.withhold_fraction``), with proofs of ``min_steps`` tactics or more, that no
search of an iteration before N has touched (the EBM of iteration N trained on those searches' trees, so a
theorem searched there is left out). Each is searched with iteration N's model with and without iteration N's
EBM, with the same seeds, ``eval.pass_k`` attempts each; the report gives both rates and their paired
cluster-bootstrap intervals (`burnqed_core.eval.summary.ebm_change`), and how many positives the EBM trained
on. The search and the report are the eval's: one `burnqed_core.eval.plan.EvalPlan` of one set (not held out,
no shipped baselines), run in this process.

These are exercises, not a benchmark: their families' other theorems are in the corpus, so the benchmark's twin
check does not apply and no figure of this ablation is a held-out result. The proofs are still checked like any
eval's, and a theorem whose name or root goal occurs in iteration N's training pairs is an error.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel, Field

from burnqed_core.config import Profile
from burnqed_core.errors import DataError
from burnqed_core.eval.plan import EvalPlan
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)

PLAN_FILE = "exercises.json"
SPEC_PREFIX = "exercises:iter_"


class ExercisePlan(BaseModel):
    """Which exercises the ablation of iteration ``iteration`` searches, and why the others are left out."""

    iteration: int
    min_steps: int
    withheld: int = Field(description="withheld exercises of the base split")
    searched_before: list[str] = Field(default_factory=list,
                                       description="withheld exercises searched by an earlier iteration (the EBM "
                                                   "trained on their search trees): left out")
    too_short: list[str] = Field(default_factory=list, description="known proof shorter than min_steps: left out")
    theorems: list[str] = Field(default_factory=list, description="the exercises searched, by name")
    ebm_positives: int | None = Field(None, description="proof-path states the EBM trained on (its metrics)")
    ebm_hindsight: int | None = Field(None, description="of its positives (train and validation), those from the "
                                      "known proofs of unproved searches (ebm.hindsight)")

    def describe(self) -> str:
        pos = f"; the EBM trained on {self.ebm_positives} positives" if self.ebm_positives is not None else ""
        if self.ebm_hindsight:
            pos += f" ({self.ebm_hindsight} of all its positives from known proofs)"
        return (f"{len(self.theorems)} exercises of iteration {self.iteration} with proofs of {self.min_steps}+ "
                f"steps (of {self.withheld} withheld: {len(self.searched_before)} searched before, "
                f"{len(self.too_short)} shorter){pos}")


def searched_before(layout: BaseLayout, iteration: int) -> set[str]:
    """Theorems whose search some iteration before ``iteration`` saved (every ``*.traj`` output)."""
    from burnqed_core.loop.inputs import trajectory_dirs
    from burnqed_core.trajectory_io import finished_theorems

    out: set[str] = set()
    for p in trajectory_dirs([layout.iteration(k).stage("trajectories") for k in range(iteration)]):
        out |= finished_theorems(p)
    return out


def ebm_positives(ebm_dir: Path) -> tuple[int | None, int | None]:
    """The training positives (proof-path states) of the EBM in ``ebm_dir`` and how many of all its positives
    came from known proofs, from its `TrainReport`; None when it has none."""
    from burnqed_core.ebm.train import METRICS_FILE, read_report

    if not (ebm_dir / METRICS_FILE).is_file():
        return None, None
    rep = read_report(ebm_dir)
    return rep.train_positives, rep.hindsight_positives


def plan_exercises(profile: Profile, iteration: int, min_steps: int = 4) -> tuple[ExercisePlan, list[Theorem]]:
    """The exercises iteration ``iteration``'s ablation searches (module doc) in the work dir of ``profile``."""
    from burnqed_core.data.theorems.load import corpus_theorems
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.loop.corpus import search_withheld

    if iteration < 1:
        raise DataError("iteration 0 has no EBM: the exercise ablation starts at iteration 1")
    if min_steps < 1:
        raise DataError("min_steps must be >= 1")
    if not (profile.data.withhold_families or profile.data.withhold_fraction):
        raise DataError(f"profile {profile.name} withholds no exercises (data.withhold_families or "
                        "data.withhold_fraction): there is nothing unseen to search")
    layout = BaseLayout(root=profile.paths.work_dir)
    it = layout.iteration(iteration)
    base, ebm = layout.stage("base_model"), it.stage("ebm")
    for what, path in (("base_model", base), ("merged_model", it.stage("merged_model"))):
        if not path.is_dir():
            raise DataError(f"{path}: no {what} (materialise iteration {iteration} first)")
    if not has_ebm(ebm):
        raise DataError(f"{ebm}: no trained EBM (materialise the ebm stage of iteration {iteration})")
    withheld = search_withheld(profile, base)
    if not withheld:
        raise DataError(f"the base split of {base} withholds no exercise: nothing unseen to search")
    by_name = {t.name: t for t in corpus_theorems(profile)}
    missing = [n for n in withheld if n not in by_name]
    if missing:
        raise DataError(f"{len(missing)} withheld exercises are not in the corpus ({', '.join(missing[:3])}): the "
                        "work dir was made with another corpus")
    before = searched_before(layout, iteration)
    positives, hindsight = ebm_positives(ebm)
    plan = ExercisePlan(iteration=iteration, min_steps=min_steps, withheld=len(withheld), ebm_positives=positives,
                        ebm_hindsight=hindsight)
    chosen: list[Theorem] = []
    for name in sorted(withheld):
        t = by_name[name]
        if name in before:
            plan.searched_before.append(name)
        elif len(t.proof) < min_steps:
            plan.too_short.append(name)
        else:
            chosen.append(t)
    plan.theorems = [t.name for t in chosen]
    if not chosen:
        raise DataError(f"no exercise left to search: {plan.describe()}")
    return plan, chosen


def ablation_settings(profile: Profile) -> EvalSettings:
    """The eval's settings as the ablation runs them: the EBM ablation on, no baseline (c) (its search has no
    EBM to ablate)."""
    s = EvalSettings.of(profile)
    return s.model_copy(update={"eval": s.eval.model_copy(update={"ebm_ablation": True,
                                                                     "structural_baseline": False})})


def plan_ablation(profile: Profile, iteration: int, out_dir: Path, min_steps: int = 4
                  ) -> tuple[ExercisePlan, EvalPlan]:
    """The exercises (`plan_exercises`) as an eval plan of one set, ``exercises:iter_N``: iteration N's model
    and EBM, checked against its training pairs; not held out (they are corpus theorems)."""
    from burnqed_core.eval.plan import plan_set

    exercises, theorems = plan_exercises(profile, iteration, min_steps)
    it = BaseLayout(root=profile.paths.work_dir).iteration(iteration)
    pairs = it.stage("tactic_pairs")
    return exercises, plan_set(f"{SPEC_PREFIX}{iteration}", theorems, iteration, out_dir, it.stage("merged_model"),
                               ebm=it.stage("ebm"), training_pairs=[pairs] if pairs.is_dir() else [],
                               held_out=False)


async def run_exercise_ablation(profile: Profile, iteration: int, out_dir: Path, *, min_steps: int = 4,
                                env: ProofEnv | None = None,
                                progress: bool = True) -> tuple[ExercisePlan, StageResult]:
    """Plan the exercises, search them with and without the EBM (resumable: ``out_dir`` keeps its searches),
    and write ``exercises.json`` beside the eval's ``results.parquet``, ``summary.json`` and ``report.md``.
    ``env``: a started Lean to use (else a pool of the profile's Lean settings is started and closed)."""
    from burnqed_core.eval import plan as eval_plan
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.policy.factory import make_policy
    from burnqed_core.record_io import atomic_write_text

    exercises, plan = plan_ablation(profile, iteration, out_dir, min_steps)
    log.info("EBM ablation on exercises: %s", exercises.describe())
    settings = ablation_settings(profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / PLAN_FILE, exercises.model_dump_json(indent=1) + "\n")
    pool = LeanPool(settings.lean) if env is None else None
    policy = make_policy(settings, plan.model)

    async def lean() -> ProofEnv:
        if pool is None:
            assert env is not None
            return env
        await pool.start()  # once: a started pool returns at once
        return pool

    try:
        res = await eval_plan.run(settings, plan, policy, lean, progress=progress)
    finally:
        if pool is not None:
            await pool.close()
        await policy.close()
    return exercises, res
