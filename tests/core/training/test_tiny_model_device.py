"""Pre-training the tiny base model (`pretrain_base`) on each device (`tests.fixtures_devices`): the ``cuda`` case
(marked ``gpu``) trains in float32 on the GPU.

The loss must fall, the run must record its device, the saved model must reload on CPU with the eval loss the run
measured on the device, and before any update the device must compute the CPU's losses (same tokenizer, same
initial weights, same batches).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from burnqed_core.config import TinyModelConfig, TrainingConfig
from burnqed_core.data.pairs.prompt import PromptFormat
from burnqed_core.training.collate import CompletionCollator, encode_pairs
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.sft import evaluate
from burnqed_core.training.tiny_model import pretrain_base
from tests.fixtures_devices import DEVICES
from tests.fixtures_models import TRAIN_NAMES, VAL_NAMES, make_pairs

TINY = TinyModelConfig(vocab_size=512, hidden_size=64, num_layers=2, num_heads=2, num_kv_heads=1,
                       intermediate_size=128, pretrain_steps=10, pretrain_batch_size=8, pretrain_lr=3e-3)
CFG = TrainingConfig(tiny_model=TINY, warmup_steps=1, eval_every=5, save_every=5, max_seq_len=256)
TRAIN = make_pairs(TRAIN_NAMES)
VAL = make_pairs(VAL_NAMES, "val")


def _pretrain(device: str, out: Path) -> TrainingMetrics:
    return pretrain_base(TRAIN, CFG.model_copy(update={"device": device}), out, val=VAL, progress=False)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> TrainingMetrics:
    return _pretrain("cpu", tmp_path_factory.mktemp("tiny_base_cpu"))


@pytest.mark.parametrize("device", DEVICES)
def test_pretrain_on_device_lowers_loss_and_saves_what_it_trained(device: str, cpu_run: TrainingMetrics,
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "base"
    m = _pretrain(device, out)

    assert m.kind == "pretrain" and m.steps == TINY.pretrain_steps == len(m.loss_curve)
    assert m.trainable_params == m.total_params > 0
    assert m.initial_eval_loss is not None and m.best_eval_loss is not None
    assert m.best_eval_loss < m.initial_eval_loss - 0.5, (m.initial_eval_loss, m.eval_curve)
    first = sum(p.loss for p in m.loss_curve[:2]) / 2
    last = sum(p.loss for p in m.loss_curve[-2:]) / 2
    assert last < first - 0.5, [p.loss for p in m.loss_curve]
    assert m.device == device and TrainingMetrics.load(out).device == device
    assert json.loads((out / "run.json").read_text())["device"] == device

    # before the first update the device computes the CPU's losses
    assert m.initial_eval_loss == pytest.approx(cpu_run.initial_eval_loss, rel=1e-4)
    assert m.loss_curve[0].loss == pytest.approx(cpu_run.loss_curve[0].loss, rel=1e-4)

    # the saved model (the best checkpoint's weights) reloads on CPU with the eval loss measured on the device
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
    assert next(model.parameters()).device.type == "cpu"
    tok = AutoTokenizer.from_pretrained(out)
    val_ex, _ = encode_pairs(tok, [(p.state_before, p.tactic) for p in VAL], CFG.max_seq_len, completion_only=False,
                             fmt=PromptFormat.of_model(out))
    reloaded = evaluate(model, val_ex, CompletionCollator(tok.pad_token_id), TINY.pretrain_batch_size, "cpu")
    assert reloaded == pytest.approx(m.best_eval_loss, rel=1e-3)
