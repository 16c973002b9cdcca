"""Shared pytest set-up. Fixtures live in one plugin module per area.

``--part lean`` / ``--part own`` / ``--part rest`` split the suite in three for `scripts/test.sh`, which runs
the three at once: the tests that use the session's shared Lean worker, one after the other (``lean``); the
tests that start Lean processes of their own and never use the session's worker, the distributed tests first
(``own``); every test that starts no Lean (``rest``; the browser tests too: their pipeline runs without Lean).
No lock between them: with the compiled checker a Lean process holds 1.2-1.5 GB and a Celery worker with its
Lean ~2.3 GB, and the three parts at once used 7.7 GB of the 24 at most (2026-12-07, docs/testing.md).
"""

from __future__ import annotations

import pytest

pytest_plugins = [
    "tests.fixtures_lean",
    "tests.fixtures_models",
]

LEAN_MARKERS = ("lean", "distributed")
LEAN_FIXTURES = ("lean_config", "lean_pool")
SESSION_FIXTURE = "lean_pool"
PARTS = ("lean", "own", "rest")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--part", choices=("all", *PARTS), default="all",
                     help="run only the tests on the session's Lean worker (lean), those with Lean processes of "
                          "their own (own), those without Lean (rest), or all (default)")


def starts_lean(item: pytest.Item) -> bool:
    """Whether the test starts Lean: marked ``lean``, ``distributed`` or ``own_lean``, or using a Lean fixture."""
    return (any(item.get_closest_marker(m) for m in (*LEAN_MARKERS, "own_lean"))
            or any(f in getattr(item, "fixturenames", ()) for f in LEAN_FIXTURES))


def part_of(item: pytest.Item) -> str:
    """The part a test runs in: ``own`` for the distributed tests and the ``own_lean`` tests that leave the
    session's worker alone, ``lean`` for the other tests that start Lean, ``rest`` for the tests without Lean."""
    if item.get_closest_marker("distributed"):
        return "own"
    if not starts_lean(item):
        return "rest"
    if item.get_closest_marker("own_lean") and SESSION_FIXTURE not in getattr(item, "fixturenames", ()):
        return "own"
    return "lean"


def _order(item: pytest.Item) -> int:
    """The distributed tests first, then the tests with a Lean of their own (the longest of their parts: both
    start early), then the others. A module's tests keep together (a stable sort, and ``own_lean`` marks whole
    modules where they use the session's worker)."""
    if item.get_closest_marker("distributed"):
        return 0
    if item.get_closest_marker("own_lean"):
        return 1
    return 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--part``, the other parts' tests are deselected; then the order of `_order`."""
    part = config.getoption("--part")
    if part != "all":
        keep = [item for item in items if part_of(item) == part]
        dropped = [item for item in items if part_of(item) != part]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    items.sort(key=_order)
