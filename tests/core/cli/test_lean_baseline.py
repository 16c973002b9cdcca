"""`burnqed lean baseline --structural`: baseline (c) measured with the given profile and written beside the (one)
theorem set, where the eval finds it by key. Lean and the search are stood in for: the wiring is tested here,
the search itself in tests/core/eval/baselines/test_structural.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.config import Profile
from burnqed_core.eval.baselines.records import StructuralBaseline
from burnqed_core.eval.baselines.rounds import BaselineReport
from burnqed_core.eval.baselines.structural import read_cached, structural_key
from burnqed_core.records import Theorem

SET = '{"name": "twirl_eq", "statement": "(n : Nat) : twirl n = 2 * n", ' \
      '"preamble": "def twirl : Nat → Nat\\n  | 0 => 0\\n  | n + 1 => twirl n + 2"}\n' \
      '{"name": "succ_ne", "statement": "(n : Nat) : n + 1 = n"}\n'


class FakePool:
    lean_version = "lean-fake"

    def __init__(self, config: object) -> None:
        self.config = config

    async def __aenter__(self) -> FakePool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def test_structural_writes_the_shipped_file_beside_the_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    async def measure(profile: Profile, env: object, theorems: Sequence[Theorem], *, cache_dir: Path | None,
                      shipped: Path | None, lean_version: str, progress: bool = False) -> StructuralBaseline:
        seen.update(profile=profile, cache_dir=cache_dir, shipped=shipped, lean_version=lean_version,
                    names=[t.name for t in theorems])
        key = structural_key(theorems, profile, lean_version)
        return StructuralBaseline(key=key, budget=max(profile.eval.budgets), nodes={"twirl_eq": 3, "succ_ne": None})

    async def single(env: object, theorems: Sequence[Theorem], progress: bool = False) -> tuple[
            dict[str, str | None], BaselineReport]:
        return dict.fromkeys(t.name for t in theorems), BaselineReport(theorems=len(theorems), hard=len(theorems))

    monkeypatch.setattr("burnqed_core.lean.pool.LeanPool", FakePool)
    monkeypatch.setattr("burnqed_core.eval.baselines.structural.measure_structural", measure)
    monkeypatch.setattr("burnqed_core.eval.baselines.single.automation_baseline", single)
    theorem_set = tmp_path / "set" / "mine.jsonl"
    theorem_set.parent.mkdir()
    theorem_set.write_text(SET, encoding="utf-8")
    res = CliRunner().invoke(app, ["lean", "baseline", str(theorem_set), "--structural", "--profile", "tiny"])
    assert res.exit_code == 0, res.output
    assert "baseline (c): proved 1/2 at 24 nodes" in res.output
    # measured with the profile given, on this set, never from a cache; written where the eval looks
    prof = seen["profile"]
    assert prof.data.benchmark == str(theorem_set) and seen["cache_dir"] is None and seen["shipped"] is None
    files = list(theorem_set.parent.glob("structural-*.json"))
    assert len(files) == 1 and f"wrote {files[0]}" in res.output.replace("\n", "")
    from burnqed_core.data.theorems.load import load_theorems

    key = structural_key(load_theorems(str(theorem_set)), prof, seen["lean_version"])
    got = read_cached(theorem_set.parent, key)
    assert got is not None and got.nodes == {"twirl_eq": 3, "succ_ne": None}
    # --sample: the fixed sample eval.also_sample evaluates, measured and written under its own key
    res = CliRunner().invoke(app, ["lean", "baseline", str(theorem_set), "--structural", "--sample", "1"])
    assert res.exit_code == 0, res.output
    from burnqed_core.data.theorems.sampling import stratified_sample

    assert seen["names"] == [t.name for t in stratified_sample(load_theorems(str(theorem_set)), 1)]


def test_structural_needs_exactly_one_set() -> None:
    proc = subprocess.run([sys.executable, "-c", "from burnqed_core.cli import main; main()", "lean", "baseline",
                           "bundled:benchmark", "bundled:corpus", "--structural"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "--structural writes beside ONE theorem set" in proc.stderr, proc.stderr
    assert "--structural" in CliRunner().invoke(app, ["lean", "baseline", "--help"]).output
