"""Does a tiny policy learn to copy a lemma's name from the premises in its prompt? (issue 65)

Synthetic and self-contained (no Lean, nothing downloaded): each example is a goal ``⊢ <f> (<g> x) = <h> x``
over made-up function names, with k premise lines ``<name> : <statement>`` of which exactly one states the goal
(the others state other made-up equations), and the step ``rw [<that name>]``. A name is a fresh combination of
library-like pieces (``List.zip_mod_cons``: 10 heads, 3 of 50 pieces), so a model can only be right by reading
its prompt. A tiny model is pre-trained on ``--train`` such examples
with premises shown (`PromptFormat.premises` = k), then asked greedily on ``--test`` examples with names it
never saw: the share whose step names the right premise, against chance (1/k) and against the same model
without the premise lines in its prompt (which must guess). Pre-training's loss is on the whole text (the premise
lines' made-up words included); ``--sft-steps N`` then trains a LoRA adapter on the same examples as the loop's SFT
stage does (`burnqed_core.training.sft.train_sft`: loss on the step only) and measures the merged model.
``--premise-names canonical`` trains the model to refer to a shown premise by its place (``rw [p3]``, mapped back
to the name: `burnqed_core.data.pairs.premise_refs`) instead of spelling its name. Besides the right name, the share
of steps that name any shown premise separates copying from choosing.

    python benchmarks/premise_copy.py [--k 4] [--train 3000] [--test 200] [--steps 600] [--sft-steps 0]
        [--premise-names as_printed|canonical]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import string
import sys
import tempfile
import time
from pathlib import Path

from burnqed_core.config import TinyModelConfig, TrainingConfig
from burnqed_core.records import TacticPair

# Name pieces as a library's names are made of (the tokenizer learns them): a name is fresh as a combination.
PIECES = ("map", "append", "length", "reverse", "filter", "fold", "zip", "take", "drop", "head", "tail", "get",
          "set", "insert", "erase", "find", "sum", "prod", "min", "max", "succ", "pred", "add", "mul", "sub", "div",
          "mod", "pow", "comm", "assoc", "left", "right", "cons", "nil", "some", "none", "inj", "eq", "ne", "le",
          "lt", "mem", "count", "sort", "merge", "split", "join", "flat", "range", "iota")
HEADS = ("List", "Array", "Nat", "Int", "Option", "Fin", "Vector", "Bool", "String", "Char")


def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 7)))


def lemma_name(rng: random.Random) -> str:
    return f"{rng.choice(HEADS)}.{'_'.join(rng.sample(PIECES, 3))}"


def example(rng: random.Random, k: int) -> tuple[TacticPair, list[str], str]:
    f, g, h = word(rng), word(rng), word(rng)
    target = lemma_name(rng)
    lines = [f"{target} : ∀ x, {f} ({g} x) = {h} x"]
    while len(lines) < k:
        a, b, c = word(rng), word(rng), word(rng)
        lines.append(f"{lemma_name(rng)} : ∀ x, {a} ({b} x) = {c} x")
    rng.shuffle(lines)
    pair = TacticPair(theorem=target, state_before=f"x : Nat\n⊢ {f} ({g} x) = {h} x", tactic=f"rw [{target}]",
                      state_after="", depth=0)
    return pair, lines, target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--train", type=int, default=3000)
    ap.add_argument("--test", type=int, default=200)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sft-steps", type=int, default=0, help="then LoRA SFT (loss on the step only), merged")
    ap.add_argument("--premise-names", choices=("as_printed", "canonical"), default="as_printed")
    ap.add_argument("--show", type=int, default=0, help="print this many test goals with their target and step")
    args = ap.parse_args(argv)
    from burnqed_core.policy.local import LocalPolicy
    from burnqed_core.training.tiny_model import pretrain_base

    rng = random.Random(args.seed)
    train = [example(rng, args.k) for _ in range(args.train)]
    test = [example(rng, args.k) for _ in range(args.test)]
    lines = {p.theorem: ls for p, ls, _ in train}
    cfg = TrainingConfig(prompt_premises=args.k, premise_names=args.premise_names, device="cpu",
                         eval_every=10 ** 6, save_every=10 ** 6,
                         tiny_model=TinyModelConfig(vocab_size=1024, hidden_size=128, num_layers=4, num_heads=4,
                                                    num_kv_heads=2, intermediate_size=352, pretrain_steps=args.steps,
                                                    pretrain_lr=2e-3, pretrain_batch_size=16))
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        m = pretrain_base([p for p, _, _ in train], cfg, Path(tmp) / "model", progress=False,
                          premises=lambda p: lines[p.theorem])
        train_s = time.perf_counter() - t
        model_dir = Path(tmp) / "model"
        if args.sft_steps:
            from burnqed_core.training.merge import merge_adapter
            from burnqed_core.training.sft import train_sft

            sft_cfg = cfg.model_copy(update={"max_steps": args.sft_steps, "lr": 2e-3, "warmup_steps": 10})
            pairs = [p for p, _, _ in train]
            t = time.perf_counter()
            sft = train_sft(pairs[: len(pairs) * 9 // 10], pairs[len(pairs) * 9 // 10:], sft_cfg, Path(tmp) / "lora",
                            model_dir, progress=False, premises=lambda p: lines[p.theorem])
            merge_adapter(Path(tmp) / "lora", Path(tmp) / "merged", base_model=model_dir)
            model_dir = Path(tmp) / "merged"
            print(f"SFT: {args.sft_steps} LoRA steps in {time.perf_counter() - t:.0f} s, best eval loss "
                  f"{sft.best_eval_loss}")
        policy = LocalPolicy(model_dir, device="cpu")

        async def accuracy(show: bool) -> tuple[float, float]:
            states = [p.state_before for p, _, _ in test]
            out = await policy.generate(states, 1, 0.0, 24, seeds=list(range(len(states))),
                                        premises=[ls if show else [] for _, ls, _ in test])
            for c, (p, ls, target) in list(zip(out, test, strict=True))[:args.show]:
                print(f"[{'shown' if show else 'hidden'}] {p.state_before.splitlines()[-1]} | target {target} | "
                      f"lines {[x.split(' :')[0] for x in ls]} | step {c[0].tactic!r}")
            right = sum(f"[{target}]" in c[0].tactic for c, (_, _, target) in zip(out, test, strict=True))
            shown = sum(any(f"[{x.split(' :')[0]}]" in c[0].tactic for x in ls)
                        for c, (_, ls, _) in zip(out, test, strict=True))
            return right / len(test), shown / len(test)

        (with_lines, any_line) = asyncio.run(accuracy(True))
        without, _ = asyncio.run(accuracy(False))
        asyncio.run(policy.close())
    print(f"pre-training: {args.train} examples, {args.steps} steps in {train_s:.0f} s, final loss "
          f"{m.loss_curve[-1].loss if m.loss_curve else float('nan'):.3f}")
    print(f"names copied right on {args.test} unseen goals: {100 * with_lines:.1f}% with the {args.k} premise lines "
          f"shown, {100 * without:.1f}% without them; chance {100 / args.k:.1f}%; a shown name (right or not) "
          f"{100 * any_line:.1f}% (premise names {args.premise_names})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
