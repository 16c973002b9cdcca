"""The suite collects on a base install (`pip install 'burnqed[dev]'`, no ``deploy``, ``gpu`` or ``trace`` extra):
no test module imports an optional extra at its top; the tests that need one skip (`pytest.importorskip`,
``skipif``). Checked by collecting every test in a process where importing an extra's module fails, as it does
where the extra is not installed."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the top-level modules of each optional extra's packages (and what they pull in) that a base install lacks
EXTRA_MODULES = {"deploy": ("dagster_k8s", "dagster_celery", "celery", "kombu", "redis"), "gpu": ("sglang",),
                 "trace": ("lean_dojo",)}

BLOCK = '''
import importlib.abc, sys

class NoExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NoExtras())
import pytest
# --assert=plain: what imports is the same without assertion rewriting, which costs a third of the collection
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--assert=plain", "tests"]))
'''


def test_every_optional_extra_is_covered() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras) - {"dev"} == set(EXTRA_MODULES)


@pytest.mark.slow
def test_the_suite_collects_without_the_optional_extras() -> None:
    blocked = sorted(m for mods in EXTRA_MODULES.values() for m in mods)
    out = subprocess.run([sys.executable, "-c", BLOCK.format(blocked=tuple(blocked))], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "error" not in out.stdout.splitlines()[-1].lower()
    assert sum("::" in line for line in out.stdout.splitlines()) > 1000
