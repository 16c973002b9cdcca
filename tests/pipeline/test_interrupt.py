"""A run stopped by a signal is told apart from a stage that failed (`burnqed_pipeline.cli._interrupted`):
`burnqed loop` and `burnqed transfer` stop on the first (exit 130), while a failed transfer fold lets the
others go on. Real in-process Dagster runs, with a real SIGINT sent to this process mid-step."""

from __future__ import annotations

import os
import signal
import threading
import time

import dagster as dg
import pytest

from burnqed_core.cli import main as core_main
from burnqed_core.search.job import SearchInterrupted
from burnqed_pipeline.cli import RunInterrupted, _interrupted


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
