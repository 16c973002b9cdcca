"""Joint training on the tiny model: SFT + lambda x InfoNCE through the shared
encoder; gradients reach the adapter and the head; the head becomes a usable
EBM of the merged model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
import torch

from burnqed_core.config import load_profile
from burnqed_core.ebm.embeddings import EmbeddingMismatchError, encoder_text
from burnqed_core.ebm.scorer import load_energy_scorer
from burnqed_core.ebm.train import load_head
from burnqed_core.policy.local import LocalPolicy
from burnqed_core.training.joint import PENDING, SharedEncoder, attach_encoder, has_joint_head, train_joint
from tests.core.ebm_toy import toy_records
from tests.fixtures_models import TRAIN_NAMES, VAL_NAMES, make_pairs


def test_shared_encoder_pools_like_the_policy(tiny_model_dir: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    policy = LocalPolicy(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    enc = SharedEncoder(model, AutoTokenizer.from_pretrained(tiny_model_dir), "cpu", 1024)
    states = ["⊢ good 1 2", "n : Nat\n⊢ n + 0 = n\n" * 3]
    with torch.no_grad():
        mine = enc.encode(states).numpy()
    theirs = np.array(policy.encode_sync([encoder_text(s) for s in states]))
    assert np.allclose(mine, theirs, atol=1e-5)


def test_joint_training_reaches_adapter_and_head(tiny_model_dir: Path, tmp_path: Path) -> None:
    from burnqed_core.training.merge import merge_adapter

    profile = load_profile("tiny", overrides={
        "training.max_steps_later": 6, "training.batch_size": 8, "training.warmup_steps": 1,
        "ebm.hidden_dims": [32, 16], "ebm.joint.enabled": True, "ebm.joint.ebm_weight": 1.0,
        "ebm.joint.ebm_lr": 1e-3, "ebm.joint.contrastive_batch_size": 4, "ebm.val_fraction": 0.3})
    records = toy_records(n_theorems=12)
    out = tmp_path / "adapter"
    rep = train_joint(make_pairs(TRAIN_NAMES), make_pairs(VAL_NAMES, "val"), records, profile.training,
                      profile.ebm, out, tiny_model_dir, iteration=1)
    assert rep.steps == 6 and rep.sft_loss_first is not None and rep.nce_loss_first is not None
    assert all(np.isfinite([rep.sft_loss_last, rep.nce_loss_last]))
    assert rep.val is not None and rep.val.rank1.n > 0
    assert (out / "adapter_config.json").exists() and has_joint_head(out)
    head, record = load_head(out / "ebm")
    assert record.fingerprint == PENDING
    # the head moved from its initialisation (gradients reached it through the InfoNCE term)
    assert float(head.first_gain.detach()) != pytest.approx(0.1)
    merged = tmp_path / "merged"
    merge_adapter(out, merged)
    # the adapter moved too: the merged model differs from the base
    from safetensors.torch import load_file

    a, b = load_file(str(tiny_model_dir / "model.safetensors")), load_file(str(merged / "model.safetensors"))
    assert any(not torch.equal(a[n], b[n]) for n in a if "proj" in n)
    # attached to the wrong encoder (the base), the merged model's policy refuses it
    attach_encoder(out, tiny_model_dir, tmp_path / "wrong")
    with pytest.raises(EmbeddingMismatchError, match="another model"):
        load_energy_scorer(tmp_path / "wrong", LocalPolicy(merged))
    ebm_dir = attach_encoder(out, merged, tmp_path / "ebm")
    scorer = load_energy_scorer(ebm_dir, LocalPolicy(merged))
    e = asyncio.run(scorer.score(["⊢ good 1 1", "⊢ bad 1 1 0"], "n1 : Nat\n⊢ goal 1"))
    assert len(e) == 2 and all(np.isfinite(e))


def test_joint_through_the_stages(tiny_model_dir: Path, tmp_path: Path) -> None:
    """ebm.joint.enabled: the lora_adapter stage trains adapter + head, the ebm stage adopts the head as
    the EBM of the merged model (fingerprint filled in), and a scorer loads it."""
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.loop.stages import ebm as ebm_stage
    from burnqed_core.loop.stages import embeddings as embeddings_stage
    from burnqed_core.loop.stages import lora_adapter as lora_adapter_stage
    from burnqed_core.loop.stages import merged_model as merged_model_stage
    from burnqed_core.record_io import write_parquet
    from burnqed_core.records import TacticPair, TrajectoryRecord
    from burnqed_core.training.joint import REPORT_FILE

    profile = load_profile("tiny", overrides={
        "training.max_steps_later": 4, "training.batch_size": 8, "training.warmup_steps": 1,
        "ebm.hidden_dims": [32, 16], "ebm.joint.enabled": True, "ebm.joint.contrastive_batch_size": 4})
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    write_parquet(make_pairs(TRAIN_NAMES), pairs / "train.parquet", TacticPair)
    write_parquet(make_pairs(VAL_NAMES, "val"), pairs / "val.parquet", TacticPair)
    traj = write_parquet(toy_records(n_theorems=12), tmp_path / "traj.parquet", TrajectoryRecord)
    res = lora_adapter_stage.lora_adapter(profile, 1, pairs, tiny_model_dir, None, tmp_path / "adapter",
                                          trajectory_dirs=[traj])
    assert res.metrics["joint"] and (tmp_path / "adapter" / REPORT_FILE).exists()
    merged_model_stage.merged_model(profile, 1, tmp_path / "adapter", tmp_path / "merged")
    policy = LocalPolicy(tmp_path / "merged")
    asyncio.run(embeddings_stage.embeddings(profile, 1, policy, [traj], tmp_path / "emb", progress=False))
    res = ebm_stage.ebm(profile, 1, tmp_path / "emb", [traj], tmp_path / "ebm", progress=False,
                     adapter_dir=tmp_path / "adapter", model_path=tmp_path / "merged")
    assert res.metrics["trained"] and res.metrics["joint"] and has_ebm(tmp_path / "ebm"), res.summary
    assert load_head(tmp_path / "ebm")[1].fingerprint != PENDING
    load_energy_scorer(tmp_path / "ebm", policy)
