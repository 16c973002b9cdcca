"""The loop's trajectories stage on the real embedded Lean (session
`lean_pool`): a SIGINT during its search fails the stage (a partial search
is never the stage's output), and running the stage again continues the
saved output to the whole selection."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.loop.stages.trajectories import trajectories
from burnqed_core.policy.base import Candidate
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import Theorem
from burnqed_core.search.job import SearchInterrupted
from burnqed_core.trajectory_io import finished_theorems

pytestmark = pytest.mark.lean

THEOREMS = [Theorem(name=f"add_{k}", statement=f"(n : Nat) : n + {k} = {k} + n") for k in range(6)]
TACTICS = ["omega", "simp", "decide"]


class InterruptingPolicy(FixedTacticsPolicy):
    """The fixed tactics; at its ``at_call``-th call it sends SIGINT to this
    process, as Ctrl-C in the terminal running ``burnqed loop`` does."""

    def __init__(self, at_call: int) -> None:
        super().__init__(TACTICS)
        self.calls = 0
        self.at_call = at_call

    async def generate(self, states: Sequence[str], n: int, temperature: float, max_new_tokens: int | None = None,
                       seeds: Sequence[int] | None = None) -> list[list[Candidate]]:
        self.calls += 1
        if self.calls == self.at_call:
            os.kill(os.getpid(), signal.SIGINT)
        return await super().generate(states, n, temperature, max_new_tokens, seeds)


async def test_sigint_fails_the_stage_and_a_rerun_continues_it(tmp_path: Path, lean_pool: object) -> None:
    profile = load_profile("tiny", environ={
        "BURNQED__POLICY__BACKEND": "fixed",
        "BURNQED__SEARCH__CONCURRENCY": "1",
        "BURNQED__SEARCH__FLUSH_EVERY": "1",
        "BURNQED__SEARCH__MAX_NODES": "8",
        "BURNQED__SEARCH__AUTOMATION__ENABLED": "false",
    })
    out_dir = tmp_path / "trajectories"
    with pytest.raises(SearchInterrupted, match="interrupted by SIGINT") as e:
        await trajectories(profile, 1, InterruptingPolicy(at_call=3), lean_pool, THEOREMS, out_dir,  # type: ignore[arg-type]
                           model_path=tmp_path / "model")
    assert "run the stage again" in str(e.value)
    saved = finished_theorems(out_dir / "search.traj")
    assert len(saved) < len(THEOREMS)  # stopped part-way: the stage must not have passed this off as done

    result = await trajectories(profile, 1, InterruptingPolicy(at_call=-1), lean_pool, THEOREMS,  # type: ignore[arg-type]
                                out_dir, model_path=tmp_path / "model")
    assert finished_theorems(out_dir / "search.traj") == {t.name for t in THEOREMS}
    assert result.metrics["search"]["theorems"] == len(THEOREMS)
    assert result.metrics["search"]["proved"] == len(THEOREMS)
