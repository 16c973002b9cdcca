"""The training loop of SFT, the tiny base's pre-training and joint LoRA + EBM training, resumable after a kill.

* the sample order is a pure function of (seed, micro-batch index) (`SampleOrder`): epoch ``e`` is a
  permutation drawn from a generator seeded with ``(seed, e)``;
* a checkpoint every ``save_every`` steps and at the end (`burnqed_core.training.checkpoints`); after a kill the
  loop reloads the newest and continues, so a resumed run ends with the same step count (and on CPU the same
  weights) as an uninterrupted one;
* every checkpoint carries the validation loss at its step; the run's result is the checkpoint with the best
  eval loss (seed 000, iteration 2: eval loss plateaued while training continued). Loss is token-weighted over
  all micro-batches of a step, on the tactic tokens + EOS only (`collate`).

A variant of the step plugs in through `LoopExtension` (extra parameter groups, the micro-batch loss, a
monitor after each step, state in every checkpoint): the joint LoRA + EBM training
(`burnqed_core.training.joint`) is the loop with its extension, not a copy of it. A monitor that aborts
(`LoopAborted`) leaves the last checkpoint saved before the abort as the run's result.
"""

from __future__ import annotations

import json
import logging
import math
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from burnqed_core.errors import DataError, ProfileError, TrainingError
from burnqed_core.training.checkpoints import (
    CHECKPOINTS,
    STATE_FILE,
    list_checkpoints,
    load_trainable,
    prune_checkpoints,
    save_checkpoint,
    set_rng_state,
)
from burnqed_core.training.collate import IGNORE_INDEX, CompletionCollator, Example, length_groups
from burnqed_core.training.metrics import EvalPoint, LossPoint, TrainingMetrics
from burnqed_core.training.schedule import lr_schedule

log = logging.getLogger(__name__)

class LoopAborted(TrainingError):
    """A `LoopExtension`'s monitor stopped the run: ``condition`` crossed at ``step``. `run_loop` fills in
    ``best`` (the last checkpoint saved before that step, or None) and ``metrics`` before it re-raises."""

    def __init__(self, condition: str, step: int, message: str) -> None:
        super().__init__(message)
        self.condition = condition
        self.step = step
        self.best: Path | None = None
        self.metrics: TrainingMetrics | None = None


# ----------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class LoopSettings:
    """What the loop needs; derived from `TrainingConfig` (and the iteration)."""

    kind: str
    lr: float
    max_steps: int
    warmup_steps: int
    batch_size: int
    grad_accum: int
    eval_every: int
    save_every: int
    seed: int
    max_grad_norm: float = 1.0
    keep_checkpoints: int = 1
    lr_schedule: str = "cosine"
    min_lr_ratio: float = 0.0
    length_groups: int = 1


def resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ProfileError(f"training.device is {name!r} but no CUDA device is available")
    return name


class SampleOrder:
    """Deterministic infinite stream of example indices: one seeded permutation per epoch."""

    def __init__(self, n: int, seed: int) -> None:
        if n <= 0:
            raise DataError("no training examples")
        self.n = n
        self.seed = seed
        self._perms: dict[int, list[int]] = {}

    def _perm(self, epoch: int) -> list[int]:
        import torch

        if epoch not in self._perms:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._perms = {epoch: torch.randperm(self.n, generator=g).tolist()}
        return self._perms[epoch]

    def take(self, start: int, count: int) -> list[int]:
        out = []
        for k in range(start, start + count):
            out.append(self._perm(k // self.n)[k % self.n])
        return out


# ----------------------------------------------------------------------------- the loop


def evaluate(model: Any, examples: Sequence[Example], collator: CompletionCollator, batch_size: int,
             device: str) -> float:
    """Token-weighted mean cross-entropy over the target tokens of ``examples``."""
    import torch

    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    by_length = sorted(examples, key=lambda ex: len(ex.input_ids))  # each batch pads to its own longest
    with torch.no_grad():
        for i in range(0, len(by_length), batch_size):
            batch = {k: v.to(device) for k, v in collator(by_length[i:i + batch_size]).items()}
            loss_sum, n = token_loss_sum(model, batch)
            total += float(loss_sum)
            count += n
    if was_training:
        model.train()
    return total / max(count, 1)


def token_loss_sum(model: Any, batch: dict[str, Any]) -> tuple[Any, int]:
    """(sum of token cross-entropies over labelled positions, their count)."""

    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False)
    return token_loss_from_logits(out.logits, batch["labels"])


def token_loss_from_logits(logits: Any, labels: Any) -> tuple[Any, int]:
    """(sum of next-token cross-entropies of ``logits`` ``[B, T, V]`` at the labelled positions, their count)."""
    import torch.nn.functional as F

    logits = logits[:, :-1, :].float()
    labels = labels[:, 1:]
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1),
                           ignore_index=IGNORE_INDEX, reduction="sum")
    return loss, int((labels != IGNORE_INDEX).sum())


class LoopExtension:
    """What a variant of the SFT loop adds to each step; this base adds nothing (plain SFT). The joint LoRA +
    EBM training (`burnqed_core.training.joint`) overrides it: an energy head's parameter groups, a loss that
    rides on the SFT forward, a monitor after each step and the head in every checkpoint."""

    def param_groups(self) -> list[dict[str, Any]]:
        """Extra optimiser groups (each with its own ``lr``), clipped apart from the model's."""
        return []

    def micro_loss(self, model: Any, batch: dict[str, Any], n_target: int, step: int,
                   last: bool) -> tuple[Any, float]:
        """(the loss of one micro-batch of the step to backpropagate, its SFT part for the loss curve);
        ``last``: the step's last micro-batch."""
        loss_sum, _ = token_loss_sum(model, batch)
        loss = loss_sum / max(n_target, 1)
        return loss, float(loss.detach())

    def after_step(self, step: int, sft_loss: float) -> None:
        """Called after the optimiser step ``step`` (1-based), before any eval or checkpoint of that step."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` gave (a resumed run, or the best checkpoint)."""


@dataclass
class _Loop:
    """What the steps of `run_loop` share."""

    model: Any
    train: Sequence[Example]
    val: Sequence[Example]
    s: LoopSettings
    run_dir: Path
    collator: CompletionCollator
    device: str
    optimizer: Any
    scheduler: Any
    params: list[Any]
    ext: LoopExtension
    order: SampleOrder
    t_start: float
    wall_offset: float = 0.0


def _optimizer(params: list[Any], extra: list[dict[str, Any]], s: LoopSettings) -> tuple[Any, Any]:
    import torch

    optimizer = torch.optim.AdamW([{"params": params}, *extra], lr=s.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_schedule(s.warmup_steps, s.max_steps, s.lr_schedule,
                                                                      s.min_lr_ratio))
    return optimizer, scheduler


def _start_state(loop: _Loop, signature: str, resume: bool, metrics: TrainingMetrics) -> dict[str, Any]:
    """A fresh loop state, or the newest checkpoint's (model, optimiser, scheduler, RNG and extension
    reloaded) when ``resume``; without it old checkpoints are removed."""
    import torch

    run_dir, s = loop.run_dir, loop.s
    state: dict[str, Any] = {"step": 0, "signature": signature, "loss_curve": [], "eval_curve": [],
                             "tokens_seen": 0, "target_tokens_seen": 0, "train_time_s": 0.0, "wall_time_s": 0.0,
                             "initial_eval_loss": None}
    for stale in (run_dir / CHECKPOINTS).glob(".tmp-*"):  # a save cut short by a kill
        shutil.rmtree(stale, ignore_errors=True)
    ckpts = list_checkpoints(run_dir)
    if ckpts and not resume:
        shutil.rmtree(run_dir / CHECKPOINTS)
        ckpts = []
    torch.manual_seed(s.seed)
    random.seed(s.seed)
    if not ckpts:
        return state
    latest = ckpts[-1]
    saved_state = json.loads((latest / STATE_FILE).read_text(encoding="utf-8"))
    if saved_state.get("signature") != signature:
        raise TrainingError(
            f"{run_dir}: has checkpoints of a different run (settings or data changed); "
            "use a new output dir or start fresh (--no-resume)")
    load_trainable(loop.model, latest)
    blob = torch.load(latest / "optim.pt", weights_only=False, map_location="cpu")
    loop.optimizer.load_state_dict(blob["optimizer"])
    loop.scheduler.load_state_dict(blob["scheduler"])
    set_rng_state(blob["rng"])
    loop.ext.load_state_dict(blob.get("extension") or {})
    metrics.resumed_from_step = saved_state["step"]
    log.info("resuming %s from %s (step %d of %d)", s.kind, latest, saved_state["step"], s.max_steps)
    return dict(saved_state)


def _train_step(loop: _Loop, state: dict[str, Any]) -> tuple[float, float, float]:
    """One optimiser step over ``grad_accum`` micro-batches: (loss, grad norm, learning rate)."""
    import torch

    s, step = loop.s, state["step"]
    micro = [loop.order.take((step * s.grad_accum + m) * s.batch_size, s.batch_size) for m in range(s.grad_accum)]
    batches = [loop.collator(group) for idx in micro
               for group in length_groups([loop.train[i] for i in idx], s.length_groups)]
    n_target = sum(int((b["labels"] != IGNORE_INDEX).sum()) for b in batches)
    loop.optimizer.zero_grad(set_to_none=True)
    step_loss = 0.0
    for m, b in enumerate(batches):
        b = {k: v.to(loop.device) for k, v in b.items()}
        loss, sft_part = loop.ext.micro_loss(loop.model, b, n_target, step, m == len(batches) - 1)
        loss.backward()
        step_loss += sft_part
        state["tokens_seen"] += int(b["attention_mask"].sum())
    state["target_tokens_seen"] += n_target
    grad_norm = float(torch.nn.utils.clip_grad_norm_(loop.params, s.max_grad_norm))
    extra = [p for g in loop.ext.param_groups() for p in g["params"]]
    if extra:
        torch.nn.utils.clip_grad_norm_(extra, s.max_grad_norm)
    lr = loop.scheduler.get_last_lr()[0]
    loop.optimizer.step()
    loop.scheduler.step()
    return step_loss, grad_norm, lr


def _eval_and_save(loop: _Loop, state: dict[str, Any], step: int, step_loss: float) -> None:
    """Eval at ``eval_every`` and at each save; checkpoint at ``save_every`` and at the last step."""
    s = loop.s
    do_save = step == s.max_steps or step % s.save_every == 0
    if loop.val and (do_save or step % s.eval_every == 0):
        ev = evaluate(loop.model, loop.val, loop.collator, s.batch_size, loop.device)
        state["eval_curve"].append({"step": step, "eval_loss": ev,
                                    "checkpoint": f"step-{step:06d}" if do_save else ""})
        log.info("%s step %d: train loss %.4f, eval loss %.4f", s.kind, step, step_loss, ev)
    if do_save:
        state["wall_time_s"] = loop.wall_offset + time.perf_counter() - loop.t_start
        save_checkpoint(loop.run_dir, step, loop.model, loop.optimizer, loop.scheduler, state,
                        extension=loop.ext.state_dict())
        prune_checkpoints(loop.run_dir, s.keep_checkpoints, _best_checkpoint_name(state))


def _steps(loop: _Loop, state: dict[str, Any], progress: bool) -> None:
    from tqdm.auto import tqdm

    s = loop.s
    bar = tqdm(total=s.max_steps, initial=state["step"], desc=f"train {s.kind}", unit="step",
               disable=not progress, mininterval=1.0)
    try:
        while state["step"] < s.max_steps:
            t0 = time.perf_counter()
            step_loss, grad_norm, lr = _train_step(loop, state)
            state["train_time_s"] += time.perf_counter() - t0
            state["step"] = step = state["step"] + 1
            if not math.isfinite(step_loss):
                raise TrainingError(f"{s.kind}: loss is {step_loss} at step {step}; lower the learning rate")
            state["loss_curve"].append({"step": step, "loss": step_loss, "lr": lr, "grad_norm": grad_norm})
            bar.update(1)
            bar.set_postfix(loss=f"{step_loss:.3f}", lr=f"{lr:.2e}", refresh=False)
            loop.ext.after_step(step, step_loss)
            _eval_and_save(loop, state, step, step_loss)
    finally:
        bar.close()


def run_loop(
    model: Any,
    train: Sequence[Example],
    val: Sequence[Example],
    settings: LoopSettings,
    run_dir: Path,
    pad_token_id: int,
    metrics: TrainingMetrics,
    device: str,
    signature: str,
    resume: bool = True,
    progress: bool = True,
    started: float | None = None,
    extension: LoopExtension | None = None,
) -> tuple[TrainingMetrics, Path | None]:
    """Train ``model``'s trainable parameters; return the metrics and the best checkpoint.

    Resumes from the newest checkpoint in ``run_dir`` when ``resume`` (its
    signature must match); otherwise old checkpoints are removed first.
    ``started``: `time.perf_counter()` when this session began (wall time counts loading too).
    ``extension``: what a variant adds to each step (`LoopExtension`; None: plain SFT).
    """
    s = settings
    ext = extension or LoopExtension()
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise TrainingError("the model has no trainable parameters")
    optimizer, scheduler = _optimizer(params, ext.param_groups(), s)
    loop = _Loop(model=model, train=train, val=val, s=s, run_dir=run_dir, collator=CompletionCollator(pad_token_id),
                 device=device, optimizer=optimizer, scheduler=scheduler, params=params, ext=ext,
                 order=SampleOrder(len(train), s.seed),
                 t_start=time.perf_counter() if started is None else started)
    state = _start_state(loop, signature, resume, metrics)
    if state["step"] == 0 and val and state["initial_eval_loss"] is None:
        state["initial_eval_loss"] = evaluate(model, val, loop.collator, s.batch_size, device)
        log.info("%s: eval loss before training %.4f", s.kind, state["initial_eval_loss"])
    model.train()
    loop.wall_offset = state["wall_time_s"]
    try:
        _steps(loop, state, progress)
    except LoopAborted as e:  # keep the last good checkpoint: the latest one saved before the abort
        e.best = (list_checkpoints(run_dir) or [None])[-1]
        state["wall_time_s"] = loop.wall_offset + time.perf_counter() - loop.t_start
        e.metrics = _fill_metrics(metrics, state, s)
        raise
    best_name = _best_checkpoint_name(state)
    best = run_dir / CHECKPOINTS / best_name if best_name else (list_checkpoints(run_dir) or [None])[-1]
    state["wall_time_s"] = loop.wall_offset + time.perf_counter() - loop.t_start
    _fill_metrics(metrics, state, s)
    return metrics, best


def _best_checkpoint_name(state: dict[str, Any]) -> str | None:
    saved = [e for e in state["eval_curve"] if e["checkpoint"]]
    if not saved:
        return None
    return min(saved, key=lambda e: (e["eval_loss"], -e["step"]))["checkpoint"]


def _fill_metrics(m: TrainingMetrics, state: dict[str, Any], s: LoopSettings) -> TrainingMetrics:
    m.steps = state["step"]
    m.max_steps = s.max_steps
    m.lr = s.lr
    m.loss_curve = [LossPoint(**p) for p in state["loss_curve"]]
    m.eval_curve = [EvalPoint(**p) for p in state["eval_curve"]]
    m.initial_eval_loss = state["initial_eval_loss"]
    m.final_train_loss = state["loss_curve"][-1]["loss"] if state["loss_curve"] else None
    best = _best_checkpoint_name(state)
    if best:
        e = next(e for e in state["eval_curve"] if e["checkpoint"] == best)
        m.best_step, m.best_eval_loss = e["step"], e["eval_loss"]
    else:
        m.best_step = state["step"]
    m.tokens_seen = state["tokens_seen"]
    m.target_tokens_seen = state["target_tokens_seen"]
    m.train_time_s = state["train_time_s"]
    m.wall_time_s = state["wall_time_s"]
    m.tokens_per_s = state["tokens_seen"] / state["train_time_s"] if state["train_time_s"] > 0 else 0.0
    return m
