"""``eval.sample`` (the loop's fixed sample of ``data.benchmark``) and ``burnqed eval --sample N`` build the same
plan: one sample, spread over the set's families, whichever entry point asks (no Lean)."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.cli.eval import plan_cli
from burnqed_core.config import load_profile
from burnqed_core.errors import BurnqedError
from burnqed_core.eval.plan import plan_sets
from burnqed_core.eval.settings import EvalSettings


def test_the_loop_and_the_command_evaluate_one_sample(tmp_path: Path) -> None:
    settings = EvalSettings.of(load_profile("core", environ={}, overrides={"eval.sample": 20, "eval.also_sample": 7}))
    loop = plan_sets(settings, 0, tmp_path / "loop", None)
    assert [(s.spec, len(s.theorems)) for s in loop.sets] == [("core:test", 20), ("core:dev", 7)]
    index = tmp_path / "premise_index"  # core's search has premise steps: the command needs the index's folder
    with pytest.raises(BurnqedError, match="--premises DIR"):
        plan_cli(settings, "core:test", tmp_path / "cli", None, ebm=None, iteration=0, limit=None,
                 training_pairs=[], sample=20)
    cli = plan_cli(settings, "core:test", tmp_path / "cli", None, ebm=None, iteration=0, limit=None,
                   training_pairs=[], sample=20, premises=index)
    assert cli.premises == index
    names = [t.name for t in cli.theorems()]
    assert sorted(names) == sorted(t.name for t in loop.sets[0].theorems)
    assert len({t.family for t in cli.theorems()}) == 5  # spread over core:test's five families
    assert all(t.module and t.cluster for t in cli.theorems())
    whole = plan_cli(settings, "core:test", tmp_path / "all", None, ebm=None, iteration=0, limit=None,
                     training_pairs=[], premises=index)
    assert len(whole.theorems()) == 524
    with pytest.raises(BurnqedError, match="--sample"):
        plan_cli(settings, "core:test", tmp_path / "bad", None, ebm=None, iteration=0, limit=None,
                 training_pairs=[], sample=0, premises=index)


async def test_the_shipped_core_baselines_are_the_samples() -> None:
    """Baselines (a) and (b) of the core profile's eval samples are shipped beside the sets (measured by
    `burnqed lean baseline`, docs/core-pool.md section 6): the loop and `burnqed eval` read them by key, without
    Lean (env None). A change of the samples, the tactics, the Lean version or the timeout changes the key: this
    fails, re-measure them (`burnqed lean baseline core:test --eval-baselines --structural -p core --sample 80`,
    and `core:dev ... --sample 24`)."""
    from burnqed_core.data.theorems.load import set_dir
    from burnqed_core.eval.baselines.measure import measure_baselines
    from burnqed_core.lean.install import lean_identity

    settings = EvalSettings.of(load_profile("core", environ={}))
    plan = plan_sets(settings, 0, Path("unused"), None)
    for es in plan.sets:
        b = await measure_baselines(None, es.theorems, None, lean_version=lean_identity(),  # type: ignore[arg-type]
                                    shipped=set_dir(es.spec), tactic_timeout_s=settings.lean.tactic_timeout_s)
        assert set(b.single) == set(b.defaware) == {t.name for t in es.theorems}
        assert 0 < sum(v is not None for v in b.single.values()) < len(es.theorems)
