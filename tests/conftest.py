"""Shared pytest set-up. Fixtures live in one plugin module per area.

``--part lean`` / ``--part rest`` split the suite in two for `scripts/test.sh`, which runs both parts at once: the
tests that use the session's shared Lean worker (and the distributed tests) in one process, one after the
other, and every other test beside them (the browser test too: its pipeline runs without Lean), the tests that
start a Lean of their own without the session's worker (``own_lean``) last. Memory (a Lean process held 4-8 GB
when these locks were made; 1.2-1.5 GB since the checker is compiled, a Celery worker with its Lean ~2.3 GB) is
shared by two `flock`s:

* the distributed tests (a broker, two Celery workers, up to three Lean processes) hold ``memory`` exclusively,
  every other test that starts Lean holds it shared: they wait for each other, tests without Lean never wait;
* a test marked ``own_lean`` holds ``extra-lean`` exclusively: at most one Lean beside the session's worker.
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

LEAN_MARKERS = ("lean", "distributed")
LEAN_FIXTURES = ("lean_config", "lean_pool")
SESSION_FIXTURE = "lean_pool"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--part", choices=("all", "lean", "rest"), default="all",
                     help="run only the tests that start Lean (lean), only the others (rest), or all (default)")


def starts_lean(item: pytest.Item) -> bool:
    """Whether the test starts Lean: marked ``lean``, ``distributed`` or ``own_lean``, or using a Lean fixture."""
    return (any(item.get_closest_marker(m) for m in (*LEAN_MARKERS, "own_lean"))
            or any(f in getattr(item, "fixturenames", ()) for f in LEAN_FIXTURES))


def in_lean_part(item: pytest.Item) -> bool:
    """Whether the test runs in ``--part lean``: it starts Lean and is not an ``own_lean`` test that leaves the
    session's worker alone (those run last in the other part)."""
    if not starts_lean(item):
        return False
    if item.get_closest_marker("distributed"):
        return True
    return not item.get_closest_marker("own_lean") or SESSION_FIXTURE in getattr(item, "fixturenames", ())


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
        keep = [item for item in items if in_lean_part(item) == (part == "lean")]
        dropped = [item for item in items if in_lean_part(item) != (part == "lean")]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    items.sort(key=_order)


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The distributed tests hold ``memory`` exclusively from the first one's set-up to the last one's teardown
    (their module fixtures' Celery deployment included); another test that starts Lean holds it shared, and an
    ``own_lean`` test also holds ``extra-lean``; a test without Lean holds neither. A lock changes mode, or is let
    go, when the next test's needs differ (`_Turn.hold`)."""
    distributed = item.get_closest_marker("distributed") is not None
    own = item.get_closest_marker("own_lean") is not None
    if starts_lean(item):
        _MEMORY.hold(distributed)
    else:
        _MEMORY.release()
    if own:
        _EXTRA.hold(True)
    else:
        _EXTRA.release()
    yield
    if nextitem is None:
        _MEMORY.release()
        _EXTRA.release()
