"""`scripts/test.sh` runs the suite as three pytest processes at once (`--part lean`, `--part own`, `--part rest`;
tests/conftest.py): together they must run every test exactly once; every test that uses the session's Lean
worker is in the `lean` part, the distributed tests and the `own_lean` tests that leave the session's worker
alone are in the `own` part (the distributed ones first), the tests without Lean in the `rest` part."""

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


def test_the_three_parts_split_the_suite_and_lean_tests_are_in_one() -> None:
    everything, lean, own, rest, marked_ids = _collect([], ["--part", "lean"], ["--part", "own"], ["--part", "rest"],
                                                       ["-m", "lean and not own_lean and not distributed"])
    assert sorted(lean + own + rest) == sorted(everything)
    assert not set(lean) & set(own) and not set(lean) & set(rest) and not set(own) & set(rest)
    marked = set(marked_ids)
    assert marked and marked <= set(lean)
    assert any("test_prompt.py" in t for t in rest) and not any("test_prompt.py" in t for t in lean + own)
    # the browser test's pipeline runs without Lean: beside the Lean tests, not after them
    assert any("test_ui_browser.py" in t for t in rest)
    # the distributed tests first in the own part, then the tests with a Lean of their own that leave the
    # session's worker alone; test_fanout.py uses the session's worker beside a Lean of its own: in the lean part,
    # first
    dist = [i for i, t in enumerate(own) if "test_distributed.py" in t]
    assert dist and dist == list(range(len(dist)))
    faults = [i for i, t in enumerate(own) if "test_pool_faults.py" in t]
    assert faults and faults[0] >= len(dist)
    assert not any("test_pool_faults.py" in t or "test_distributed.py" in t for t in lean + rest)
    fanout = [i for i, t in enumerate(lean) if "test_fanout.py" in t]
    assert fanout and fanout == list(range(len(fanout)))
