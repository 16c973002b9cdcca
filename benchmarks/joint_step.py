"""The joint LoRA + EBM step against the SFT-only step at the same SFT batch: time per step and peak memory.

Builds the tiny profile's model (untrained: step time and memory do not depend on the weights) with a BPE
tokenizer, synthetic tactic pairs and synthetic trajectories (proof paths with failed siblings), then runs the
real training loop (`burnqed_core.training.sft.run_loop` through `train_sft`) twice, each in a fresh process:
SFT alone, and with the joint extension (`burnqed_core.training.joint`: the contrastive states appended to the
SFT batch in one decoder pass, sft + λ·InfoNCE through adapter and head). The monitor runs only before the
first step (not counted: it costs one probe encoding per ``ebm.joint_monitor_every`` steps). Prints the seconds per step
of each (`TrainingMetrics.train_time_s` / steps: evaluation and checkpoints excluded) and the process's CPU
seconds per step (the figure a loaded shared machine distorts least), their ratios, and the peak resident
memory during the steps (sampled every 50 ms) with its rise over the memory held when the first step starts.

    python benchmarks/joint_step.py [--steps 20] [--threads 2] [--batch-size 8] [--joint-batch 8] [--negatives 4]
                                    [--qlora]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import torch

from burnqed_core.config import EBMConfig, LoraConfig, TinyModelConfig, TrainingConfig
from burnqed_core.records import TacticPair, TrajectoryRecord
from burnqed_core.training.loop import LoopExtension
from burnqed_core.training.tiny_model import build_tiny_model
from burnqed_core.training.tokenizer import train_tokenizer

GOALS = ["{v} : Nat\n⊢ {v} + 0 = {v}", "{v} w : Nat\nh : {v} ≤ w\n⊢ {v} + 1 ≤ w + 1",
         "p q : Prop\nh{v} : p\nhq : q\n⊢ p ∧ q", "{v} : List Nat\n⊢ ({v} ++ []).length = {v}.length"]
TACTICS = ["simp", "omega", "constructor", "intro h", "exact h", "rfl"]


def trajectories(n_theorems: int, depth: int = 4, siblings: int = 3) -> list[TrajectoryRecord]:
    """Proved searches: a path of ``depth`` states, each with ``siblings`` failed ones."""
    out: list[TrajectoryRecord] = []
    for t in range(n_theorems):
        goal = GOALS[t % len(GOALS)].format(v=f"x{t}")
        nodes: list[TrajectoryRecord] = []

        def add(parent: int, state: str, d: int, label: str, nodes: list[TrajectoryRecord] = nodes,
                t: int = t, goal: str = goal) -> int:
            nodes.append(TrajectoryRecord(theorem=f"thm{t}", iteration=0, node_id=len(nodes), parent_id=parent,
                                          state=state, goal=goal, tactic=TACTICS[len(nodes) % len(TACTICS)],
                                          depth=d, logprob=-1.0, cum_logprob=-1.0, label=label,  # type: ignore[arg-type]
                                          proved=True))
            return len(nodes) - 1

        parent = add(-1, goal, 0, "positive")
        for d in range(1, depth + 1):
            for s in range(siblings):
                add(parent, f"{goal}\nh{d}_{s} : x{t} = {s}\n⊢ False", d, "negative")
            parent = add(parent, f"{goal}\nh{d} : x{t} ≤ {d}\n⊢ x{t} + {d} ≤ {2 * d}", d, "positive")
        out.extend(nodes)
    return out


def build(out: Path, records: list[TrajectoryRecord]) -> None:
    texts = [r.state for r in records if r.state] + TACTICS * 20
    tok = train_tokenizer(texts, TinyModelConfig().vocab_size, seed=0)
    model = build_tiny_model(TinyModelConfig(), tok, seed=0)
    model.save_pretrained(out)
    tok.save_pretrained(out)


def cpu_s() -> float:
    """CPU seconds of this process so far (all its threads): what a step costs, whatever the machine's load."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakSampler(LoopExtension):
    """Wraps the extension under test (None: plain SFT) and samples the process's resident memory every 50 ms
    from the first step on: the steps' peak, and the memory held when they start (model, optimiser, data)."""

    def __init__(self, inner: LoopExtension) -> None:
        self.inner = inner
        self.at_start: float | None = None
        self.peak = 0.0
        self.cpu_start = self.cpu_end = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, rss_mb())

    def param_groups(self) -> list[dict[str, Any]]:
        return self.inner.param_groups()

    def micro_loss(self, model: Any, batch: dict[str, Any], n_target: int, step: int,
                   last: bool) -> tuple[Any, float]:
        if self._thread is None:
            self.at_start = self.peak = rss_mb()
            self.cpu_start = cpu_s()
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self.inner.micro_loss(model, batch, n_target, step, last)

    def after_step(self, step: int, sft_loss: float) -> None:
        self.inner.after_step(step, sft_loss)

    def stop(self) -> None:
        self.cpu_end = cpu_s()
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


class Measured:
    """The `ExtensionFactory` of a mode: the joint training's, or none, under a `PeakSampler`."""

    def __init__(self, joint: Any) -> None:
        self.joint = joint
        self.sampler: PeakSampler | None = None

    def signature(self) -> dict[str, Any]:
        return self.joint.signature() if self.joint is not None else {}

    def build(self, model: Any, tokenizer: Any, fmt: Any, device: str) -> LoopExtension:
        inner = self.joint.build(model, tokenizer, fmt, device) if self.joint is not None else LoopExtension()
        self.sampler = PeakSampler(inner)
        return self.sampler

    def finish(self, ext: LoopExtension, best: Path | None, out: Path, aborted: Any) -> None:
        if self.sampler is not None:
            self.sampler.stop()


def run_mode(args: argparse.Namespace) -> dict[str, Any]:
    """One mode in this process: seconds per step, peak RSS, peak above the RSS before the loop."""
    from burnqed_core.training.joint import JointTraining, joint_data
    from burnqed_core.training.sft import train_sft

    torch.set_num_threads(args.threads)
    records = trajectories(48)
    pairs = [TacticPair(theorem=r.theorem, state_before=r.state, tactic=r.tactic, state_after="", depth=r.depth)
             for r in records if r.state]
    cfg = TrainingConfig(lr=1e-3, max_steps=args.steps, warmup_steps=2, batch_size=args.batch_size,
                         eval_every=10**6, save_every=10**6, max_seq_len=512, lora=LoraConfig(r=8, alpha=16),
                         device="cpu")
    ebm = EBMConfig(joint=True, joint_batch_size=args.joint_batch, num_negatives=args.negatives,
                    joint_monitor_every=10**6, joint_probe_states=32)
    joint = JointTraining(cfg=ebm, jd=joint_data(records, ebm), max_prompt_tokens=1024) if args.mode == "joint" \
        else None
    measured = Measured(joint)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        m = train_sft(pairs, pairs[:16], cfg, tmp, args.model, progress=False, extension=measured, qlora=args.qlora)
    assert measured.sampler is not None and measured.sampler.at_start is not None
    sampler = measured.sampler
    return {"mode": args.mode, "step_s": m.train_time_s / max(m.steps, 1), "steps": m.steps,
            "cpu_step_s": (sampler.cpu_end - sampler.cpu_start) / max(m.steps, 1),
            "wall_s": time.perf_counter() - t0, "peak_rss_mb": measured.sampler.peak,
            "rss_at_start_mb": measured.sampler.at_start,
            "process_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "trainable": m.trainable_params}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--joint-batch", type=int, default=8)
    p.add_argument("--negatives", type=int, default=4)
    p.add_argument("--qlora", action="store_true", help="a 4-bit NF4 base (bitsandbytes on CPU), as prod's 7B")
    p.add_argument("--mode", choices=("sft", "joint"), help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.mode:
        print(json.dumps(run_mode(args)))
        return
    load = os.getloadavg()[0]  # step times on a shared machine are worth what its load lets them be
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), trajectories(48))
        res = {}
        for mode in ("sft", "joint"):
            cmd = [sys.executable, __file__, "--mode", mode, "--model", tmp, *sys.argv[1:]]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            res[mode] = json.loads(out.strip().splitlines()[-1])
    texts = args.joint_batch * (1 + args.negatives + 1)
    print(f"load average at the start {load:.2f}, at the end {os.getloadavg()[0]:.2f}")
    base = "tiny profile model" + (" (QLoRA: 4-bit NF4 base)" if args.qlora else "")
    print(f"{base}, CPU, {args.threads} threads, {args.steps} steps, SFT batch {args.batch_size}; "
          f"joint: + {args.joint_batch} positives x (1 + {args.negatives} negatives) + goals (<= {texts} state "
          f"prompts) in the same decoder pass")
    for mode, r in res.items():
        print(f"  {mode:5s}: {r['step_s'] * 1000:7.1f} ms/step wall, {r['cpu_step_s'] * 1000:7.1f} ms/step CPU; "
              f"during the steps peak RSS {r['peak_rss_mb']:7.1f} MB ({r['peak_rss_mb'] - r['rss_at_start_mb']:+.1f} "
              f"MB over the first step's start); process peak {r['process_peak_mb']:.1f} MB; "
              f"{r['trainable']:,} trainable params")
    print(f"  joint / SFT step time: {res['joint']['step_s'] / res['sft']['step_s']:.2f}x wall, "
          f"{res['joint']['cpu_step_s'] / res['sft']['cpu_step_s']:.2f}x CPU; peak RSS during the steps "
          f"{res['joint']['peak_rss_mb'] - res['sft']['peak_rss_mb']:+.1f} MB")


if __name__ == "__main__":
    main()
