"""Lean fixtures: ONE started embedded worker shared by the whole test session.

Starting the embedded Lean costs ~20 s and ~35 CPU-s and each worker holds
5-6.5 GB, so every test that needs Lean uses `lean_pool` (session scope,
session event loop). A test that must kill or time out processes starts its
own small pool with `lean_config` instead, and closes it.

Tests using these fixtures are skipped, with the reason, when the embedded
backend is not installed (`burnqed lean setup`) -- except under CI (``CI``
set), whose set-up installs it: there a missing or outdated install fails
the tests instead of silently skipping them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import pytest_asyncio

from burnqed_core.config import LeanConfig, load_profile
from burnqed_core.lean.install import install_problem


def tiny_lean_config(**overrides: object) -> LeanConfig:
    """The tiny profile's Lean section with one worker, plus ``overrides``."""
    # A generous start-up limit: on a loaded shared machine the ~20 s start
    # has been seen to take minutes.
    profile = load_profile("tiny", overrides={"lean.num_workers": 1, "lean.embedded.start_timeout_s": 900,
                                              **{f"lean.{k}": v for k, v in overrides.items()}})
    return profile.lean


def skip_unless_lean_installed(config: LeanConfig) -> None:
    assert config.embedded.install_dir is not None
    problem = install_problem(config.embedded.install_dir)
    if problem:
        message = f"embedded Lean unavailable: {problem} (run `burnqed lean setup`)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def lean_config() -> LeanConfig:
    """Tiny-profile Lean settings (one worker); skips if Lean is not installed."""
    config = tiny_lean_config()
    skip_unless_lean_installed(config)
    return config


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def lean_pool(lean_config: LeanConfig) -> AsyncIterator[object]:
    """A started `LeanPool` with one embedded worker (self-tested), shared by
    the session. Do not close or kill it in a test."""
    from burnqed_core.lean.pool import LeanPool

    pool = LeanPool(lean_config)
    await pool.start()
    try:
        yield pool
    finally:
        await pool.close()


@asynccontextmanager
async def own_lean_pool(**overrides: object) -> AsyncIterator[object]:
    """A started one-worker `LeanPool` of a test's own (`tiny_lean_config` with ``overrides``), for tests that
    kill, time out or recycle its processes; closed after, and every process it started is gone."""
    from burnqed_core.lean.pool import LeanPool

    config = tiny_lean_config(**overrides)
    skip_unless_lean_installed(config)
    pool = LeanPool(config)
    await pool.start()
    try:
        yield pool
    finally:
        await pool.close()
        for pid in pool.pids:
            assert pid is None or not os.path.exists(f"/proc/{pid}/status")
