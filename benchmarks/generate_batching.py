"""Batched vs one-at-a-time generation through `LocalPolicy` (issue 13).

Default workload: 32 proof states x 4 samples x 32 new tokens on the tiny
profile's model (an untrained tiny Llama built here from
``TinyModelConfig``, ~3 M parameters; untrained so that nearly every
sequence runs the full 32 tokens). Three ways to produce the same 128
sequences:

* ``one call``: one `LocalPolicy.generate_sync` for all states x samples
  (``batch_size`` >= 128, so one ``model.generate``);
* ``per state``: one call per state with n = 4;
* ``per sequence``: one call per (state, sample).

Goal: one call >= 10x faster than per sequence. ``--model DIR`` runs any
causal-LM directory instead (e.g. a merged 7B on ``--device cuda``).

    python benchmarks/generate_batching.py [--threads 2] [--repeats 1]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import torch

from burnqed_core.config import TinyModelConfig
from burnqed_core.policy.local import LocalPolicy

TEXTS = [
    "n : Nat\n⊢ n + 0 = n", "a b : Nat\n⊢ a + b = b + a", "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q",
    "xs : List Nat\n⊢ xs ++ [] = xs", "x : Int\n⊢ x - x = 0", "b : Bool\n⊢ (!!b) = b",
    "f : Nat → Nat\nh : ∀ (x : Nat), f x = x\n⊢ f 3 = 3", "⊢ ∃ n, n + 2 = 5",
    "simp", "omega", "decide", "rfl", "intro h", "exact h", "constructor", "induction n with",
    "cases h with\n| intro hp hq => exact ⟨hq, hp⟩", "simp [Nat.add_comm]", "rw [Nat.add_comm]",
]


def build_tiny(out: Path) -> Path:
    """The tiny profile's model shape, untrained, with a tokenizer trained on Lean-like lines."""
    from burnqed_core.training.tiny_model import build_tiny_model
    from burnqed_core.training.tokenizer import train_tokenizer

    cfg = TinyModelConfig()
    tok = train_tokenizer(TEXTS * 20, cfg.vocab_size)
    model = build_tiny_model(cfg, tok, seed=0)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def states(count: int) -> list[str]:
    return [f"x y : Nat\nh{i} : x + {i} = y\n⊢ y - {i} = x ∧ {i} ≤ y" for i in range(count)]


def timed(fn: object, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="a causal-LM dir (default: build the tiny model)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--states", type=int, default=32)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--repeats", type=int, default=1, help="best of N for each mode")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or build_tiny(Path(tmp) / "tiny")
        rows = args.states * args.samples
        policy = LocalPolicy(model_dir, device=args.device, batch_size=max(rows, 1), max_new_tokens=args.tokens)
        n_params = sum(p.numel() for p in policy.model.parameters())
        sts = states(args.states)
        T, k, n = args.temperature, args.tokens, args.samples
        policy.generate_sync(sts[:2], 2, T, k)  # warm-up

        produced: dict[str, int] = {}

        def one_call() -> None:
            out = policy.generate_sync(sts, n, T, k)
            produced["one call"] = sum(c.num_tokens for per in out for c in per)

        def per_state() -> None:
            out = [policy.generate_sync([s], n, T, k)[0] for s in sts]
            produced["per state"] = sum(c.num_tokens for per in out for c in per)

        def per_sequence() -> None:
            out = [policy.generate_sync([s], 1, T, k)[0] for s in sts for _ in range(n)]
            produced["per sequence"] = sum(c.num_tokens for per in out for c in per)

        times: dict[str, float] = {}
        for name, fn in (("one call", one_call), ("per state", per_state), ("per sequence", per_sequence)):
            times[name] = timed(fn, args.repeats)
            print(f"  {name}: {times[name]:.2f} s", flush=True)

    print(f"model {model_dir if args.model else 'tiny (built)'}: {n_params / 1e6:.2f} M parameters, "
          f"device {args.device}, torch threads {torch.get_num_threads()}")
    print(f"workload: {args.states} states x {n} samples x {k} new tokens, T={T}")
    print(f"{'mode':<14}{'seconds':>9}{'tokens':>8}{'tokens/s':>10}{'vs per sequence':>17}")
    for name, t in times.items():
        print(f"{name:<14}{t:>9.2f}{produced[name]:>8}{produced[name] / t:>10.0f}"
              f"{times['per sequence'] / t:>16.1f}x")
    ok = times["per sequence"] / times["one call"] >= 10
    print(f"goal (one call >= 10x per sequence): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
