"""Shared pytest set-up. Fixtures live in one plugin module per area."""

import pytest

pytest_plugins = [
    "tests.fixtures_lean",
    "tests.fixtures_models",
]

# Tests that start Lean (the session's shared worker, a pool of their own, or processes that start one): they
# run in one process, one after the other (`xdist_group`), so that `scripts/test.sh`'s two pytest-xdist
# workers never hold more Lean processes (5-8 GB each) than a serial run does; every other test runs beside them
# in the second worker.
LEAN_MARKERS = ("lean", "distributed", "browser")
LEAN_FIXTURES = ("lean_config", "lean_pool")


def starts_lean(item: pytest.Item) -> bool:
    return (any(item.get_closest_marker(m) for m in LEAN_MARKERS)
            or any(f in getattr(item, "fixturenames", ()) for f in LEAN_FIXTURES))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The distributed tests run first: each Celery worker starts a Lean process of its own (5-6.5 GB), which
    fits beside the test process only while the session's shared Lean worker has not started yet. Every test
    that starts Lean joins the group ``lean`` (one xdist worker, in this order)."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("distributed") else 1)
    for item in items:
        if starts_lean(item):
            item.add_marker(pytest.mark.xdist_group("lean"))
