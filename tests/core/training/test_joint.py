"""Joint LoRA + EBM training on the real tiny model: the joint step's one forward pass equals the two it
replaces, its gradients reach the LoRA weights and the head, SFT alone collapses the probe set's separation
while joint training at the same steps keeps it, a collapsing run aborts naming the condition and the step
and keeps its last good checkpoint, and the search-time encoder (the merged model through the local policy,
which pools as SGLang's ``/encode``) gives the training-time embeddings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from burnqed_core.config import EBMConfig, LoraConfig, TrainingConfig
from burnqed_core.data.pairs.prompt import PromptFormat
from burnqed_core.ebm.data import build_data
from burnqed_core.ebm.embeddings import encoder_text
from burnqed_core.records import TacticPair, TrajectoryRecord
from burnqed_core.training.collate import CompletionCollator, encode_pairs
from burnqed_core.training.joint import (
    JointTraining,
    StateEncoder,
    encode_states,
    joint_data,
    joint_forward,
)
from burnqed_core.training.joint_head import has_joint_head, load_joint_head, read_joint_record
from burnqed_core.training.joint_monitor import JointAbortError, JointMonitor, probe_subset
from burnqed_core.training.sft import CHECKPOINTS, load_base, lora_model, token_loss_sum, train_sft
from tests.core.ebm_toy import toy_records

pytestmark = pytest.mark.slow

TRAIN_CFG = TrainingConfig(lr=1e-2, max_steps=15, warmup_steps=2, batch_size=8, eval_every=5, save_every=5,
                           max_seq_len=256, lora=LoraConfig(r=8, alpha=16, dropout=0.0), device="cpu")


def joint_cfg(**kw: object) -> EBMConfig:
    base: dict[str, object] = dict(joint=True, joint_lambda=0.1, hidden_dims=[32, 16], dropout=0.0,
                                   joint_batch_size=8, num_negatives=4, joint_monitor_every=5, joint_probe_states=32,
                                   joint_abort_centroid_keep=0.0, joint_abort_sft_patience=100, val_fraction=0.3)
    base.update(kw)
    return EBMConfig(**base)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def records() -> list[TrajectoryRecord]:
    """Proof paths ('good' states) with failed siblings ('bad' states) of 24 theorems."""
    return toy_records(n_theorems=24, depth=3, siblings=3)


@pytest.fixture(scope="module")
def sft_pairs(records: list[TrajectoryRecord]) -> tuple[list[TacticPair], list[TacticPair]]:
    """Every state, proof path or dead end, answered with the same tactic: next-token training has no reason
    to keep the two apart (the seeds' iteration-5 collapse in miniature)."""
    pairs = [TacticPair(theorem=r.theorem, state_before=r.state, tactic="simp", state_after="", depth=r.depth,
                        source="test") for r in records if r.state]
    cut = int(len(pairs) * 0.8)
    return pairs[:cut], pairs[cut:]


def _run(base: Path, out: Path, records: list[TrajectoryRecord], pairs: tuple[list[TacticPair], list[TacticPair]],
         cfg: EBMConfig, training: TrainingConfig = TRAIN_CFG) -> Path:
    train_sft(pairs[0], pairs[1], training, out, base, progress=False,
              extension=JointTraining(cfg=cfg, jd=joint_data(records, cfg), max_prompt_tokens=1024))
    return out


@pytest.fixture(scope="module")
def sft_only(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory, records: list[TrajectoryRecord],
             sft_pairs: tuple[list[TacticPair], list[TacticPair]]) -> Path:
    return _run(tiny_model_dir, tmp_path_factory.mktemp("sft_only"), records, sft_pairs, joint_cfg(joint_lambda=0.0))


@pytest.fixture(scope="module")
def joint(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory, records: list[TrajectoryRecord],
          sft_pairs: tuple[list[TacticPair], list[TacticPair]]) -> Path:
    return _run(tiny_model_dir, tmp_path_factory.mktemp("joint"), records, sft_pairs, joint_cfg())


def _extension(base: Path, records: list[TrajectoryRecord], cfg: EBMConfig,
               qlora: bool = False) -> tuple[object, object, object]:
    from transformers import AutoTokenizer

    torch.manual_seed(0)
    model = lora_model(load_base(base, qlora, "cpu"), TRAIN_CFG, None)
    with torch.no_grad():  # B starts at zero: give the adapter an effect so that its A matrices get gradients too
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.02)
    tok = AutoTokenizer.from_pretrained(base)
    fmt = PromptFormat.of_model(base)
    ext = JointTraining(cfg=cfg, jd=joint_data(records, cfg), max_prompt_tokens=1024).build(model, tok, fmt, "cpu")
    return model, tok, ext


def _sft_batch(tok: object, pairs: list[TacticPair]) -> dict[str, torch.Tensor]:
    ex, _ = encode_pairs(tok, [(p.state_before, p.tactic) for p in pairs[:8]], 256)
    return CompletionCollator(tok.pad_token_id)(ex)  # type: ignore[attr-defined]


def test_one_forward_pass_gives_what_the_two_separate_ones_give(
        tiny_model_dir: Path, records: list[TrajectoryRecord],
        sft_pairs: tuple[list[TacticPair], list[TacticPair]]) -> None:
    model, tok, ext = _extension(tiny_model_dir, records, joint_cfg())
    model.eval()  # type: ignore[attr-defined]
    batch = _sft_batch(tok, sft_pairs[0])
    states = [r.state for r in records if r.state][:12]
    enc: StateEncoder = ext.encoder  # type: ignore[attr-defined]
    ids, mask = enc.batch(states)
    with torch.no_grad():
        loss_sum, z = joint_forward(model, batch, ids, mask, enc.pad_id)
        alone_sum, _ = token_loss_sum(model, batch)
        alone_z = encode_states(model, enc, states)
    assert torch.allclose(loss_sum, alone_sum, rtol=1e-4), (float(loss_sum), float(alone_sum))
    assert torch.allclose(z, alone_z, atol=1e-5)


def test_the_joint_step_reaches_the_lora_weights_and_the_head(
        tiny_model_dir: Path, records: list[TrajectoryRecord],
        sft_pairs: tuple[list[TacticPair], list[TacticPair]]) -> None:
    grads = {}
    for lam in (0.0, 0.5):
        model, tok, ext = _extension(tiny_model_dir, records, joint_cfg(joint_lambda=lam))
        batch = _sft_batch(tok, sft_pairs[0])
        n_target = int((batch["labels"] != -100).sum())
        loss, sft = ext.micro_loss(model, batch, n_target, step=3, last=True)  # type: ignore[attr-defined]
        loss.backward()
        lora = {n: p.grad.clone() for n, p in model.named_parameters()  # type: ignore[attr-defined]
                if "lora_" in n and p.grad is not None}
        head = [p.grad for p in ext.head.parameters()]  # type: ignore[attr-defined]
        grads[lam] = (lora, head, float(loss.detach()), sft)
    lora0, head0, _, _ = grads[0.0]
    lora1, head1, loss1, sft1 = grads[0.5]
    # the head learns only through the InfoNCE; the adapter through both losses
    assert all(g is None or float(g.abs().sum()) == 0 for g in head0)
    assert any(g is not None and float(g.abs().sum()) > 0 for g in head1)
    assert any("lora_A" in n for n in lora1) and any("lora_B" in n for n in lora1)
    assert all(float(g.abs().sum()) > 0 for g in lora1.values())
    moved = max(float((lora1[n] - lora0[n]).abs().max()) for n in lora1)
    assert moved > 1e-6, "the InfoNCE does not reach the LoRA weights"
    assert loss1 > sft1  # the reported SFT part leaves the contrastive term out


def test_the_joint_step_runs_on_a_4bit_base(tiny_model_dir: Path, records: list[TrajectoryRecord],
                                            sft_pairs: tuple[list[TacticPair], list[TacticPair]]) -> None:
    """QLoRA (the prod path: NF4 base, bf16 compute, LoRA on top): the same step, gradients to adapter and head."""
    model, tok, ext = _extension(tiny_model_dir, records, joint_cfg(joint_lambda=0.5), qlora=True)
    batch = _sft_batch(tok, sft_pairs[0])
    loss, sft = ext.micro_loss(model, batch, int((batch["labels"] != -100).sum()), step=0,  # type: ignore[attr-defined]
                               last=True)
    loss.backward()
    assert torch.isfinite(loss) and float(loss.detach()) > sft
    assert any(p.grad is not None and float(p.grad.abs().sum()) > 0 for n, p in model.named_parameters()  # type: ignore[attr-defined]
               if "lora_B" in n)
    assert any(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in ext.head.parameters())  # type: ignore[attr-defined]


def _centroids(run: Path) -> list[float]:
    return [p.centroid_l2 for p in read_joint_record(run).monitor if p.centroid_l2 is not None]


def test_sft_alone_collapses_the_probe_set_and_joint_training_keeps_it(sft_only: Path, joint: Path) -> None:
    alone, both = _centroids(sft_only), _centroids(joint)
    assert len(alone) == len(both) == 4  # steps 0, 5, 10, 15
    assert alone[0] == pytest.approx(both[0])  # the same adapter-free start
    assert alone[-1] < 0.5 * alone[0], alone  # next-token training drops the separation
    assert both[-1] >= 0.9 * both[0], both  # the InfoNCE through the same weights keeps it
    assert both[-1] > 3 * alone[-1]
    rec = read_joint_record(joint)
    assert rec.aborted is None and rec.steps == 15 and rec.checkpoint is not None
    assert [p.step for p in rec.monitor] == [0, 5, 10, 15]
    assert all(p.infonce is not None and p.sft_loss is not None for p in rec.monitor[1:])
    assert rec.monitor[-1].infonce < rec.monitor[1].infonce  # type: ignore[operator]


def test_the_head_is_saved_beside_the_adapter(joint: Path) -> None:
    assert (joint / "adapter_config.json").is_file() and has_joint_head(joint)
    head, rec = load_joint_head(joint)
    assert rec.pooling == "last_l2" and rec.joint_lambda == pytest.approx(0.1) and head.cfg.dim == 64
    assert rec.text_format == PromptFormat.of_model(joint).version


def test_a_collapsing_run_aborts_and_keeps_its_last_good_checkpoint(
        tiny_model_dir: Path, tmp_path: Path, records: list[TrajectoryRecord],
        sft_pairs: tuple[list[TacticPair], list[TacticPair]]) -> None:
    cfg = joint_cfg(joint_lambda=0.0, joint_abort_centroid_keep=0.6)
    training = TRAIN_CFG.model_copy(update={"save_every": 2, "eval_every": 2})
    with pytest.raises(JointAbortError, match=r"aborted at step 5: centroid_l2") as err:
        _run(tiny_model_dir, tmp_path, records, sft_pairs, cfg, training)
    assert err.value.condition == "centroid_l2" and err.value.step == 5
    rec = read_joint_record(tmp_path)
    assert rec.aborted is not None and rec.aborted.condition == "centroid_l2" and rec.aborted.step == 5
    assert rec.checkpoint == "step-000004"  # the last one saved before the abort
    assert not (tmp_path / CHECKPOINTS / "step-000005").exists()
    assert (tmp_path / "adapter_config.json").is_file() and (tmp_path / "metrics.json").is_file()


def test_the_search_time_encoder_gives_the_training_time_embeddings(joint: Path, tmp_path: Path,
                                                                     records: list[TrajectoryRecord]) -> None:
    from transformers import AutoTokenizer

    from burnqed_core.policy.local import LocalPolicy
    from burnqed_core.training.merge import merge_adapter

    merged = tmp_path / "merged"
    merge_adapter(joint, merged)
    policy = LocalPolicy(merged, batch_size=5)
    fmt = PromptFormat.of_model(merged)
    states = list(dict.fromkeys(r.state for r in records if r.state))[:20]
    served = np.array(policy.encode_sync([encoder_text(s, fmt) for s in states]))
    trained = lora_model(load_base(read_base(joint), False, "cpu"), TRAIN_CFG, joint)
    trained.eval()
    enc = StateEncoder(AutoTokenizer.from_pretrained(joint), PromptFormat.of_model(joint), 1024, "cpu")
    with torch.no_grad():
        z = encode_states(trained, enc, states, batch_size=7).numpy()
    assert policy.pooling == "last_l2" and fmt.version == read_joint_record(joint).text_format
    assert np.abs(served - z).max() < 1e-4, np.abs(served - z).max()


def read_base(adapter: Path) -> str:
    from burnqed_core.training.sft import adapter_base

    return adapter_base(adapter)


def test_the_monitor_names_each_abort_condition(records: list[TrajectoryRecord]) -> None:
    data = build_data(records)
    probe = probe_subset(data, 16, 0)
    assert len(probe.positive_rows) == 16 and len(probe.negatives) == 16
    rng = np.random.default_rng(0)
    apart = rng.normal(size=(len(probe.texts), 8))
    apart[probe.positive_rows, 0] += 4.0
    together = apart.copy()
    together[probe.positive_rows, 0] -= 3.5

    def monitor(**kw: object) -> JointMonitor:
        m = JointMonitor(joint_cfg(joint_abort_centroid_keep=0.6, **kw), probe)
        m.measure(0, apart, 1.0, None)
        return m

    with pytest.raises(JointAbortError, match="step 10: centroid_l2") as e:
        monitor().measure(10, together, 1.0, None)
    assert e.value.condition == "centroid_l2"
    m = monitor(joint_abort_sft_patience=2)
    for step, loss in ((5, 2.0), (10, 2.1)):
        m.add_losses(loss, 0.5)
        m.measure(step, apart, 1.0, None)
    m.add_losses(2.05, 0.5)
    with pytest.raises(JointAbortError, match="step 15: sft_not_falling"):
        m.measure(15, apart, 1.0, None)
    m = monitor(temperature_patience=2)
    m.measure(5, apart, 0.05, "floor")
    with pytest.raises(JointAbortError, match="step 10: temperature_floor"):
        m.measure(10, apart, 0.05, "floor")
