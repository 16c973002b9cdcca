"""The sets an eval reports: data.benchmark, then eval.also (sampled when asked), names unique across sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.errors import DataError
from burnqed_core.eval.steps import eval_set_specs, set_out, set_slug
from burnqed_core.loop.inputs import eval_theorems
from burnqed_core.record_io import write_jsonl
from burnqed_core.records import Theorem


def _set(path: Path, names: list[str], family: str = "f") -> str:
    write_jsonl([Theorem(name=n, statement=f": {i} + 0 = {i}", family=family) for i, n in enumerate(names)], path)
    return str(path)


def test_eval_sets_in_order_sampled_and_placed(tmp_path: Path) -> None:
    main = _set(tmp_path / "main.jsonl", ["m1", "m2", "m3"])
    other = _set(tmp_path / "other.jsonl", [f"o{i}" for i in range(10)])
    prof = load_profile("tiny", environ={}, overrides={"data.benchmark": main, "eval.also": [other, main]})
    assert eval_set_specs(prof) == [main, other]  # the repeat dropped
    sets = eval_theorems(prof)
    assert list(sets) == [main, other] and [len(v) for v in sets.values()] == [3, 10]
    prof = prof.model_copy(update={"eval": prof.eval.model_copy(update={"also_sample": 4})})
    sampled = eval_theorems(prof)
    assert len(sampled[main]) == 3 and len(sampled[other]) == 4  # only eval.also is sampled
    assert sampled == eval_theorems(prof)
    out = tmp_path / "eval"
    assert set_out(out, prof, main) == out and set_out(out, prof, other) == out / "sets" / set_slug(other)
    assert set_slug("bundled:handwritten") == "bundled_handwritten"


def test_a_theorem_in_two_eval_sets_is_an_error(tmp_path: Path) -> None:
    main = _set(tmp_path / "main.jsonl", ["m1", "shared"])
    other = _set(tmp_path / "other.jsonl", ["shared", "o1"])
    prof = load_profile("tiny", environ={}, overrides={"data.benchmark": main, "eval.also": [other]})
    with pytest.raises(DataError, match=r"'shared' is in two eval sets"):
        eval_theorems(prof)
