"""`scripts/test.sh` runs the suite as two pytest processes at once (`--part lean`, `--part rest`; tests/conftest.py):
together they must run every test exactly once; every test that uses the session's Lean worker is in the `lean`
part, and the `own_lean` tests that do not run last in the `rest` part."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["tests/core/lean/test_pool_faults.py", "tests/core/search/test_engine_lean.py",
         "tests/pipeline/test_fanout.py", "tests/core/data/pairs/test_prompt.py", "tests/pipeline/test_distributed.py",
         "tests/pipeline/test_ui_browser.py"]
MARK = "<<<collect rc="
# One fresh process for all the collections (each its own `pytest.main`, a new configuration), so that the
# imports are paid once; without assertion rewriting, which collects the same tests.
SCRIPT = f"""
import json, sys
import pytest
for args in json.loads(sys.argv[1]):
    rc = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--assert=plain", *args])
    print("{MARK}%d>>>" % int(rc), flush=True)
"""


def _collect(*arg_lists: list[str]) -> list[list[str]]:
    """The test ids `pytest --collect-only` gives over `PATHS` with each of ``arg_lists``."""
    out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps([[*args, *PATHS] for args in arg_lists])],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    runs = out.stdout.split(MARK)
    assert len(runs) == len(arg_lists) + 1, out.stdout[-2000:] + out.stderr[-2000:]
    ids: list[list[str]] = []
    for k, (run, after) in enumerate(itertools.pairwise(runs)):
        assert after.startswith("0>>>"), (arg_lists[k], run[-2000:], out.stderr[-2000:])
        ids.append([line for line in run.splitlines() if "::" in line])
    return ids


def test_the_two_parts_split_the_suite_and_lean_tests_are_in_one() -> None:
    everything, lean, rest, marked_ids = _collect([], ["--part", "lean"], ["--part", "rest"],
                                                  ["-m", "(lean or distributed) and not own_lean"])
    assert sorted(lean + rest) == sorted(everything) and not set(lean) & set(rest)
    marked = set(marked_ids)
    assert marked and marked <= set(lean)
    assert any("test_prompt.py" in t for t in rest) and not any("test_prompt.py" in t for t in lean)
    # the browser test's pipeline runs without Lean: beside the Lean tests, not after them
    assert any("test_ui_browser.py" in t for t in rest) and not any("test_ui_browser.py" in t for t in lean)
    # the distributed tests run first in their part (before the session's shared Lean worker starts), then the
    # tests that start a Lean beside the session's worker (test_fanout.py uses it: it stays in the lean part)
    first_other = next(i for i, t in enumerate(lean) if "test_distributed.py" not in t)
    assert all("test_distributed.py" not in t for t in lean[first_other:])
    fanout = [i for i, t in enumerate(lean) if "test_fanout.py" in t]
    assert fanout and fanout == list(range(first_other, first_other + len(fanout)))
    # a test with a Lean of its own and without the session's worker: in the rest part, after every other test
    faults = [i for i, t in enumerate(rest) if "test_pool_faults.py" in t]
    assert faults and faults == list(range(len(rest) - len(faults), len(rest)))
    assert not any("test_pool_faults.py" in t for t in lean)
