"""Generation throughput of `LocalPolicy` beside the CPU's matmul peak (issues 13, 21).

Default workload: 32 proof states x 4 samples x 32 new tokens on an untrained
tiny Llama built here (``--preset``, default ``tiny-3m``: the
``TinyModelConfig`` defaults, 3.15 M parameters; untrained so that nearly
every sequence runs the full 32 tokens). The same 128 sequences produced:

* ``one call``: one `LocalPolicy.generate_sync` for all states x samples
  (hand-written decode loop, `policy.fast_decode`);
* ``one call, generate``: the same through transformers ``generate``
  (``fast_decode=False``: what any non-Llama model uses);
* ``seeded``: one call with per-state seeds (what the search passes), and
  ``seeded, generate``: the ``generate`` path, which runs a seeded call
  state by state;
* ``per state``: one call per state with n = 4; ``per sequence``: one call
  per (state, sample) (both with the fast loop).

Beside the times it measures, in the same run and on the same torch threads,
the fp32 matmul rate of torch: square matmuls (N = 256, 512, 1024; the best
is "peak") and the model's own linear layers at the decode batch
(rows x hidden times each weight). Generation GFLOP/s counts the forward
passes a generation needs: 2 x (linear weights incl. the LM head) per
token, prompt tokens once per state (their KV cache is shared by its
samples), every generated token but the last, plus attention (4 x layers x
heads x head_dim x context per token).

    OMP_NUM_THREADS=1 python benchmarks/generate_batching.py --threads 1 [--repeats 3] [--preset small-6m]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from burnqed_core.config import TinyModelConfig
from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.policy.local import LocalPolicy, Sample
from burnqed_core.training.tiny_model import TINY_PRESETS

TEXTS = [
    "n : Nat\n⊢ n + 0 = n", "a b : Nat\n⊢ a + b = b + a", "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q",
    "xs : List Nat\n⊢ xs ++ [] = xs", "x : Int\n⊢ x - x = 0", "b : Bool\n⊢ (!!b) = b",
    "f : Nat → Nat\nh : ∀ (x : Nat), f x = x\n⊢ f 3 = 3", "⊢ ∃ n, n + 2 = 5",
    "simp", "omega", "decide", "rfl", "intro h", "exact h", "constructor", "induction n with",
    "cases h with\n| intro hp hq => exact ⟨hq, hp⟩", "simp [Nat.add_comm]", "rw [Nat.add_comm]",
]


def build_tiny(out: Path, cfg: TinyModelConfig) -> Path:
    """An untrained tiny Llama of shape ``cfg`` with a tokenizer trained on Lean-like lines."""
    from burnqed_core.training.tiny_model import build_tiny_model
    from burnqed_core.training.tokenizer import train_tokenizer

    tok = train_tokenizer(TEXTS * 20, cfg.vocab_size)
    model = build_tiny_model(cfg, tok, seed=0)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def states(count: int) -> list[str]:
    return [f"x y : Nat\nh{i} : x + {i} = y\n⊢ y - {i} = x ∧ {i} ≤ y" for i in range(count)]


def timed(fn: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def linear_shapes(model: Any) -> list[tuple[int, int]]:
    """(in, out) of every linear layer of a forward pass, LM head included."""
    return [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]


def generation_flops(model: Any, prompt_lens: Sequence[int], samples: Sequence[list[Sample]]) -> float:
    """FLOPs of the forward passes that the samples needed (see the module docstring)."""
    cfg = model.config
    per_token = 2 * sum(i * o for i, o in linear_shapes(model))
    heads = cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    attn = 4 * cfg.num_hidden_layers * heads * head_dim  # per (token, context position)
    total = 0.0
    for p, per in zip(prompt_lens, samples, strict=True):
        total += p * per_token + attn * p * (p + 1) / 2  # causal prefill, once per state
        for s in per:
            steps = max(len(s.token_ids) - 1, 0)  # the last token needs no forward pass
            total += steps * per_token + attn * sum(p + t + 1 for t in range(steps))
    return total


def matmul_rate(shapes: Sequence[tuple[int, int, int]], seconds: float = 1.0) -> float:
    """GFLOP/s of torch fp32 matmuls ``[m, k] @ [k, n]`` for ``shapes`` (m, k, n), run in turn."""
    mats = [(torch.randn(m, k), torch.randn(k, n)) for m, k, n in shapes]
    flops = sum(2 * m * k * n for m, k, n in shapes)
    for a, b in mats:  # warm-up
        a @ b
    reps, t0 = 0, time.perf_counter()
    while True:
        for a, b in mats:
            a @ b
        reps += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return flops * reps / dt / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="a causal-LM dir (default: build --preset)")
    ap.add_argument("--preset", default="tiny-3m", choices=sorted(TINY_PRESETS), help="tiny model shape to build")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--states", type=int, default=32)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--repeats", type=int, default=1, help="best of N for each mode and for the matmul rates")
    ap.add_argument("--quick", action="store_true", help="skip the slow one-at-a-time and generate() modes")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    with tempfile.TemporaryDirectory() as tmp:
        cfg = TinyModelConfig(**TINY_PRESETS[args.preset])
        model_dir = args.model or build_tiny(Path(tmp) / "tiny", cfg)
        rows = args.states * args.samples
        policy = LocalPolicy(model_dir, device=args.device, batch_size=max(rows, 1), max_new_tokens=args.tokens)
        ref = LocalPolicy(model_dir, device=args.device, batch_size=max(rows, 1), max_new_tokens=args.tokens,
                          fast_decode=False)
        model = policy.model
        n_params = sum(p.numel() for p in model.parameters())
        sts = states(args.states)
        prompt_lens = [len(policy._encode_text(format_prompt(s))) for s in sts]
        seeds = list(range(len(sts)))
        T, k, n = args.temperature, args.tokens, args.samples
        policy.generate_sync(sts[:2], 2, T, k)  # warm-up
        ref.generate_sync(sts[:2], 2, T, k)

        produced: dict[str, int] = {}
        flops: dict[str, float] = {}

        def run(name: str, fn: Callable[[], list[list[Sample]]]) -> Callable[[], None]:
            def go() -> None:
                out = fn()
                produced[name] = sum(len(s.token_ids) for per in out for s in per)
                flops[name] = generation_flops(model, prompt_lens, out)
            return go

        modes: list[tuple[str, Callable[[], None]]] = [
            ("one call", run("one call", lambda: policy.sample_sync(sts, n, T, k))),
            ("seeded", run("seeded", lambda: policy.sample_sync(sts, n, T, k, seeds=seeds))),
        ]
        if not args.quick:
            modes += [
                ("one call, generate", run("one call, generate", lambda: ref.sample_sync(sts, n, T, k))),
                ("seeded, generate", run("seeded, generate", lambda: ref.sample_sync(sts, n, T, k, seeds=seeds))),
                ("per state", run("per state", lambda: [policy.sample_sync([s], n, T, k)[0] for s in sts])),
                ("per sequence", run("per sequence", lambda: [
                    [policy.sample_sync([s], 1, T, k)[0][0] for _ in range(n)] for s in sts])),
            ]
        # The machine may be shared: every repeat measures the matmul rates right before each mode,
        # and the best of the repeats is kept for both (the figures of the quietest moments).
        hidden = model.config.hidden_size
        decode_shapes = [(rows, i, o) for i, o in linear_shapes(model)]
        square: dict[int, float] = {}
        model_rate = square_model = 0.0
        times: dict[str, float] = {}
        for _ in range(args.repeats):
            for name, fn in modes:
                for size in (256, 512, 1024):
                    square[size] = max(square.get(size, 0.0), matmul_rate([(size, size, size)], 0.3))
                model_rate = max(model_rate, matmul_rate(decode_shapes, 0.3))
                square_model = max(square_model, matmul_rate([(hidden, hidden, hidden)], 0.3))
                times[name] = min(times.get(name, float("inf")), timed(fn, 1))
                print(f"  {name}: {times[name]:.2f} s", flush=True)

    peak = max(square.values())
    print(f"model {model_dir if args.model else args.preset + ' (built, untrained)'}: "
          f"{n_params / 1e6:.2f} M parameters, hidden {hidden}, device {args.device}, "
          f"torch threads {torch.get_num_threads()}, fast decode {'on' if policy._decoder else 'off'}")
    print(f"workload: {args.states} states x {n} samples x {k} new tokens, T={T}, prompts "
          f"{min(prompt_lens)}-{max(prompt_lens)} tokens")
    print("fp32 matmul, same threads: " + ", ".join(f"{s}^3 {r:.1f}" for s, r in square.items())
          + f" GFLOP/s (peak {peak:.1f}); the model's linears at {rows} rows: {model_rate:.1f} GFLOP/s; "
          f"{hidden}^3: {square_model:.1f}")
    base = "per sequence" if "per sequence" in times else "one call"
    print(f"{'mode':<20}{'seconds':>9}{'tokens':>8}{'tokens/s':>10}{'GFLOP/s':>9}{'of peak':>9}"
          f"{'peak/x':>8}{'vs ' + base:>18}")
    for name, t in times.items():
        gf = flops[name] / t / 1e9
        print(f"{name:<20}{t:>9.2f}{produced[name]:>8}{produced[name] / t:>10.0f}{gf:>9.1f}"
              f"{gf / peak:>8.0%}{peak / gf:>8.1f}{times[base] / t:>17.1f}x")
    gf = flops["one call"] / times["one call"] / 1e9
    print(f"goal (one call within 2x of the matmul peak): {'met' if peak / gf <= 2 else 'NOT met'} "
          f"({peak / gf:.2f}x below {peak:.0f} GFLOP/s; {model_rate / gf:.2f}x below the model-shape matmul rate)")
    if "per sequence" in times:
        ok = times["per sequence"] / times["one call"] >= 10
        print(f"goal (one call >= 10x per sequence): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
