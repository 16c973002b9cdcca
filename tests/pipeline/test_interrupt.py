"""A run stopped by a signal is told apart from a stage that failed (`burnqed_pipeline.runner._interrupted`):
`burnqed loop` and `burnqed transfer` stop on the first (exit 130), while a failed transfer fold lets the
others go on. Real in-process Dagster runs, with a real SIGINT sent to this process mid-step; a sharded stage
(search, eval) built by the pipeline's own factory, its shard steps with their retry policy."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import pytest

from burnqed_core.cli import main as core_main
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.loop.spec import Sharded, StageContext, StageSpec
from burnqed_core.projection import StageSettings
from burnqed_core.records import StageResult, Theorem
from burnqed_core.search.job import SearchInterrupted
from burnqed_pipeline.defs.partitions import add_iteration
from burnqed_pipeline.factory import sharded_asset
from burnqed_pipeline.runner import RunInterrupted, _interrupted
from burnqed_pipeline.stage import COMMAND_TAG
from tests.pipeline.helpers import resources, step_keys
from tests.pipeline.profiles import write_profile

SEARCH_S = 45.0  # how long the interrupted shard's search would go on (a real one: minutes)
STOPPED_WITHIN_S = 20.0  # a run of four steps stopped at the signal takes ~2 s; generous for a loaded box


@dg.asset
def waits_for_a_signal() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the terminal of `burnqed loop`
    time.sleep(30)  # Dagster raises its interruption in the step before this ends


@dg.asset
def catches_the_signal_itself() -> None:
    # what the trajectories stage does when its search caught the signal and saved what it had
    raise SearchInterrupted("interrupted by SIGINT: 2 of 6 theorems saved in out; run the stage again to continue")


@dg.asset
def fails() -> None:
    raise ValueError("a real error of the stage")


def _run(asset: dg.AssetsDefinition) -> dg.ExecuteInProcessResult:
    assert threading.current_thread() is threading.main_thread()  # signals are delivered to the main thread
    with dg.DagsterInstance.ephemeral() as instance:
        return dg.materialize([asset], instance=instance, raise_on_error=False)


def test_a_sigint_mid_step_is_an_interruption() -> None:
    t0 = time.monotonic()
    result = _run(waits_for_a_signal)
    assert not result.success and time.monotonic() - t0 < 25
    assert _interrupted(result)


def test_a_search_that_caught_the_signal_is_an_interruption() -> None:
    result = _run(catches_the_signal_itself)
    assert not result.success and _interrupted(result)


def test_a_failed_stage_is_not_an_interruption() -> None:
    result = _run(fails)
    assert not result.success and not _interrupted(result)


def test_an_interrupted_command_exits_130(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    monkeypatch.setattr("sys.argv", ["burnqed"])
    app = typer.Typer()

    @app.command()
    def stopped() -> None:
        raise RunInterrupted("iteration 1 run 1234abcd interrupted at trajectories: ...")

    with pytest.raises(SystemExit) as e:
        core_main(app)
    assert e.value.code == 130
    assert "interrupted at trajectories" in capsys.readouterr().err


class _Searches:
    """A sharded stage whose first shard sends SIGINT to this process (Ctrl-C of `burnqed loop` mid-search) and
    then searches for `SEARCH_S` unless cancelled; the other shards finish at once."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.cancelled: list[int] = []

    async def shard(self, ctx: StageContext, theorems: Sequence[Theorem], work: Path) -> StageResult:
        self.calls.append(len(self.calls))
        if len(self.calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
            try:
                await asyncio.sleep(SEARCH_S)
            except asyncio.CancelledError:
                self.cancelled.append(0)
                raise
        return StageResult(stage="searches", path=str(work), summary=f"{len(theorems)} searched")

    def spec(self) -> StageSpec:
        return StageSpec(name="searches", doc="searches in shards", settings=StageSettings, shards=Sharded(
            select=lambda ctx: load_theorems("bundled:benchmark")[:2], shard=self.shard,
            merge=lambda ctx, dirs: StageResult(stage="searches", path=str(ctx.out), summary="merged"),
            size=lambda profile: 1))


def _run_sharded(tmp_path: Path, searches: _Searches, tags: dict[str, str]) -> tuple[dg.ExecuteInProcessResult, float]:
    assert threading.current_thread() is threading.main_thread()
    prof = write_profile(tmp_path / "profile.yaml", {"paths.work_dir": str(tmp_path / "work")})
    with dg.DagsterInstance.ephemeral() as instance:
        add_iteration(instance, 0)
        t0 = time.monotonic()
        result = dg.materialize([sharded_asset(searches.spec())], instance=instance, resources=resources(prof),
                                partition_key="0", raise_on_error=False, tags=tags)
        return result, time.monotonic() - t0


def test_a_sigint_mid_shard_stops_the_command_s_run(tmp_path: Path) -> None:
    """A run of `burnqed loop`/`transfer`: the interrupted shard step is not retried (Dagster retries an
    interrupted step that has a retry policy), the next shard never starts, and the interrupted search is
    cancelled rather than left running on the runtime loop."""
    searches = _Searches()
    result, took = _run_sharded(tmp_path, searches, {COMMAND_TAG: "loop"})
    assert not result.success and took < STOPPED_WITHIN_S, took
    assert _interrupted(result)
    assert step_keys(result, "STEP_UP_FOR_RETRY") == []
    assert searches.calls == [0] and searches.cancelled == [0]
    failed = step_keys(result, "STEP_FAILURE")
    assert "searches.searches_shard[shard_00000]" in failed and "searches.searches_shard[shard_00001]" in failed


def test_a_sigint_mid_shard_of_another_run_is_retried_at_once(tmp_path: Path) -> None:
    """A run not started by a burnqed command (a step of a Celery or Kubernetes run, where the signal preempts
    that step) keeps Dagster's retry; the retried shard no longer waits for the interrupted attempt's search,
    which held the shard's lock, to end: that search was cancelled."""
    searches = _Searches()
    result, took = _run_sharded(tmp_path, searches, {})
    assert result.success and took < STOPPED_WITHIN_S, took
    assert step_keys(result, "STEP_UP_FOR_RETRY") == ["searches.searches_shard[shard_00000]"]
    assert searches.cancelled == [0] and len(searches.calls) == 3  # shard 1, shard 2, shard 1 again
