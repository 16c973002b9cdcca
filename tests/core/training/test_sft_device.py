"""LoRA and QLoRA SFT on each device (`tests.fixtures_devices`): the same short run on CPU and, marked ``gpu``,
on CUDA (LoRA there trains on a bfloat16 base, QLoRA on bitsandbytes' CUDA 4-bit kernels).

Each run must lower the loss, record the device it ran on, export an adapter whose float32 merge (on CPU,
`merge_adapter`) reproduces the adapter model, and that adapter, put back on the device in float32, must give
the merged model's logits: what was trained on the device is what the CPU sees after the merge.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer

from burnqed_core.config import LoraConfig, TrainingConfig
from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.training.merge import merge_adapter
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.sft import load_pairs_dir, train_sft
from tests.fixtures_devices import DEVICES, skip_without_bnb_4bit

CFG = TrainingConfig(
    lr=1e-2, max_steps=8, warmup_steps=2, batch_size=8, eval_every=4, save_every=4, max_seq_len=256,
    lora=LoraConfig(r=8, alpha=16, dropout=0.0),
)
PROBE = [format_prompt("j : Nat\n⊢ j + 0 = j"), format_prompt("p : Prop\nhz : p\n⊢ p")]


def _logits(model: torch.nn.Module, tok_dir: Path, device: str) -> torch.Tensor:
    tok = AutoTokenizer.from_pretrained(tok_dir)
    batch = tok(PROBE, return_tensors="pt", padding=True).to(device)
    with torch.no_grad():
        return model(**batch).logits.float().cpu()


@pytest.mark.parametrize("kind", ["lora", "qlora"])
@pytest.mark.parametrize("device", DEVICES)
def test_sft_on_device_lowers_loss_and_merges_to_the_trained_model(device: str, kind: str, pairs_dir: Path,
                                                                   tiny_model_dir: Path, tmp_path: Path) -> None:
    if kind == "qlora":
        skip_without_bnb_4bit(device)
    cfg = CFG.model_copy(update={"device": device, "qlora": kind == "qlora"})
    train, val, prints = load_pairs_dir(pairs_dir)
    out = tmp_path / "adapter"
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    m = train_sft(train, val, cfg, out, tiny_model_dir, data_fingerprints=prints, progress=False)
    if device == "cuda":
        assert torch.cuda.max_memory_allocated() > 0  # the model and its batches really were on the GPU

    # the run trained and says where
    assert m.kind == kind and m.steps == cfg.max_steps and len(m.loss_curve) == cfg.max_steps
    assert all(torch.isfinite(torch.tensor(p.loss)) for p in m.loss_curve)
    assert m.initial_eval_loss is not None and m.best_eval_loss is not None
    assert m.best_eval_loss < m.initial_eval_loss - 0.2, (m.initial_eval_loss, m.eval_curve)
    first = sum(p.loss for p in m.loss_curve[:2]) / 2
    last = sum(p.loss for p in m.loss_curve[-2:]) / 2
    assert last < first, [p.loss for p in m.loss_curve]
    assert m.device == device and TrainingMetrics.load(out).device == device
    run = json.loads((out / "run.json").read_text())
    assert run["device"] == device and run["config"]["device"] == device and run["config"]["qlora"] == (kind == "qlora")

    # the float32 merge (on CPU) reproduces the adapter model and changed the base
    merged_dir = tmp_path / "merged"
    report = merge_adapter(out, merged_dir)
    assert report.qlora == (kind == "qlora")
    assert report.max_abs_logit_diff is not None and report.max_abs_logit_diff < 1e-4
    merged = _logits(AutoModelForCausalLM.from_pretrained(merged_dir, dtype=torch.float32).eval(), merged_dir, "cpu")
    base = _logits(AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval(), tiny_model_dir,
                   "cpu")
    assert (merged - base).abs().max() > 1e-2  # the adapter changed the model, so the comparisons mean something

    # the adapter on the device (float32 base + LoRA, un-merged) gives the merged model's logits
    on_device = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).to(device)
    on_device = PeftModel.from_pretrained(on_device, str(out)).to(device).eval()
    assert {p.device.type for p in on_device.parameters()} == {torch.device(device).type}
    got = _logits(on_device, out, device)
    assert (got - merged).abs().max() < 1e-3 * max(1.0, float(merged.abs().max())), float((got - merged).abs().max())
