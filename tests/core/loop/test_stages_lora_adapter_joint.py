"""``ebm.joint`` and its λ in the fingerprints: changing them re-runs ``lora_adapter``, ``merged_model``,
``embeddings``, ``ebm`` and what follows them where the joint training runs (iteration N > 0), and nothing
before; at iteration 0 (no trajectories: plain SFT) the adapter stays. Walked with the real specs, `resolve`
and finished-stage markers in a temporary run directory, as the runner writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from burnqed_core.config import Profile, load_profile
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.loop.markers import read_marker
from burnqed_core.loop.spec import me, resolve
from burnqed_core.loop.stages import BY_NAME, SPECS
from burnqed_core.records import StageResult

ITERATIONS = (0, 1, 2)


def _profile(tmp: Path, **overrides: Any) -> Profile:
    return load_profile("tiny", environ={}, overrides={"paths.work_dir": str(tmp), **overrides})


def _materialise(profile: Profile, layout: BaseLayout) -> set[str]:
    """Walk every stage of every iteration in order, as the runner would: a stage whose fingerprint changed
    (or that never ran) "re-runs" (writes its marker with the new fingerprint). The set of those re-run."""
    rerun: set[str] = set()
    for n in ITERATIONS:
        for spec in SPECS:
            if not spec.partitioned and n > 0:
                continue
            it = n if spec.partitioned else None
            fp = resolve(spec, BY_NAME, profile, layout, it).fingerprint
            out = spec.out_dir(layout, it)
            marker = read_marker(out)
            if marker is None or marker.fingerprint != fp:
                out.mkdir(parents=True, exist_ok=True)
                (out / DONE).write_text(StageResult(stage=spec.name, iteration=it, path=str(out), summary="",
                                                    fingerprint=fp).model_dump_json(), encoding="utf-8")
                rerun.add(me(spec, it))
    return rerun


AFTER_ADAPTER = ("lora_adapter", "merged_model", "embeddings", "ebm", "premise_reranker", "trajectories",
                 "eval_report")
#: embeddings and ebm hold the whole ebm section (every ebm setting re-runs them, as before issue 67); at
#: iteration 0 they train and encode nothing, and nothing reads them there.
NO_OPS_AT_0 = {"embeddings[0]", "ebm[0]"}


def test_the_walk_reruns_nothing_when_nothing_changed(tmp_path: Path) -> None:
    layout = BaseLayout(root=tmp_path)
    first = _materialise(_profile(tmp_path), layout)
    assert len(first) == len([s for s in SPECS if not s.partitioned]) + \
        len(ITERATIONS) * len([s for s in SPECS if s.partitioned])
    assert _materialise(_profile(tmp_path), layout) == set()


@pytest.mark.parametrize(("before", "after"), [
    ({}, {"ebm.joint": True}),
    ({"ebm.joint": True}, {"ebm.joint": True, "ebm.joint_lambda": 0.3}),
    ({"ebm.joint": True}, {}),
])
def test_joint_settings_rerun_the_adapter_and_what_follows_it(tmp_path: Path, before: dict[str, Any],
                                                               after: dict[str, Any]) -> None:
    layout = BaseLayout(root=tmp_path)
    _materialise(_profile(tmp_path, **before), layout)
    rerun = _materialise(_profile(tmp_path, **after), layout)
    # from iteration 1 (its adapter trains the head), every stage downstream of the adapter, and nothing before
    expected = {f"{s}[{n}]" for n in ITERATIONS[1:] for s in AFTER_ADAPTER} | {f"tactic_pairs[{n}]"
                                                                               for n in ITERATIONS[2:]}
    assert rerun == expected | NO_OPS_AT_0
    assert not any(r.startswith(("base_", "premise_index", "automation_baselines")) for r in rerun)
    assert "tactic_pairs[1]" not in rerun and "lora_adapter[0]" not in rerun and "merged_model[0]" not in rerun


def test_head_settings_leave_a_plain_adapter_alone(tmp_path: Path) -> None:
    """Without ebm.joint, the head's settings and λ are no adapter's business: at iteration 1 the EBM's stages
    re-run (and the search that uses the EBM, and iteration 2 after it), the adapter and its merge do not."""
    layout = BaseLayout(root=tmp_path)
    _materialise(_profile(tmp_path), layout)
    rerun = _materialise(_profile(tmp_path, **{"ebm.joint_lambda": 0.5, "ebm.hidden_dims": [64, 32]}), layout)
    assert {"ebm[1]", "embeddings[1]", "trajectories[1]"} <= rerun
    assert rerun.isdisjoint({"lora_adapter[0]", "merged_model[0]", "lora_adapter[1]", "merged_model[1]",
                             "tactic_pairs[1]"})


# -- the stages themselves -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_lora_adapter_trains_the_head_and_ebm_adopts_it(tmp_path: Path, tiny_model_dir: Path) -> None:
    """lora_adapter[1] with ebm.joint on Parquet pairs and iteration 0's Parquet trajectories trains the head
    beside the adapter; embeddings[1] encodes through the merged model; ebm[1] takes that head (no training
    of its own), measured on the cache and recorded as trained jointly, its record keyed to the cache's
    encoder. With ebm.joint off, the same stage trains the adapter alone and says why."""
    import asyncio

    from burnqed_core.ebm.embeddings import cache_dir_for
    from burnqed_core.ebm.run import encode_trajectories
    from burnqed_core.ebm.train import has_ebm, load_head, read_report
    from burnqed_core.loop.stages import ebm as ebm_stage
    from burnqed_core.loop.stages import lora_adapter as lora_stage
    from burnqed_core.policy.local import LocalPolicy
    from burnqed_core.record_io import write_parquet
    from burnqed_core.records import TacticPair, TrajectoryRecord
    from burnqed_core.training.joint_head import load_joint_head
    from burnqed_core.training.merge import merge_adapter
    from tests.core.ebm_toy import toy_records

    records = toy_records(n_theorems=18, depth=3, siblings=3)
    traj = tmp_path / "iter_0" / "trajectories" / "search.traj"
    write_parquet(records, traj / "part-00000.parquet", TrajectoryRecord)
    pairs = [TacticPair(theorem=r.theorem, state_before=r.state, tactic="simp", state_after="", depth=r.depth,
                        source="test") for r in records if r.state]
    write_parquet(pairs[:60], tmp_path / "pairs" / "train.parquet", TacticPair)
    write_parquet(pairs[60:], tmp_path / "pairs" / "val.parquet", TacticPair)
    small = {"training.max_steps_later": 6, "training.save_every": 3, "training.eval_every": 3,
             "training.batch_size": 8, "training.device": "cpu", "ebm.hidden_dims": [32, 16],
             "ebm.joint_monitor_every": 3, "ebm.joint_probe_states": 16, "ebm.val_fraction": 0.3}

    plain = lora_stage.lora_adapter(lora_stage.Settings.of(_profile(tmp_path, **small)), 1, tmp_path / "pairs",
                                    tiny_model_dir, None, tmp_path / "plain", earlier=[traj])
    assert plain.metrics["joint"] is False and plain.metrics["joint_reason"] == "ebm.joint is false"
    assert not (tmp_path / "plain" / "joint.json").exists()

    prof = _profile(tmp_path, **small, **{"ebm.joint": True})
    adapter = tmp_path / "lora_adapter"
    res = lora_stage.lora_adapter(lora_stage.Settings.of(prof), 1, tmp_path / "pairs", tiny_model_dir, None,
                                  adapter, earlier=[traj])
    assert res.metrics["joint"] is True and res.metrics["joint_aborted"] is None and res.metrics["steps"] == 6
    assert res.metrics["joint_monitors"] == 3 and "+ EBM (joint)" in res.summary

    merged = tmp_path / "merged_model"
    merge_adapter(adapter, merged)
    embeddings = tmp_path / "embeddings"
    asyncio.run(encode_trajectories(LocalPolicy(merged), [traj], cache_dir_for(embeddings), prof.ebm,
                                    model_path=merged))
    out = tmp_path / "ebm"
    result = ebm_stage.ebm(ebm_stage.Settings.of(prof), 1, embeddings, [traj], out, progress=False,
                           adapter_dir=adapter)
    assert result.metrics["trained"] is True and result.metrics["trained_jointly"] is True
    assert has_ebm(out) and "trained jointly" in result.summary
    head, record = load_head(out)
    joint_head, _ = load_joint_head(adapter)
    assert all(torch.equal(a, b) for a, b in zip(head.state_dict().values(), joint_head.state_dict().values(),
                                                 strict=True))
    from burnqed_core.ebm.embeddings import model_fingerprint

    assert record.fingerprint == model_fingerprint(merged) and record.steps == 6
    rep = read_report(out)
    assert rep.train is not None and rep.train.groups > 0 and rep.separation is not None


@pytest.mark.slow
def test_an_aborted_joint_run_is_recorded_and_keeps_its_last_good_checkpoint(tmp_path: Path,
                                                                              tiny_model_dir: Path) -> None:
    """A run built to collapse (SFT alone, λ = 0, every state answered alike) crosses the centroid abort: the
    stage keeps the checkpoint saved before the abort as its adapter and says so; the ebm stage's check then
    fails (`tests/pipeline/test_checks.py`)."""
    from burnqed_core.loop.stages import lora_adapter as lora_stage
    from burnqed_core.record_io import write_parquet
    from burnqed_core.records import TacticPair, TrajectoryRecord
    from burnqed_core.training.joint_head import read_joint_record
    from tests.core.ebm_toy import toy_records

    records = toy_records(n_theorems=24, depth=3, siblings=3)
    traj = tmp_path / "iter_0" / "trajectories" / "search.traj"
    write_parquet(records, traj / "part-00000.parquet", TrajectoryRecord)
    pairs = [TacticPair(theorem=r.theorem, state_before=r.state, tactic="simp", state_after="", depth=r.depth,
                        source="test") for r in records if r.state]
    write_parquet(pairs[:80], tmp_path / "pairs" / "train.parquet", TacticPair)
    write_parquet(pairs[80:], tmp_path / "pairs" / "val.parquet", TacticPair)
    prof = _profile(tmp_path, **{
        "training.max_steps_later": 10, "training.save_every": 2, "training.eval_every": 2, "training.lr": 1e-2,
        "training.lr_decay_per_iteration": 1.0, "training.warmup_steps": 2, "training.batch_size": 8,
        "training.device": "cpu", "ebm.joint": True, "ebm.joint_lambda": 0.0, "ebm.hidden_dims": [32, 16],
        "ebm.joint_monitor_every": 5, "ebm.joint_probe_states": 32, "ebm.joint_abort_centroid_keep": 0.6,
        "ebm.val_fraction": 0.3})
    out = tmp_path / "lora_adapter"
    res = lora_stage.lora_adapter(lora_stage.Settings.of(prof), 1, tmp_path / "pairs", tiny_model_dir, None, out,
                                  earlier=[traj])
    assert res.metrics["joint"] is True and res.metrics["joint_aborted"]["condition"] == "centroid_l2"
    assert res.metrics["joint_aborted"]["step"] == 5 and "ABORTED" in res.summary and "step-000004" in res.summary
    rec = read_joint_record(out)
    assert rec.checkpoint == "step-000004" and rec.steps == 5 and (out / "adapter_config.json").is_file()
