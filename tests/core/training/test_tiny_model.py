"""Tokenizer and tiny model: build, save, reload identically."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from burnqed_core.config import TinyModelConfig
from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.errors import DataError, ProfileError
from burnqed_core.training.tiny_model import build_tiny_model
from burnqed_core.training.tokenizer import train_tokenizer
from tests.fixtures_models import FIXTURE_MODEL_CONFIG, LEAN_TEXTS


def test_tokenizer_roundtrips_unicode_and_persists_left_padding(tmp_path: Path) -> None:
    tok = train_tokenizer(LEAN_TEXTS * 3, 400, out_dir=tmp_path, seed=1)
    text = "h : ∀ (x : ℕ), f x = x\n⊢ f 3 = 3 ∧ ¬False → ⟨a, b⟩"
    ids = tok(text)["input_ids"]
    assert ids[0] == tok.bos_token_id
    assert tok.decode(ids, skip_special_tokens=True) == text
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    assert reloaded.padding_side == "left"
    assert reloaded(text)["input_ids"] == ids
    assert (reloaded.pad_token, reloaded.bos_token, reloaded.eos_token) == ("<pad>", "<s>", "</s>")
    batch = reloaded(["simp", "intro h\nexact h"], padding=True)
    assert batch["input_ids"][0][0] == reloaded.pad_token_id  # left padded
    assert len(tok) <= 400


def test_tokenizer_is_deterministic(tmp_path: Path) -> None:
    a = train_tokenizer(LEAN_TEXTS, 400, out_dir=tmp_path / "a")
    b = train_tokenizer(LEAN_TEXTS, 400, out_dir=tmp_path / "b")
    assert (tmp_path / "a" / "tokenizer.json").read_bytes() == (tmp_path / "b" / "tokenizer.json").read_bytes()
    assert a.get_vocab() == b.get_vocab()


def test_tokenizer_rejects_empty_corpus() -> None:
    with pytest.raises(DataError):
        train_tokenizer([], 512)


def test_tiny_model_reloads_identically(tiny_model_dir: Path) -> None:
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    assert model.config.vocab_size % 32 == 0 and model.config.vocab_size >= len(tok)
    rebuilt = build_tiny_model(FIXTURE_MODEL_CONFIG, tok, seed=0).eval()
    other_seed = build_tiny_model(FIXTURE_MODEL_CONFIG, tok, seed=1).eval()
    x = tok([format_prompt("n : Nat\n⊢ n + 0 = n"), format_prompt("⊢ True")], return_tensors="pt", padding=True)
    with torch.no_grad():
        a = model(**x).logits
        b = rebuilt(**x).logits
        c = other_seed(**x).logits
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear):
            assert mod.out_features % 32 == 0, name


def test_tiny_config_widths_checked(tmp_path: Path) -> None:
    tok = train_tokenizer(LEAN_TEXTS, 300)
    with pytest.raises(ProfileError, match="intermediate_size"):
        build_tiny_model(TinyModelConfig(hidden_size=64, num_heads=2, num_kv_heads=1, intermediate_size=100), tok)
    with pytest.raises(ProfileError, match="num_heads"):
        build_tiny_model(TinyModelConfig(hidden_size=64, num_heads=3, num_kv_heads=1), tok)


def test_split_digits_keeps_every_digit_a_token(tmp_path: Path) -> None:
    """With ``split_digits`` no token holds two digits, even for numbers frequent enough to merge, the text
    round-trips, and the saved tokenizer loads with the same behaviour; without it the frequent number merges."""
    texts = [f"refine ⟨24 :: List.replicate ({n} - 1) 0, ?_⟩ h₁ 2024" for n in range(2, 9)] * 20 + LEAN_TEXTS
    split = train_tokenizer(texts, 400, out_dir=tmp_path, split_digits=True)
    merged = train_tokenizer(texts, 400)
    line = "refine ⟨24 :: List.replicate (5 - 1) 0, ?_⟩ h₁ 2024"
    for tok in (split, AutoTokenizer.from_pretrained(tmp_path)):
        pieces = [tok.decode([i]) for i in tok(line)["input_ids"]]
        assert not [p for p in pieces if sum(c.isdigit() for c in p) > 1]
        assert tok.decode(tok(line)["input_ids"], skip_special_tokens=True) == line
    assert any(sum(c.isdigit() for c in merged.decode([i])) > 1 for i in merged(line)["input_ids"])
    assert not TinyModelConfig().split_digits  # measured no better on the witness families (issue 21)
