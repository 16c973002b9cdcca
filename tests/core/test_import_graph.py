"""Modules that must not import each other (issue 16: untied cycles).

Read statically: every ``import`` in the file counts, at top level, inside a
function or under ``if TYPE_CHECKING``, so a lazy or type-only import that
only hides a cycle counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(module: str) -> set[str]:
    path = ROOT / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


@pytest.mark.parametrize(("a", "b"), [
    ("burnqed_core.policy.launcher", "burnqed_core.policy.sglang"),
    ("burnqed_core.search.runner", "burnqed_core.search.session"),
])
def test_no_import_cycle(a: str, b: str) -> None:
    assert not (b in imported_modules(a) and a in imported_modules(b)), f"{a} and {b} import each other"


def test_the_scan_sees_lazy_imports() -> None:
    # search/job.py imports the policy factory inside search_job: the scan must see function-level imports
    assert "burnqed_core.policy.factory" in imported_modules("burnqed_core.search.job")
