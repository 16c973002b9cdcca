"""Stage markers keyed by a fingerprint of inputs and settings, and the cross-iteration input helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.loop.inputs import LoopError, require
from burnqed_core.loop.layout import DONE, STARTED, BaseLayout
from burnqed_core.loop.markers import fingerprint_payload, input_digest, read_marker, run_stage
from burnqed_core.loop.spec import resolve
from burnqed_core.loop.stages import BY_NAME
from burnqed_core.records import StageResult


def _stage(out: Path, calls: list[str], tag: str) -> StageResult:
    calls.append(tag)
    out.mkdir(parents=True, exist_ok=True)
    (out / "payload.txt").write_text(tag)
    return StageResult(stage="demo", path=str(out), summary=f"made {tag}")


def test_same_fingerprint_skips_changed_fingerprint_recomputes(tmp_path: Path) -> None:
    out, calls = tmp_path / "s", []
    first = run_stage(out, "fp-a", lambda: _stage(out, calls, "a"))
    assert not first.skipped and first.fingerprint == "fp-a" and calls == ["a"]
    again = run_stage(out, "fp-a", lambda: _stage(out, calls, "never"))
    assert again.skipped and again.summary == "made a" and calls == ["a"]
    changed = run_stage(out, "fp-b", lambda: _stage(out, calls, "b"))
    assert not changed.skipped and calls == ["a", "b"]
    assert (out / "payload.txt").read_text() == "b" and read_marker(out).fingerprint == "fp-b"  # type: ignore[union-attr]


def test_partial_output_is_resumed_for_the_same_inputs_and_cleared_for_others(tmp_path: Path) -> None:
    out = tmp_path / "s"

    def crash() -> StageResult:
        (out / "checkpoint").write_text("half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        run_stage(out, "fp-a", crash)
    assert json.loads((out / STARTED).read_text())["fingerprint"] == "fp-a" and not (out / DONE).exists()
    seen: list[bool] = []
    run_stage(out, "fp-a", lambda: (seen.append((out / "checkpoint").exists()), _stage(out, [], "a"))[1])
    assert seen == [True]  # same inputs: the partial output is there to resume from
    with pytest.raises(RuntimeError):
        run_stage(out, "fp-b", crash)
    seen.clear()
    (out / "stale").write_text("from fp-b")
    run_stage(out, "fp-c", lambda: (seen.append((out / "stale").exists()), _stage(out, [], "c"))[1])
    assert seen == [False]  # other inputs: cleared first


def test_fingerprint_follows_settings_inputs_and_upstream_markers(tmp_path: Path) -> None:
    up = tmp_path / "up"
    run_stage(up, "x", lambda: _stage(up, [], "u"))
    settings = {"training.shard_size": "2GB"}
    base = fingerprint_payload("merged_model", settings, {"adapter": up}, {"n": 0})
    assert fingerprint_payload("merged_model", settings, {"adapter": up}, {"n": 0}) == base
    assert fingerprint_payload("merged_model", settings, {"adapter": up}, {"n": 1}) != base
    assert fingerprint_payload("merged_model", {"training.shard_size": "1GB"}, {"adapter": up}, {"n": 0}) != base
    assert fingerprint_payload("lora_adapter", settings, {"adapter": up}, {"n": 0}) != base
    run_stage(up, "y", lambda: _stage(up, [], "u2"))  # the upstream stage was recomputed
    assert fingerprint_payload("merged_model", settings, {"adapter": up}, {"n": 0}) != base
    f = tmp_path / "corpus.jsonl"
    f.write_text("a")
    d1 = input_digest(f)
    f.write_text("b")
    assert input_digest(f) != d1 and input_digest("deepseek-ai/x").startswith("text:")


def test_missing_partitions_are_named(tmp_path: Path) -> None:
    prof = load_profile("tiny", overrides={"paths.work_dir": str(tmp_path)})
    layout = BaseLayout(root=tmp_path)
    tactic_pairs = BY_NAME["tactic_pairs"]
    for d in (layout.stage("base_tactic_pairs"), layout.stage("base_model"), layout.stage("premise_index")):
        run_stage(d, "f", lambda d=d: _stage(d, [], "base"))
    with pytest.raises(LoopError, match=r"tactic_pairs\[2\] needs trajectories\[0\].*materialise trajectories\[0\]"):
        resolve(tactic_pairs, BY_NAME, prof, layout, 2)
    t0 = layout.iteration(0).stage("trajectories")
    run_stage(t0, "f", lambda: _stage(t0, [], "t"))
    with pytest.raises(LoopError, match=r"trajectories\[1\]"):
        resolve(tactic_pairs, BY_NAME, prof, layout, 2)
    assert resolve(tactic_pairs, BY_NAME, prof, layout, 1).used.earlier == {"trajectories": [0]}
    it1 = layout.iteration(1)
    for d in (it1.stage("merged_model"), it1.stage("ebm"), it1.stage("premise_reranker"), it1.stage("tactic_pairs"),
              layout.stage("automation_baselines")):
        run_stage(d, "f", lambda d=d: _stage(d, [], "x"))
    with pytest.raises(LoopError, match=r"eval_report\[1\] needs eval_report\[0\]"):
        resolve(BY_NAME["eval_report"], BY_NAME, prof, layout, 1)
    with pytest.raises(LoopError, match="base_model, which is not materialised"):
        require(tmp_path / "nothing", "base_model", None, "lora_adapter[0]")
