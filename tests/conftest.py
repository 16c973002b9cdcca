"""Shared pytest set-up. Fixtures live in one plugin module per area.

``--part lean`` / ``--part lean-core`` / ``--part rest`` split the suite in three for `scripts/test.sh`, which runs
them at once, each process with a Lean worker of its own where it needs one:

* ``lean``: the distributed tests first, then the tests that start processes with a Lean of their own beside the
  session's worker (the kill-and-resume tests), the pipeline's tests that use Lean (the loop through Dagster, the
  browser test), one after the other;
* ``lean-core``: the core library's tests on the session's worker (the checker, the judge, tracing, the data and
  eval tests with Lean), one after the other, with a session worker of their own;
* ``rest``: every other test, the tests that start a Lean of their own without the session's worker
  (``own_lean``) last.

Memory (a Lean process holds 3-8 GB) is shared by two `flock`s:

* the distributed tests (a broker, two Celery workers, up to three Lean processes) hold ``memory`` exclusively,
  every other test that starts Lean holds it shared: they wait for each other, tests without Lean never wait;
* a test marked ``own_lean`` holds ``extra-lean`` exclusively: at most one Lean beside the sessions' workers.

Under `scripts/test.sh` the ``lean`` part opens a gate (a file named by ``BURNQED_TEST_GATE``) when its distributed
tests are done, and the other parts wait for it before their first test that starts Lean: the distributed tests
take the ``memory`` lock first, not whichever part asks first.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
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
SESSION_FIXTURE = "lean_pool"
PARTS = ("lean", "lean-core", "rest")
GATE_ENV = "BURNQED_TEST_GATE"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--part", choices=("all", *PARTS), default="all",
                     help="run one part of the suite (tests/conftest.py: lean, lean-core, rest), or all (default)")


def starts_lean(item: pytest.Item) -> bool:
    """Whether the test starts Lean: marked ``lean``, ``distributed``, ``browser`` or ``own_lean``, or using a
    Lean fixture."""
    return (any(item.get_closest_marker(m) for m in (*LEAN_MARKERS, "own_lean"))
            or any(f in getattr(item, "fixturenames", ()) for f in LEAN_FIXTURES))


def in_lean_part(item: pytest.Item) -> bool:
    """Whether the test runs in ``--part lean``: it starts Lean and is not an ``own_lean`` test that leaves the
    session's worker alone (those run last in the other part)."""
    if not starts_lean(item):
        return False
    if item.get_closest_marker("distributed") or item.get_closest_marker("browser"):
        return True
    return not item.get_closest_marker("own_lean") or SESSION_FIXTURE in getattr(item, "fixturenames", ())


def part_of(item: pytest.Item) -> str:
    """The part a test runs in: ``rest`` outside `in_lean_part`; ``lean-core`` for a test of the core library
    (under ``tests/core/``) on the session's worker that starts no process with a Lean of its own; else ``lean``."""
    if not in_lean_part(item):
        return "rest"
    if item.nodeid.startswith("tests/core/") and not item.get_closest_marker("own_lean"):
        return "lean-core"
    return "lean"


def _order(item: pytest.Item) -> int:
    """The distributed tests first: each Celery worker starts a Lean process of its own, which fits only while
    the session's shared worker has not started yet. Then the tests that start a Lean beside the session's worker
    (so that the lean part's are done early), then the others; in the rest part, its ``own_lean`` tests last (they
    wait for the distributed tests, the others need not). A module's tests keep together (a stable sort, and
    ``own_lean`` marks whole modules where they use the session's worker)."""
    if item.get_closest_marker("distributed"):
        return 0
    if item.get_closest_marker("own_lean"):
        return 1 if in_lean_part(item) else 3
    return 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--part``, the other part's tests are deselected; then the order of `_order`."""
    part = config.getoption("--part")
    if part != "all":
        keep = [item for item in items if part_of(item) == part]
        dropped = [item for item in items if part_of(item) != part]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    items.sort(key=_order)
    if part == "lean" and not any(item.get_closest_marker("distributed") for item in items):
        _GATE.open()


class _Gate:
    """The file named by ``BURNQED_TEST_GATE`` (unset: no gate): the ``lean`` part creates it once its
    distributed tests are done; another part waits for it before its first test that starts Lean."""

    def __init__(self) -> None:
        self.passed = False

    @staticmethod
    def path() -> Path | None:
        value = os.environ.get(GATE_ENV, "")
        return Path(value) if value else None

    def open(self) -> None:
        if (path := self.path()) is not None:
            path.touch()

    def wait(self) -> None:
        path = self.path()
        while not self.passed and path is not None and not path.exists():
            time.sleep(0.5)
        self.passed = True


class _Turn:
    """One `flock` of the machine (``kind`` names its file), held shared or exclusively, changed only when the
    next test needs another mode."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.file: IO[str] | None = None
        self.exclusive = False

    def hold(self, exclusive: bool) -> None:
        if self.file is not None and self.exclusive == exclusive:
            return
        self.release()
        default = Path(tempfile.gettempdir()) / f"burnqed-tests-{self.kind}.lock"
        path = Path(os.environ.get(f"BURNQED_TEST_LOCK_{self.kind.upper().replace('-', '_')}", default))
        self.file = path.open("a")
        fcntl.flock(self.file, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        self.exclusive = exclusive

    def release(self) -> None:
        if self.file is not None:
            fcntl.flock(self.file, fcntl.LOCK_UN)
            self.file.close()
            self.file = None


_MEMORY, _EXTRA = _Turn("memory"), _Turn("extra-lean")
_GATE = _Gate()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The distributed tests hold ``memory`` exclusively from the first one's set-up to the last one's teardown
    (their module fixtures' Celery deployment included); another test that starts Lean holds it shared, and an
    ``own_lean`` test also holds ``extra-lean``; a test without Lean holds neither. A lock changes mode, or is let
    go, when the next test's needs differ (`_Turn.hold`)."""
    distributed = item.get_closest_marker("distributed") is not None
    own = item.get_closest_marker("own_lean") is not None
    lean_part = item.config.getoption("--part") == "lean"
    if starts_lean(item):
        if not lean_part:
            _GATE.wait()
        _MEMORY.hold(distributed)
    else:
        _MEMORY.release()
    if own:
        _EXTRA.hold(True)
    else:
        _EXTRA.release()
    yield
    if lean_part and distributed and (nextitem is None or nextitem.get_closest_marker("distributed") is None):
        _MEMORY.release()  # the distributed tests are done: the other parts' Lean tests may start
        _GATE.open()
    if nextitem is None:
        _MEMORY.release()
        _EXTRA.release()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The ``lean`` part opens the gate at its end whatever happened (a run stopped early, or with ``-x``)."""
    if session.config.getoption("--part") == "lean":
        _GATE.open()
