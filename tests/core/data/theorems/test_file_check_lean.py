"""A user's file of the shape people bring (`tests/user_files.py`: 99 definitions in three namespaces inside
`noncomputable section`s, 15 by well-founded recursion, a `DecidablePred` instance through `decidable_of_iff`,
`autoImplicit` on, the theorems after the definitions), on the real embedded Lean: `lean check`'s route gives
a verdict per theorem, and the eval's route (audit, baselines, search, final check) evaluates three theorems of
it. The whole file's figures (191 theorems) are `benchmarks/user_file.py`'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from burnqed_core.cli.lean import check_report
from burnqed_core.config import load_profile
from burnqed_core.data.theorems.file_check import check_file
from burnqed_core.data.theorems.lean_file import parse_lean_file
from burnqed_core.eval import plan as eval_plan
from burnqed_core.eval.run import read_eval_results
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.lean.pool import LeanPool
from burnqed_core.policy.fixed import FixedTacticsPolicy
from tests.user_files import counts, user_file_text

pytestmark = pytest.mark.lean


async def test_lean_check_gives_every_theorem_of_a_users_file_its_verdict(lean_pool: LeanPool) -> None:
    text = user_file_text(max_theorems=3)
    defs, thms = counts(text)
    assert defs == 99 and thms == 9
    elab = await check_file(lean_pool, text, 120.0)
    lines, ok, total = check_report(text, elab)
    verdicts = [line for line in lines if line.startswith(("ok ", "FAIL ", "TIMEOUT "))]
    assert total == thms and len(verdicts) == thms and not elab.timed_out, lines
    assert not any(line.startswith("FAIL <file>") for line in lines), lines
    assert ok >= 7, lines  # the definitions elaborate; the theorems are true (a proof may still fail)


async def test_eval_evaluates_three_theorems_of_a_users_file(tmp_path: Path, lean_pool: LeanPool) -> None:
    # what `burnqed eval --limit 3` takes of the file: its first three theorems, in one namespace (one preamble)
    theorems = [e.theorem for e in parse_lean_file(user_file_text(max_theorems=3), source="mine.lean").entries][:3]
    assert len(theorems) == 3 and len({t.preamble for t in theorems}) == 1 and "down15" in theorems[0].preamble
    prof = load_profile("tiny", environ={}, overrides={
        "policy.backend": "fixed", "eval.budgets": [2], "eval.ebm_ablation": False,
        "paths.baselines": str(tmp_path / "baselines")})

    async def env() -> Any:
        return lean_pool

    plan = eval_plan.plan_set("mine.lean", theorems, 0, tmp_path / "o", None, held_out=False)
    await eval_plan.run(EvalSettings.of(prof), plan, FixedTacticsPolicy(prof.policy.fixed_tactics), env,
                        progress=False)
    rows = read_eval_results(plan.sets[0].out)
    assert {r.theorem for r in rows} == {t.name for t in theorems}
    assert not [r for r in rows if r.error], [(r.error, r.message) for r in rows]  # every one started and ran
