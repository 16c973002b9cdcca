"""Shared pytest set-up. Fixtures live in one plugin module per area.

``--part lean`` / ``--part rest`` split the suite in two for `scripts/test.sh`, which runs both parts at once: the
tests that start Lean (the session's shared worker, a pool of their own, or processes that start one; 5-8 GB
each) in one process, one after the other in the serial order, and every other test beside them.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

pytest_plugins = [
    "tests.fixtures_lean",
    "tests.fixtures_models",
]

LEAN_MARKERS = ("lean", "distributed", "browser")
LEAN_FIXTURES = ("lean_config", "lean_pool")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--part", choices=("all", "lean", "rest"), default="all",
                     help="run only the tests that start Lean (lean), only the others (rest), or all (default)")


def starts_lean(item: pytest.Item) -> bool:
    """Whether the test starts Lean: marked ``lean``, ``distributed`` or ``browser``, or using a Lean fixture."""
    return (any(item.get_closest_marker(m) for m in LEAN_MARKERS)
            or any(f in getattr(item, "fixturenames", ()) for f in LEAN_FIXTURES))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The distributed tests run first: each Celery worker starts a Lean process of its own (5-6.5 GB), which
    fits beside the test process only while the session's shared Lean worker has not started yet. With
    ``--part``, the other part's tests are deselected."""
    part = config.getoption("--part")
    if part != "all":
        keep = [item for item in items if starts_lean(item) == (part == "lean")]
        dropped = [item for item in items if starts_lean(item) != (part == "lean")]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    items.sort(key=lambda item: 0 if item.get_closest_marker("distributed") else 1)


class _MemoryTurn:
    """The distributed tests hold three Lean processes at once (two Celery workers and the in-process reference
    run): most of a 24 GB box. While they run, no test of another pytest process on the machine (the other part
    of `scripts/test.sh`) may run: they hold an exclusive `flock` from the first distributed test's set-up to the
    last one's teardown (their module fixtures' Celery deployment included), every other test a shared one."""

    def __init__(self) -> None:
        self.file: IO[str] | None = None
        self.exclusive = False

    def hold(self, exclusive: bool) -> None:
        if self.file is not None and self.exclusive == exclusive:
            return
        self.release()
        path = Path(os.environ.get("BURNQED_TEST_LOCK", Path(tempfile.gettempdir()) / "burnqed-tests-memory.lock"))
        self.file = path.open("a")
        fcntl.flock(self.file, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        self.exclusive = exclusive

    def release(self) -> None:
        if self.file is not None:
            fcntl.flock(self.file, fcntl.LOCK_UN)
            self.file.close()
            self.file = None


_TURN = _MemoryTurn()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    exclusive = item.get_closest_marker("distributed") is not None
    _TURN.hold(exclusive)
    yield
    if not exclusive or nextitem is None or nextitem.get_closest_marker("distributed") is None:
        _TURN.release()
