"""burnqed_core never imports Dagster, directly or through burnqed_pipeline: every module of it imports in a
process where `dagster` cannot be imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import importlib, pkgutil, sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "dagster" or name.startswith(("dagster.", "dagster_", "burnqed_pipeline")):
            raise ImportError(f"{name} is blocked: burnqed_core must not import it")
        return None

sys.meta_path.insert(0, Block())
import burnqed_core
names = [m.name for m in pkgutil.walk_packages(burnqed_core.__path__, "burnqed_core.")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_every_core_module_imports_without_dagster() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.strip()) > 40  # it really walked the package


def test_the_blocker_catches_an_import_of_dagster() -> None:
    script = SCRIPT.replace("import burnqed_core\n", "import burnqed_core\nimport dagster\n", 1)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "blocked" in proc.stderr
