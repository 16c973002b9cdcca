"""LoRA and QLoRA SFT on the real tiny model, merge/export, warm start, checkpoint selection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

from burnqed_core.config import LoraConfig, TrainingConfig
from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.record_io import file_sha256
from burnqed_core.training.collate import CompletionCollator, encode_pairs
from burnqed_core.training.merge import merge_adapter
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.sft import (
    CHECKPOINTS,
    TrainingError,
    check_quantizable,
    load_base,
    load_pairs_dir,
    lora_model,
    train_sft,
)

CFG = TrainingConfig(
    lr=1e-2, max_steps=12, max_steps_later=3, warmup_steps=2, batch_size=8, eval_every=4, save_every=4,
    max_seq_len=256, lora=LoraConfig(r=8, alpha=16, dropout=0.0), device="cpu",
)


def _train(pairs_dir: Path, out: Path, base: Path, **kw) -> TrainingMetrics:
    train, val, prints = load_pairs_dir(pairs_dir)
    return train_sft(train, val, kw.pop("cfg", CFG), out, base, data_fingerprints=prints, progress=False, **kw)


@pytest.fixture(scope="module")
def lora_run(pairs_dir: Path, tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lora")
    _train(pairs_dir, out, tiny_model_dir)
    return out


@pytest.fixture(scope="module")
def qlora_run(pairs_dir: Path, tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("qlora")
    _train(pairs_dir, out, tiny_model_dir, qlora=True, cfg=CFG.model_copy(update={"max_steps": 8}))
    return out


def test_lora_lowers_eval_loss_and_keeps_best_checkpoint(lora_run: Path, pairs_dir: Path) -> None:
    m = TrainingMetrics.load(lora_run)
    assert m.kind == "lora" and m.steps == 12 and len(m.loss_curve) == 12
    assert m.initial_eval_loss is not None and m.best_eval_loss is not None
    assert m.best_eval_loss < m.initial_eval_loss - 0.3, (m.initial_eval_loss, m.eval_curve)
    assert [e.step for e in m.eval_curve] == [4, 8, 12]
    best = min(m.eval_curve, key=lambda e: e.eval_loss)
    assert m.best_step == best.step
    assert 0 < m.trainable_params < m.total_params and m.tokens_per_s > 0
    # the exported adapter is the best checkpoint's weights
    ckpt = lora_run / CHECKPOINTS / best.checkpoint
    saved = load_file(ckpt / "trainable.safetensors")
    adapter = load_file(lora_run / "adapter_model.safetensors")
    assert len(adapter) == len(saved) > 0
    for name, t in adapter.items():
        match = [v for k, v in saved.items() if k.replace(".default", "") == name]
        assert len(match) == 1 and torch.equal(match[0], t), name
    run = json.loads((lora_run / "run.json").read_text())
    assert run["data"]["train:train.parquet"] == file_sha256(pairs_dir / "train.parquet")
    assert run["libraries"]["peft"] and run["seeds"] == {"training": 0} and run["config"]["lr"] == CFG.lr
    assert (lora_run / "tokenizer.json").exists()


def test_qlora_uses_4bit_layers_and_trains_only_the_adapter(pairs_dir: Path, tiny_model_dir: Path) -> None:
    import bitsandbytes as bnb

    model = lora_model(load_base(tiny_model_dir, qlora=True, device="cpu"), CFG, None)
    four_bit = [n for n, mod in model.named_modules() if isinstance(mod, bnb.nn.Linear4bit)]
    assert len(four_bit) == 2 * 7  # 2 layers x q,k,v,o,gate,up,down
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    train, _, _ = load_pairs_dir(pairs_dir)
    exs, _ = encode_pairs(tok, [(p.state_before, p.tactic) for p in train[:8]], 256)
    batch = CompletionCollator(tok.pad_token_id)(exs)
    model.train()
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
    out.loss.backward()
    with_grad = [n for n, p in model.named_parameters() if p.grad is not None]
    assert with_grad and all("lora_" in n for n in with_grad)
    assert all(p.grad is None for n, p in model.named_parameters() if "lora_" not in n)


def test_qlora_run_loss_falls(qlora_run: Path) -> None:
    m = TrainingMetrics.load(qlora_run)
    assert m.kind == "qlora" and m.steps == 8
    assert m.best_eval_loss < m.initial_eval_loss - 0.2, (m.initial_eval_loss, m.eval_curve)
    first = sum(p.loss for p in m.loss_curve[:2]) / 2
    last = sum(p.loss for p in m.loss_curve[-2:]) / 2
    assert last < first
    assert json.loads((qlora_run / "run.json").read_text())["config"]["qlora"] is True


def _logits(model_dir: Path) -> torch.Tensor:
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    x = tok([format_prompt("j : Nat\n⊢ j + 0 = j"), format_prompt("p : Prop\nhz : p\n⊢ p")], return_tensors="pt",
            padding=True)
    with torch.no_grad():
        return model(**x).logits


@pytest.mark.parametrize("which", ["lora_run", "qlora_run"])
def test_merge_matches_adapter(which: str, request: pytest.FixtureRequest, tiny_model_dir: Path,
                               tmp_path: Path) -> None:
    adapter = request.getfixturevalue(which)
    report = merge_adapter(adapter, tmp_path / "merged", shard_size="200KB")
    assert report.max_abs_logit_diff is not None and report.max_abs_logit_diff < 1e-4
    assert report.qlora == (which == "qlora_run")
    assert report.num_shards > 1 and "model.safetensors.index.json" in report.files
    files = [p for p in (tmp_path / "merged").iterdir() if p.is_file() and p.name != "merge.json"]
    assert report.size_bytes == sum(p.stat().st_size for p in files)
    merged = _logits(tmp_path / "merged")
    base = _logits(tiny_model_dir)
    assert (merged - base).abs().max() > 1e-2  # the adapter changed the model, so the comparison meant something
    assert json.loads((tmp_path / "merged" / "merge.json").read_text())["max_abs_logit_diff"] == \
        report.max_abs_logit_diff


def test_failed_merge_verification_keeps_the_previous_output(lora_run: Path, tmp_path: Path) -> None:
    from burnqed_core.training.merge import MergeError

    out = tmp_path / "merged"
    merge_adapter(lora_run, out, verify=False)
    before = {p.name: file_sha256(p) for p in out.iterdir()}
    with pytest.raises(MergeError, match="previous output, if any, is kept"):
        merge_adapter(lora_run, out, tolerance=-1.0)  # no merge can pass: the verification fails
    assert {p.name: file_sha256(p) for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged"]  # no temporary or set-aside directory left
    # and a verified merge replaces it
    report = merge_adapter(lora_run, out)
    assert report.max_abs_logit_diff is not None
    assert json.loads((out / "merge.json").read_text())["max_abs_logit_diff"] == report.max_abs_logit_diff
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged"]


def test_warm_start_from_adapter_and_from_merged(lora_run: Path, pairs_dir: Path, tiny_model_dir: Path,
                                                 tmp_path: Path) -> None:
    prev = TrainingMetrics.load(lora_run)
    m = _train(pairs_dir, tmp_path / "it1", tiny_model_dir, iteration=1, warm_from=lora_run)
    assert m.steps == CFG.max_steps_later and m.lr == pytest.approx(CFG.lr * CFG.lr_decay_per_iteration)
    assert m.initial_eval_loss == pytest.approx(prev.best_eval_loss, abs=1e-4)  # continues the same adapter
    merged = tmp_path / "merged"
    merge_adapter(lora_run, merged, verify=False)
    m2 = _train(pairs_dir, tmp_path / "it1m", tiny_model_dir, iteration=2, warm_from=merged)
    assert m2.initial_eval_loss == pytest.approx(prev.best_eval_loss, abs=1e-4)  # fresh adapter: B = 0
    assert m2.lr == pytest.approx(CFG.lr * CFG.lr_decay_per_iteration ** 2)
    cfg = json.loads((tmp_path / "it1m" / "adapter_config.json").read_text())
    assert Path(cfg["base_model_name_or_path"]).resolve() == merged.resolve()


def test_changed_settings_refuse_to_resume(lora_run: Path, pairs_dir: Path, tiny_model_dir: Path,
                                           tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(lora_run, copy)
    with pytest.raises(TrainingError, match="different run"):
        _train(pairs_dir, copy, tiny_model_dir, cfg=CFG.model_copy(update={"lr": 1e-3}))


def test_unpackable_4bit_layer_is_named(tmp_path: Path) -> None:
    LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=100, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1).save_pretrained(tmp_path)
    with pytest.raises(TrainingError, match=r"model\.layers\.0\.mlp\.(gate|up)_proj has out_features 100"):
        check_quantizable(tmp_path)


@pytest.mark.parametrize("qlora", [False, True])
def test_gradient_checkpointing_gives_the_same_losses(qlora: bool, lora_run: Path, qlora_run: Path, pairs_dir: Path,
                                                      tiny_model_dir: Path, tmp_path: Path) -> None:
    ref = TrainingMetrics.load(qlora_run if qlora else lora_run)
    cfg = CFG.model_copy(update={"gradient_checkpointing": True, "max_steps": 2})
    m = _train(pairs_dir, tmp_path / "gc", tiny_model_dir, cfg=cfg, qlora=qlora)
    # step 1 is before any update; step 2 after one update at the same warm-up lr in both runs
    for a, b in zip(m.loss_curve, ref.loss_curve[:2], strict=True):
        assert a.loss == pytest.approx(b.loss, rel=1e-4)


def test_prompt_format_follows_the_base_through_sft_and_merge(pairs_dir: Path, tiny_model_dir: Path,
                                                              lora_run: Path, tmp_path: Path) -> None:
    from burnqed_core.data.pairs.prompt import PLAIN, PromptFormat

    canon = PromptFormat(local_names="canonical")
    base = shutil.copytree(tiny_model_dir, tmp_path / "base")
    canon.save(base)
    out = tmp_path / "adapter"
    # the base's record wins over the config's default (names as printed)
    _train(pairs_dir, out, base, cfg=CFG.model_copy(update={"max_steps": 2, "eval_every": 2, "save_every": 2}))
    assert PromptFormat.of_model(out) == canon
    assert json.loads((out / "run.json").read_text())["prompt_version"] == canon.version
    merge_adapter(out, tmp_path / "merged", verify=False)
    assert PromptFormat.of_model(tmp_path / "merged") == canon
    # a plain base trains and merges as printed
    assert PromptFormat.of_model(lora_run) == PLAIN
    assert json.loads((lora_run / "run.json").read_text())["prompt_version"] == PLAIN.version
