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
    cli = plan_cli(settings, "core:test", tmp_path / "cli", None, ebm=None, iteration=0, limit=None,
                   training_pairs=[], sample=20)
    names = [t.name for t in cli.theorems()]
    assert sorted(names) == sorted(t.name for t in loop.sets[0].theorems)
    assert len({t.family for t in cli.theorems()}) == 5  # spread over core:test's five families
    assert all(t.module and t.cluster for t in cli.theorems())
    whole = plan_cli(settings, "core:test", tmp_path / "all", None, ebm=None, iteration=0, limit=None,
                     training_pairs=[])
    assert len(whole.theorems()) == 524
    with pytest.raises(BurnqedError, match="--sample"):
        plan_cli(settings, "core:test", tmp_path / "bad", None, ebm=None, iteration=0, limit=None,
                 training_pairs=[], sample=0)
