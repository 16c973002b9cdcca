"""The tests mirror the package tree: ``tests/core/<package>/test_<module>[_<aspect>].py`` tests
``burnqed_core/<package>/<module>.py``, so a module's tests are found by its path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests" / "core"
PACKAGE = ROOT / "burnqed_core"
WHOLE_PACKAGE = {"test_function_size.py", "test_import_graph.py", "test_no_dagster_in_core.py", "test_tree.py"}


def _module_for(test: Path) -> Path | None:
    where = PACKAGE / test.parent.relative_to(TESTS)
    parts = test.stem.removeprefix("test_").split("_")
    for k in range(len(parts), 0, -1):  # the longest prefix naming a module (or a folder, e.g. data/sets)
        name = "_".join(parts[:k])
        for candidate in (where / f"{name}.py", where / name):
            if candidate.exists():
                return candidate
    return None


def test_every_test_file_names_its_module() -> None:
    tests = [p for p in TESTS.rglob("test_*.py") if p.name not in WHOLE_PACKAGE or p.parent != TESTS]
    assert len(tests) > 50
    orphans = [str(p.relative_to(ROOT)) for p in tests if _module_for(p) is None]
    assert orphans == [], "tests that do not mirror a module of burnqed_core: " + ", ".join(orphans)


def test_the_check_would_see_a_misplaced_test(tmp_path: Path) -> None:
    assert _module_for(TESTS / "lean" / "test_sandbox.py") == PACKAGE / "lean" / "sandbox.py"
    assert _module_for(TESTS / "lean" / "test_pool_faults.py") == PACKAGE / "lean" / "pool.py"
    assert _module_for(TESTS / "lean" / "test_training.py") is None
