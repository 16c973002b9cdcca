"""Shared pytest set-up. Fixtures live in one plugin module per area."""

pytest_plugins = [
    "tests.fixtures_lean",
    "tests.fixtures_models",
]


def pytest_collection_modifyitems(items: list) -> None:
    """The distributed tests run first: each Celery worker starts a Lean process of its own (5-6.5 GB), which
    fits beside the test process only while the session's shared Lean worker has not started yet."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("distributed") else 1)
