"""QLoRA's adapter gradients equal LoRA's on the dequantised weights.

During QLoRA backward on CPU bitsandbytes warns that an autograd kernel of
``gemv_4bit`` is not registered and "may lead to silently incorrect
behavior"; a falling loss would not show wrong gradients. Here the same
tiny model is loaded in 4-bit (the project's `load_base` path) and, as a
reference, in float32 with every quantised weight replaced by its exact
dequantisation and every other parameter copied: the two models compute the
same function up to the compute dtype, so the LoRA gradients (with non-zero
B, so that A's gradients are not trivially zero, in both layers: layer 0's
pass back through layer 1's 4-bit matmuls) must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from burnqed_core.config import LoraConfig, TrainingConfig
from burnqed_core.training.base_models import load_base, lora_model

# compute float32: the 4-bit matmul dequantises exactly, only summation order differs;
# compute bfloat16 (the project's setting): inputs are rounded to bf16 (8 bits of mantissa),
# measured 2.2e-2 relative error (notes); a wrong backward would be O(1).
TOLERANCE = {"float32": 1e-4, "bfloat16": 0.08}
CFG = TrainingConfig(lora=LoraConfig(r=4, alpha=8, dropout=0.0), device="cpu")


def _twin_models(base: Path, compute_dtype: str) -> tuple[torch.nn.Module, torch.nn.Module]:
    import bitsandbytes as bnb

    q = load_base(base, qlora=True, device="cpu", compute_dtype=compute_dtype)
    ref = load_base(base, qlora=False, device="cpu")
    q_params = dict(q.named_parameters())
    q_modules = dict(q.named_modules())
    with torch.no_grad():
        for name, module in ref.named_modules():
            qm = q_modules.get(name)
            if isinstance(qm, bnb.nn.Linear4bit):
                w = bnb.functional.dequantize_4bit(qm.weight.data, qm.weight.quant_state).float()
                assert w.shape == module.weight.shape
                module.weight.copy_(w)
        quantised = {f"{n}.weight" for n, m in q_modules.items() if isinstance(m, bnb.nn.Linear4bit)}
        for name, p in ref.named_parameters():
            if name not in quantised:
                p.copy_(q_params[name].float())
    q_lora, ref_lora = lora_model(q, CFG, None), lora_model(ref, CFG, None)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        ref_params = dict(ref_lora.named_parameters())
        for name, p in q_lora.named_parameters():
            if "lora_" in name:
                v = torch.randn(p.shape, generator=gen) * 0.1  # B != 0: A gets gradients too
                p.copy_(v.to(p.dtype))
                ref_params[name].copy_(v)
    return q_lora, ref_lora


def _lora_grads(model: torch.nn.Module, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    model.train()
    model.zero_grad()
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    return {n: p.grad.detach().float().clone() for n, p in model.named_parameters()
            if "lora_" in n and p.grad is not None}


@pytest.mark.parametrize("compute_dtype", ["float32", "bfloat16"])
def test_qlora_adapter_gradients_match_lora_on_dequantised_weights(tiny_model_dir: Path, compute_dtype: str) -> None:
    torch.manual_seed(0)
    q, ref = _twin_models(tiny_model_dir, compute_dtype)
    vocab = ref.get_input_embeddings().weight.shape[0]
    ids = torch.randint(3, vocab, (4, 24), generator=torch.Generator().manual_seed(1))
    gq, gr = _lora_grads(q, ids), _lora_grads(ref, ids)
    assert gq.keys() == gr.keys() and len(gr) >= 8  # A and B of every targeted projection in both layers
    assert any(".layers.0." in n and "lora_A" in n for n in gr)  # back through layer 1's 4-bit matmuls
    worst = 0.0
    for name, g in gr.items():
        assert g.abs().max() > 0, name
        rel = float((gq[name] - g).norm() / g.norm())
        worst = max(worst, rel)
        assert rel < TOLERANCE[compute_dtype], f"{name}: relative gradient error {rel:.2e} ({compute_dtype})"
    print(f"QLoRA vs LoRA-on-dequantised gradients, compute {compute_dtype}: worst relative error {worst:.2e}")
