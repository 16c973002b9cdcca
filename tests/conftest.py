"""Shared pytest set-up. Fixtures live in one plugin module per area."""

pytest_plugins = [
    "tests.fixtures_lean",
    "tests.fixtures_models",
]
