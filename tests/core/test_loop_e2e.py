"""End to end: iterations 0 and 1 of the tiny loop on a small slice of the
bundled sets, with the real embedded Lean, a real tiny model trained here,
real Parquet outputs; then a re-run that skips every finished stage."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from burnqed_core.config import Profile, load_profile
from burnqed_core.data.theorems import automation_map, load_theorems
from burnqed_core.eval.report import read_summary
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.loop.runner import LoopError, run_loop
from burnqed_core.record_io import write_jsonl
from burnqed_core.search.trajectories import read_trajectories

pytestmark = [pytest.mark.lean, pytest.mark.slow]


def _slice(spec: str, per_family: int, out: Path) -> Path:
    """The first theorems of each family of a bundled set, with the matching
    part of its automation map beside them."""
    by_family = defaultdict(list)
    for t in load_theorems(spec):
        by_family[t.family].append(t)
    picked = [t for fam in sorted(by_family) for t in by_family[fam][:per_family]]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(picked, out)
    auto = automation_map(spec)
    if auto is not None:
        (out.parent / "automation.json").write_text(json.dumps({t.name: auto.get(t.name) for t in picked
                                                                if t.name in auto}, indent=1, sort_keys=True))
    return out


def _profile(tmp: Path) -> Profile:
    corpus = _slice("bundled:corpus", 2, tmp / "corpus" / "corpus.jsonl")
    bench = _slice("bundled:benchmark", 1, tmp / "bench" / "benchmark.jsonl")
    return load_profile("tiny", overrides={
        "paths.work_dir": str(tmp / "work"),
        "data.corpus": str(corpus), "data.benchmark": str(bench), "data.search_theorems": 6,
        "data.base_subsample": 200,
        "training.tiny_model.hidden_size": 64, "training.tiny_model.intermediate_size": 128,
        "training.tiny_model.num_layers": 2, "training.tiny_model.vocab_size": 512,
        "training.tiny_model.pretrain_steps": 40, "training.tiny_model.pretrain_batch_size": 16,
        "training.max_steps": 12, "training.max_steps_later": 6, "training.eval_every": 6,
        "training.save_every": 6, "training.batch_size": 8, "training.lora.r": 4,
        "search.max_nodes": 6, "search.collect_candidates": 4, "search.concurrency": 6,
        "eval.budgets": [2, 6], "eval.num_candidates": 4, "eval.max_theorems": 8,
    })


async def test_iterations_0_and_1_then_resume(tmp_path: Path, lean_pool: object) -> None:
    profile = _profile(tmp_path)
    lines: list[str] = []

    with pytest.raises(LoopError, match="run iteration 0 first"):
        await run_loop(profile, [1], echo=lines.append, env=lean_pool)  # type: ignore[arg-type]

    lines.clear()
    await run_loop(profile, [0, 1], echo=lines.append, env=lean_pool)  # type: ignore[arg-type]
    text = "\n".join(lines)
    layout = BaseLayout(root=tmp_path / "work")
    for stage in ("tactic_pairs", "lora_adapter", "merged_model", "trajectories", "eval_report"):
        assert f"[iter 0 {stage}]" in text and f"[iter 1 {stage}]" in text, text
    assert "baseline (a) single tactic" in text and "baseline (b) definition-aware" in text and "Δ 0→1" in text
    for n in (0, 1):
        it = layout.iteration(n)
        for d in (it.pairs, it.adapter, it.merged, it.trajectories, it.eval):
            assert (d / DONE).exists(), d
        s = read_summary(it.eval)
        assert s.iteration == n and s.theorems == 8 and [b.budget for b in s.budgets] == [2, 6]
        recs = read_trajectories(it.trajectories / "search.traj")
        assert recs and all(r.iteration == n for r in recs)
    assert (layout.iteration(0).trajectories / "noisy.traj").is_dir()
    stats1 = json.loads((layout.iteration(1).pairs / "stats.json").read_text())
    assert stats1["iteration"] == 1 and "mix" in stats1

    lines.clear()
    await run_loop(profile, [0, 1], echo=lines.append, env=lean_pool)  # type: ignore[arg-type]
    rerun = "\n".join(lines)
    assert rerun.count("done earlier, skipped") == 2 + 2 * 5, rerun
