"""Eval baselines shipped beside a theorem set: found by key (theorems,
tactic lists, Lean version), never used for another benchmark or Lean, and the
bundled benchmark's file is current."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import BUNDLED_DIR, load_theorems, set_dir
from burnqed_core.errors import DataError
from burnqed_core.eval.baselines.measure import baseline_key, measure_baselines, write_shipped
from burnqed_core.eval.baselines.records import Baselines, StructuralBaseline
from burnqed_core.lean.install import lean_identity
from burnqed_core.lean.types import GoalState, TacticResult
from burnqed_core.records import Theorem

THMS = [Theorem(name="a", statement="(n : Nat) : n + 0 = n"), Theorem(name="b", statement="(n : Nat) : n = n + 1")]


class NoLean:
    """Stands for a Lean that must not be asked: the baselines must come from a file."""

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        raise AssertionError("measured although a matching file was there")

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        raise AssertionError("measured although a matching file was there")


@pytest.mark.parametrize("spec", ["bundled:benchmark", "bundled:dev", "bundled:test"])
def test_bundled_benchmark_ships_current_baselines(spec: str) -> None:
    files = {f.name: Baselines.model_validate_json(f.read_text(encoding="utf-8"))
             for f in sorted(BUNDLED_DIR.glob("baselines-*.json"))}
    assert len(files) == 3, sorted(files)  # one per set of benchmark.jsonl: all of it, dev, test
    bench = load_theorems(spec)
    # an edited benchmark, tactic list or Lean changes the key: regenerate with
    # `burnqed lean baseline <spec> --eval-baselines`
    # measured with the tiny profile's tactic timeout: another timeout is another key
    timeout = load_profile("tiny", environ={}).lean.tactic_timeout_s
    key = baseline_key(bench, lean_identity(), timeout)
    (b,) = [b for b in files.values() if b.key == key]
    assert baseline_key(bench, lean_identity(), timeout * 2) != b.key
    assert set(b.single) == set(b.defaware) == {t.name for t in bench} and not b.infra
    hard = [n for n in b.single if b.hard(n)]
    assert 0 < len(hard) < len(bench)


async def test_shipped_file_is_used_by_key_only(tmp_path: Path) -> None:
    b = Baselines(key=baseline_key(THMS, "lean-x"), single={"a": "rfl", "b": None}, defaware={"a": None, "b": None})
    path = write_shipped(b, tmp_path)
    assert path.parent == tmp_path and len(list(tmp_path.glob("baselines-*.json"))) == 1
    got = await measure_baselines(NoLean(), THMS, tmp_path / "cache", lean_version="lean-x",  # type: ignore[arg-type]
                                  shipped=tmp_path)
    assert got == b
    # another Lean, or another benchmark: the file does not apply (Lean is asked)
    with pytest.raises(AssertionError, match="measured"):
        await measure_baselines(NoLean(), THMS, None, lean_version="lean-y", shipped=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="measured"):
        await measure_baselines(NoLean(), THMS[:1], None, lean_version="lean-x", shipped=tmp_path)  # type: ignore[arg-type]
    # a rewrite replaces the older file of the set; an incomplete measurement is never shipped
    write_shipped(b.model_copy(update={"key": baseline_key(THMS[:1], "lean-x")}), tmp_path)
    assert len(list(tmp_path.glob("baselines-*.json"))) == 1
    # another set in the same directory (bundled:dev beside bundled:test) keeps its file
    other = Baselines(key=baseline_key(THMS[:1], "lean-z"), single={"c": None}, defaware={"c": None})
    write_shipped(other, tmp_path)
    assert len(list(tmp_path.glob("baselines-*.json"))) == 2
    with pytest.raises(DataError, match="unmeasured"):
        write_shipped(b.model_copy(update={"infra": ["a"]}), tmp_path)


def test_set_dir_is_where_the_set_lives(tmp_path: Path) -> None:
    assert set_dir("bundled:benchmark") == BUNDLED_DIR
    f = tmp_path / "mine.jsonl"
    f.write_text("")
    assert set_dir(f) == tmp_path and set_dir(tmp_path) == tmp_path


def test_baseline_c_travels_with_the_baselines_and_old_files_load(tmp_path: Path) -> None:
    old = '{"key": "k", "single": {"a": "rfl", "b": null}, "defaware": {"a": null, "b": null}, "infra": []}'
    b = Baselines.model_validate_json(old)  # a file written before baseline (c)
    assert b.structural is None and b.hard("b")
    c = StructuralBaseline(key="c", budget=24, nodes={"a": 3, "b": None})
    with_c = b.model_copy(update={"structural": c})
    assert Baselines.model_validate_json(with_c.model_dump_json()) == with_c
    assert with_c.structural is not None and with_c.structural.proved("a") and not with_c.structural.proved("b")
    with pytest.raises(ValueError, match="extra"):
        Baselines.model_validate_json(old[:-1] + ', "other": 1}')
    # the shipped (a)/(b) file never holds (c): that has a file and a key of its own
    path = write_shipped(with_c.model_copy(update={"key": baseline_key(THMS, "lean-x")}), tmp_path)
    assert Baselines.model_validate_json(path.read_text(encoding="utf-8")).structural is None
