"""The checker's trusted preambles come from the package's files alone (no state a loaded set adds to)."""

from __future__ import annotations

import json
import subprocess
import sys

from burnqed_core.data.theorems.load import bundled_lean_preamble_digests, load_theorems
from burnqed_core.lean.trust import PREAMBLES_FILE


def test_the_shipped_lean_preamble_digests_are_those_of_the_bundled_files() -> None:
    assert json.loads(PREAMBLES_FILE.read_text(encoding="utf-8")) == bundled_lean_preamble_digests(), (
        "run: python -c \"from burnqed_core.data.theorems.load import write_lean_preamble_digests as w; w()\"")


def test_a_bundled_lean_preamble_is_trusted_in_a_process_that_never_loaded_its_set() -> None:
    pre = next(t.preamble for t in load_theorems("bundled:handwritten") if t.preamble.strip())
    code = ("import sys; from burnqed_core.lean.trust import is_trusted; p = sys.stdin.read(); "
            "print(is_trusted(p), is_trusted(p + ' '), 'burnqed_core.data.theorems.load' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], input=pre, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "False", "False"], out.stderr
