"""Training and generation throughput of the tiny model presets (issue 21: which size fits the budget).

For every preset of ``burnqed_core.training.tiny_model.TINY_PRESETS`` (an
untrained model, vocabulary 1024):

* full training (what ``pretrain_base`` does: every weight, AdamW) and LoRA
  training (r=8 on every linear layer, as the tiny profile's SFT), batch 16
  of ``--seq-len`` tokens: tokens/s and seconds per step;
* generation through `LocalPolicy` with per-state seeds (what the search
  calls): ``--states`` states x ``--samples`` samples x ``--tokens`` new
  tokens, tokens/s;
* the projected time of the tiny job's pre-training (300 steps) and
  iteration-0 LoRA (150 steps) from the seconds per step measured here, scaled
  by the ratio to the first preset's, against what docs/techniques.md measured for it
  (``--pretrain-s``, ``--lora-s``).

    python benchmarks/model_size.py --threads 2 [--presets tiny-1m tiny-3m small-5m small-7m]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import torch

from burnqed_core.policy.local import LocalPolicy
from burnqed_core.training.tiny_model import TINY_PRESETS, build_tiny_model, tiny_preset
from burnqed_core.training.tokenizer import train_tokenizer

sys.path.insert(0, str(Path(__file__).parent))
from generate_batching import TEXTS, states


def train_step_seconds(model: torch.nn.Module, batch: int, seq_len: int, steps: int, lora: bool) -> float:
    """Best seconds per optimizer step (forward, backward, AdamW) on random tokens."""
    if lora:
        from peft import LoraConfig, get_peft_model

        targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules=targets))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-3)
    vocab = model.config.vocab_size
    gen = torch.Generator().manual_seed(0)
    best = float("inf")
    for i in range(steps + 1):
        ids = torch.randint(0, vocab, (batch, seq_len), generator=gen)
        t0 = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i:  # the first step warms up
            best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=list(TINY_PRESETS), choices=sorted(TINY_PRESETS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--steps", type=int, default=4, help="timed training steps per mode (best kept)")
    ap.add_argument("--states", type=int, default=8)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--pretrain-s", type=float, default=117.0, help="measured pre-training time of the first preset")
    ap.add_argument("--lora-s", type=float, default=204.0, help="measured iteration-0 LoRA time of the first preset")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(args.threads)
    tok = train_tokenizer(TEXTS * 20, 1024)
    sts = states(args.states)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.presets:
            cfg = tiny_preset(name)
            model = build_tiny_model(cfg, tok, seed=0)
            n_params = sum(p.numel() for p in model.parameters())
            d = Path(tmp) / name
            model.save_pretrained(d)
            tok.save_pretrained(d)
            full = train_step_seconds(build_tiny_model(cfg, tok, seed=0), args.batch, args.seq_len, args.steps, False)
            lora = train_step_seconds(build_tiny_model(cfg, tok, seed=0), args.batch, args.seq_len, args.steps, True)
            policy = LocalPolicy(d, batch_size=args.states * args.samples, max_new_tokens=args.tokens)
            policy.generate_sync(sts[:2], 2, 1.0)
            gen_best, produced = float("inf"), 0
            for rep in range(args.repeats):
                t0 = time.perf_counter()
                out = policy.sample_sync(sts, args.samples, 1.0, seeds=[rep * 1000 + i for i in range(len(sts))])
                gen_best = min(gen_best, time.perf_counter() - t0)
                produced = sum(len(s.token_ids) for per in out for s in per)
            rows.append((name, n_params, full, lora, produced / gen_best))
            print(f"  {name}: done", flush=True)
    tokens = args.batch * args.seq_len
    print(f"torch threads {torch.get_num_threads()}; training batch {args.batch} x {args.seq_len} tokens; "
          f"generation {args.states} states x {args.samples} samples x {args.tokens} tokens, seeded")
    print(f"{'preset':<10}{'params':>8}{'full tok/s':>12}{'LoRA tok/s':>12}{'gen tok/s':>11}"
          f"{'pretrain 300 (proj.)':>22}{'LoRA 150 (proj.)':>18}")
    f0, l0 = rows[0][2], rows[0][3]
    for name, n, full, lora, gen in rows:
        print(f"{name:<10}{n / 1e6:>7.2f}M{tokens / full:>12.0f}{tokens / lora:>12.0f}{gen:>11.0f}"
              f"{args.pretrain_s * full / f0:>21.0f}s{args.lora_s * lora / l0:>17.0f}s")


if __name__ == "__main__":
    main()
