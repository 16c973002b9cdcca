"""Model fixtures: a real tokenizer and a real (untrained) tiny Llama on disk.

`tiny_model_dir` is session-scoped and takes about a second: tests of the
policy, search and EBM load it with ``AutoModelForCausalLM`` /
``AutoTokenizer`` like any HF model directory. Its outputs are random (the
model is untrained); tests must not expect sensible tactics from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import TinyModelConfig

# Lean-like goal states and tactics, enough for BPE to learn the common merges.
LEAN_TEXTS: list[str] = [
    "n : Nat\n⊢ n + 0 = n",
    "n : Nat\n⊢ 0 + n = n",
    "a b : Nat\n⊢ a + b = b + a",
    "a b c : Nat\n⊢ a + b + c = a + (b + c)",
    "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q",
    "p q : Prop\nh : p ∧ q\n⊢ q ∧ p",
    "p q : Prop\n⊢ p ∨ q → q ∨ p",
    "xs : List Nat\n⊢ xs ++ [] = xs",
    "xs ys : List Nat\n⊢ (xs ++ ys).length = xs.length + ys.length",
    "b : Bool\n⊢ (!!b) = b",
    "x : Int\n⊢ x - x = 0",
    "n : Nat\nih : n + 0 = n\n⊢ n + 1 + 0 = n + 1",
    "case zero\n⊢ 0 + 0 = 0",
    "case succ\nn : Nat\nih : 0 + n = n\n⊢ 0 + (n + 1) = n + 1",
    "f : Nat → Nat\nh : ∀ (x : Nat), f x = x\n⊢ f 3 = 3",
    "⊢ ∃ n, n + 2 = 5",
    "simp", "omega", "decide", "rfl", "trivial", "assumption",
    "intro h", "intro x y", "exact h", "exact ⟨hp, hq⟩", "constructor",
    "cases h with\n| intro hp hq => exact ⟨hq, hp⟩", "induction n with\n| zero => rfl\n| succ n ih => simp",
    "simp [Nat.add_comm]", "rw [Nat.add_comm]", "apply And.intro", "exact Or.inr hp",
    "exact ⟨3, rfl⟩", "simp [List.length_append]", "cases b <;> rfl", "rw [h]", "induction xs",
]

# Smaller than the profile's TinyModelConfig so that building and loading stay fast;
# widths still multiples of 32 so the same dir also loads in 4-bit.
FIXTURE_MODEL_CONFIG = TinyModelConfig(
    vocab_size=512, hidden_size=64, num_layers=2, num_heads=2, num_kv_heads=1,
    intermediate_size=128, max_position_embeddings=512,
)


def build_fixture_model(out_dir: Path, seed: int = 0) -> Path:
    """Train the tokenizer on `LEAN_TEXTS`, build the untrained tiny model, save both to ``out_dir``."""
    from burnqed_core.data.pairs.prompt import format_prompt
    from burnqed_core.training.tiny_model import build_tiny_model
    from burnqed_core.training.tokenizer import train_tokenizer

    # prompts too, so that the fixed prompt text becomes a few tokens (short sequences, fast tests)
    texts = LEAN_TEXTS * 4 + [format_prompt(s) for s in LEAN_TEXTS[:16]] * 2
    tok = train_tokenizer(texts, FIXTURE_MODEL_CONFIG.vocab_size, seed=seed)
    model = build_tiny_model(FIXTURE_MODEL_CONFIG, tok, seed=seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return out_dir


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HF model directory (config, safetensors, tokenizer) of an untrained tiny Llama."""
    return build_fixture_model(tmp_path_factory.mktemp("tiny_model"))


# (goal template, tactic template): {v} a variable name, {h} a hypothesis name, {k} a small number.
_PAIR_TEMPLATES: list[tuple[str, str]] = [
    ("{v} : Nat\n⊢ {v} + 0 = {v}", "simp"),
    ("{v} w : Nat\n⊢ {v} + w = w + {v}", "omega"),
    ("p q : Prop\n{h} : p\nhq : q\n⊢ p ∧ q", "exact ⟨{h}, hq⟩"),
    ("{v} : List Nat\n⊢ {v} ++ [] = {v}", "simp"),
    ("{v} y : Nat\n{h} : {v} = y\n⊢ y = {v}", "exact {h}.symm"),
    ("⊢ {k} + {k} = 2 * {k}", "decide"),
    ("p : Prop\n⊢ p → p", "intro {h}"),
    ("p : Prop\n{h} : p\n⊢ p", "exact {h}"),
]


def make_pairs(names: list[str], theorem_prefix: str = "thm") -> list:
    """Realistic (state, tactic) TacticPairs: every template instantiated for every variable name."""
    from burnqed_core.records import TacticPair

    out = []
    for i, v in enumerate(names):
        for j, (goal, tac) in enumerate(_PAIR_TEMPLATES):
            fill = {"v": v, "h": f"h{v}", "k": str(i % 7 + 1)}
            out.append(TacticPair(theorem=f"{theorem_prefix}_{v}_{j}", state_before=goal.format(**fill),
                                  tactic=tac.format(**fill), state_after="", depth=0, source="test"))
    return out


TRAIN_NAMES = ["n", "m", "k", "a", "b", "c", "x", "i"]
VAL_NAMES = ["j", "z"]


def fine_tune_tiny(base: Path, out: Path, pairs: list[tuple[str, str]], steps: int, fmt: object = None,
                   premises: list[list[str]] | None = None) -> Path:
    """A few seconds of full completion-only training of a tiny model on
    (state, tactic) pairs, in the shared prompt format (``fmt``: a
    `PromptFormat`, names as printed by default; saved with the model), so
    that it ends its tactics with EOS. ``premises``: each pair's premise lines (shown when the format shows
    premises). Saves model + tokenizer to ``out``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from burnqed_core.data.pairs.prompt import PLAIN, PromptFormat

    form = fmt if isinstance(fmt, PromptFormat) else PLAIN

    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base)
    torch.manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    examples = [form.example(s, t, premises[i] if premises else ()) for i, (s, t) in enumerate(pairs)]
    rows = [(tok(p)["input_ids"], [*tok(c, add_special_tokens=False)["input_ids"], tok.eos_token_id])
            for p, c in examples]
    width = max(len(p) + len(c) for p, c in rows)
    ids = torch.full((len(rows), width), tok.pad_token_id)
    labels = torch.full((len(rows), width), -100)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (p, c) in enumerate(rows):
        ids[i, : len(p) + len(c)] = torch.tensor(p + c)
        mask[i, : len(p) + len(c)] = 1
        labels[i, len(p): len(p) + len(c)] = torch.tensor(c)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    if fmt is not None:
        form.save(out)
    return out


# State -> tactic pairs a tiny model learns in 60 steps: enough for it to
# prove the easy theorems of the Lean search, eval and EBM tests.
SEARCH_PAIRS = [
    ("n : Nat\n⊢ n + 0 = n", "omega"),
    ("⊢ 2 + 2 = 4", "decide"),
    ("p : Prop\n⊢ p → p", "intro h"),
    ("p : Prop\nh : p\n⊢ p", "exact h"),
    ("a b : Nat\n⊢ a + b = b + a", "omega"),
    ("⊢ 3 * 3 = 9", "decide"),
]


@pytest.fixture(scope="session")
def search_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model fine-tuned on `SEARCH_PAIRS` (once per session; read only)."""
    return fine_tune_tiny(tiny_model_dir, tmp_path_factory.mktemp("search_model"), SEARCH_PAIRS, steps=60)


@pytest.fixture(scope="session")
def pairs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Train and val tactic-pair files (`make_pairs` of `TRAIN_NAMES` / `VAL_NAMES`) for the SFT tests."""
    from burnqed_core.record_io import write_parquet

    d = tmp_path_factory.mktemp("pairs")
    write_parquet(make_pairs(TRAIN_NAMES), d / "train.parquet")
    write_parquet(make_pairs(VAL_NAMES, "val"), d / "val.parquet")
    return d
