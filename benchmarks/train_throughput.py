"""Training throughput: LoRA vs QLoRA, tokens per second through `train_sft`.

Builds an untrained model from a config (throughput does not depend on the
weights) with a BPE tokenizer trained on synthetic Lean goals, then runs a
short SFT of each kind through the real training loop (completion-only
collator, AdamW, cosine schedule, checkpoint at the end) and prints
``TrainingMetrics.tokens_per_s`` (non-padding input tokens per second of
training steps; evaluation and checkpoint time excluded).

* CPU: the tiny profile's model (`TinyModelConfig` defaults, ~3 M parameters).
* CUDA, when available: also a ~110 M-parameter Llama (hidden 768, 12 layers,
  intermediate 2048, vocabulary 32k) built from config.

    python benchmarks/train_throughput.py [--steps 20] [--threads 2] [--batch-size 16] [--no-gpu]
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
from pathlib import Path

import torch

from burnqed_core.config import LoraConfig, TinyModelConfig, TrainingConfig
from burnqed_core.records import TacticPair
from burnqed_core.training.tiny_model import build_tiny_model
from burnqed_core.training.tokenizer import train_tokenizer

GOALS = [
    ("{v} : Nat\n⊢ {v} + 0 = {v}", "simp"),
    ("{v} w : Nat\nh{v} : {v} ≤ w\n⊢ {v} + 1 ≤ w + 1", "omega"),
    ("p q : Prop\nh{v} : p\nhq : q\n⊢ p ∧ q", "exact ⟨h{v}, hq⟩"),
    ("{v} : List Nat\n⊢ ({v} ++ []).length = {v}.length", "simp [List.append_nil]"),
    ("{v} : Nat\nih : f {v} = 2 * {v}\n⊢ f ({v} + 1) = 2 * ({v} + 1)", "simp [f, ih]\nomega"),
    ("t : Tree\n{v} : Nat\n⊢ (t.insert {v}).size = t.size + 1",
     "induction t with\n| leaf => rfl\n| node l x r ihl ihr => simp_all [Tree.insert, Tree.size]; omega"),
]
NAMES = ["n", "m", "k", "a", "b", "c", "x", "y", "i", "j", "u", "z"]

BIG_MODEL = TinyModelConfig(vocab_size=32000, hidden_size=768, num_layers=12, num_heads=12, num_kv_heads=12,
                            intermediate_size=2048, max_position_embeddings=2048)


def synthetic_pairs(n: int, seed: int = 0) -> list[TacticPair]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        goal, tac = GOALS[i % len(GOALS)]
        v = rng.choice(NAMES)
        out.append(TacticPair(theorem=f"t{i}", state_before=goal.format(v=v), tactic=tac.format(v=v),
                              state_after="", depth=0))
    return out


def build_model_dir(cfg: TinyModelConfig, out: Path, pairs: list[TacticPair]) -> int:
    """Tokenizer + untrained model saved to ``out``; returns the parameter count."""
    texts = [p.state_before + "\n" + p.tactic for p in pairs]
    tok = train_tokenizer(texts, cfg.vocab_size)
    model = build_tiny_model(cfg, tok, seed=0)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return sum(p.numel() for p in model.parameters())


def run(kind: str, base: Path, pairs: list[TacticPair], steps: int, batch_size: int, device: str,
        work: Path) -> tuple[float, int]:
    from burnqed_core.training.sft import train_sft

    cfg = TrainingConfig(max_steps=steps, warmup_steps=1, batch_size=batch_size, eval_every=10**6,
                         save_every=10**6, max_seq_len=512, device=device, lr=1e-4,
                         lora=LoraConfig(r=16, alpha=32, dropout=0.05))
    m = train_sft(pairs, [], cfg, work / f"{kind}-{device}", base, qlora=(kind == "qlora"), progress=False)
    return m.tokens_per_s, m.trainable_params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--no-gpu", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.threads:
        torch.set_num_threads(args.threads)
    pairs = synthetic_pairs(512)
    setups = [("tiny profile model", TinyModelConfig(), "cpu")]
    if torch.cuda.is_available() and not args.no_gpu:
        setups += [("tiny profile model", TinyModelConfig(), "cuda"), ("110M Llama from config", BIG_MODEL, "cuda")]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"{'model':<24} {'params':>10} {'device':>6} {'kind':>6} {'trainable':>10} {'tokens/s':>10}")
        for label, mcfg, device in setups:
            base = work / f"base-{mcfg.hidden_size}"
            if not base.exists():
                n_params = build_model_dir(mcfg, base, pairs)
            for kind in ("lora", "qlora"):
                tps, trainable = run(kind, base, pairs, args.steps, args.batch_size, device, work)
                print(f"{label:<24} {n_params / 1e6:>9.1f}M {device:>6} {kind:>6} {trainable:>10,} {tps:>10.0f}",
                      flush=True)
    print(f"({args.steps} steps x batch {args.batch_size}, torch threads {torch.get_num_threads()})")


if __name__ == "__main__":
    main()
