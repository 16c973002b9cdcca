"""The training loop's step: a micro-batch cut into length-sorted runs (`LoopSettings.length_groups`) gives the
gradient of the whole padded batch, but for floating-point rounding, on a real tiny Llama."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from burnqed_core.training import loop as tl
from burnqed_core.training.collate import CompletionCollator, encode_pairs
from burnqed_core.training.metrics import TrainingMetrics
from tests.fixtures_models import TRAIN_NAMES, make_pairs

STEP = dict(kind="sft", lr=0.0, max_steps=1, warmup_steps=0, batch_size=16, grad_accum=2, eval_every=10,
            save_every=10, seed=0)


def _grads_after_one_step(model_dir: Path, groups: int, tmp: Path) -> tuple[dict[str, torch.Tensor], dict]:
    """The gradients left by one step of the loop at learning rate 0 (the weights stay the initial ones), and the
    loop state's counters."""
    tok = AutoTokenizer.from_pretrained(model_dir)
    # prompts of very different lengths in one micro-batch: long ones are states with many hypotheses
    pairs = [(p.state_before + "\n".join(f"h{i} : {p.tactic} = {i}" for i in range(k % 9 * 3)), p.tactic)
             for k, p in enumerate(make_pairs(TRAIN_NAMES))]
    train, _ = encode_pairs(tok, pairs, 512)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    model.train()
    s = tl.LoopSettings(**STEP, length_groups=groups)
    params = [p for p in model.parameters() if p.requires_grad]
    opt, sched = tl._optimizer(params, [], s)
    loop = tl._Loop(model=model, train=train, val=[], s=s, run_dir=tmp, collator=CompletionCollator(tok.pad_token_id),
                    device="cpu", optimizer=opt, scheduler=sched, params=params, ext=tl.LoopExtension(),
                    order=tl.SampleOrder(len(train), 0), t_start=time.perf_counter())
    state = {"tokens_seen": 0, "target_tokens_seen": 0, "step": 0}
    loss, _, _ = tl._train_step(loop, state)
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    return grads, {"loss": loss, "tokens": state["tokens_seen"], "targets": state["target_tokens_seen"]}


def test_length_groups_give_the_whole_batch_s_gradient(tiny_model_dir: Path, tmp_path: Path) -> None:
    whole, a = _grads_after_one_step(tiny_model_dir, 1, tmp_path / "one")
    runs, b = _grads_after_one_step(tiny_model_dir, 4, tmp_path / "four")
    assert a["tokens"] == b["tokens"] and a["targets"] == b["targets"]  # the same examples, counted alike
    assert abs(a["loss"] - b["loss"]) <= 1e-5 * abs(a["loss"])
    assert whole.keys() == runs.keys() and whole
    for name, g in whole.items():
        scale = float(g.abs().max()) or 1.0
        assert torch.allclose(runs[name], g, rtol=0, atol=1e-5 * scale), name


def test_a_run_with_length_groups_trains_like_one_without(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Ten steps of real SFT (AdamW, cosine): the loss curves agree to rounding."""
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    train, _ = encode_pairs(tok, [(p.state_before, p.tactic) for p in make_pairs(TRAIN_NAMES)], 512)
    curves = []
    for groups in (1, 4):
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        s = tl.LoopSettings(**{**STEP, "lr": 1e-3, "max_steps": 10, "grad_accum": 1}, length_groups=groups)
        m, _ = tl.run_loop(model, train, [], s, tmp_path / f"g{groups}", tok.pad_token_id,
                           TrainingMetrics(kind="sft"), "cpu", signature="t", progress=False)
        curves.append([p.loss for p in m.loss_curve])
    assert len(curves[0]) == 10 and curves[0][-1] < curves[0][0]
    assert curves[1] == pytest.approx(curves[0], rel=1e-4)

