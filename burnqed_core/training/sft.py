"""Supervised fine-tuning: LoRA / QLoRA on tactic pairs, resumable after a kill.

A manual training loop rather than HF Trainer, because resume must be exact
and cheap to reason about:

* the sample order is a pure function of (seed, micro-batch index): epoch
  ``e`` is a permutation drawn from a generator seeded with ``(seed, e)``;
* a checkpoint (every ``save_every`` steps and at the end) holds the trainable
  weights, optimiser, LR scheduler, RNG states and the step, written to a
  temporary directory and renamed into place, so a checkpoint directory
  exists only when complete;
* after a kill, the loop reloads the newest checkpoint and continues; a
  resumed run ends with the same step count (and on CPU the same weights) as
  an uninterrupted one.

Every checkpoint carries the validation loss at its step; the run's result
is the checkpoint with the best eval loss (seed 000, iteration 2: eval loss
plateaued while training continued). Loss is token-weighted over all
micro-batches of a step, on the tactic tokens + EOS only (`collate`).

QLoRA (``qlora: true``): the base is loaded in 4-bit NF4 with double
quantisation and bf16 compute (bitsandbytes), prepared with
``prepare_model_for_kbit_training``, and LoRA goes on top: the same code on
CPU and GPU (bitsandbytes 0.50 runs 4-bit on this CPU).

Iteration N > 0 warm-starts from iteration N-1: either its adapter (trained
further) or its merged model (a fresh adapter on top), with
``lr * lr_decay_per_iteration ** N`` and ``max_steps_later`` steps.

A variant of the step plugs in through `LoopExtension` (extra parameter groups, the micro-batch loss, a
monitor after each step, state in every checkpoint): the joint LoRA + EBM training
(`burnqed_core.training.joint`) is the loop with its extension, not a copy of it. A monitor that aborts
(`LoopAborted`) leaves the last checkpoint saved before the abort as the run's result.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from burnqed_core.config import TrainingConfig
from burnqed_core.data.pairs.prompt import PromptFormat
from burnqed_core.errors import BurnqedError, DataError, ProfileError
from burnqed_core.record_io import file_sha256, json_sha256
from burnqed_core.records import TacticPair
from burnqed_core.training.collate import IGNORE_INDEX, CompletionCollator, Example, encode_pairs
from burnqed_core.training.metrics import EvalPoint, LossPoint, TrainingMetrics
from burnqed_core.training.run_record import RunRecord, fingerprint_pairs

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
STATE_FILE = "state.json"
TRAINABLE_FILE = "trainable.safetensors"
QUANT_WIDTH_MULTIPLE = 32


class TrainingError(BurnqedError):
    """Training cannot start or continue (incompatible checkpoint, unpackable 4-bit layer, no data)."""


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


def iteration_schedule(cfg: TrainingConfig, iteration: int) -> tuple[float, int]:
    """(learning rate, max steps) for iteration N: seed 000 halves the lr each iteration and trains fewer steps."""
    if iteration <= 0:
        return cfg.lr, cfg.max_steps
    return cfg.lr * cfg.lr_decay_per_iteration ** iteration, cfg.max_steps_later


def lr_factor(k: int, warmup_steps: int, max_steps: int, schedule: str = "cosine",
              min_lr_ratio: float = 0.0) -> float:
    """LR multiplier for step k (0-based) of ``max_steps``: linear warm-up reaching 1 at step ``warmup_steps - 1``
    (the first step already moves, unlike a warm-up from 0), then ``schedule`` decay: ``cosine`` or ``linear``
    from 1 down to ``min_lr_ratio``, reached at the last step (``max_steps - 1``), or ``constant`` (1 throughout).
    With ``min_lr_ratio > 0`` every step trains: no step runs at a zero learning rate."""
    if k < warmup_steps:
        return (k + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    span = max(max_steps - warmup_steps, 1)
    progress = min(k - warmup_steps + 1, span) / span  # 1/span at the first decay step, 1 at the last step
    if schedule == "linear":
        shape = 1.0 - progress
    elif schedule == "cosine":
        shape = 0.5 * (1.0 + math.cos(math.pi * progress))
    else:
        raise ValueError(f"unknown learning-rate schedule {schedule!r} (cosine, linear, constant)")
    return min_lr_ratio + (1.0 - min_lr_ratio) * shape


def lr_schedule(warmup_steps: int, max_steps: int, schedule: str = "cosine", min_lr_ratio: float = 0.0) -> Any:
    """`lr_factor` as a function of the step, for `torch.optim.lr_scheduler.LambdaLR`."""
    if not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError(f"min_lr_ratio must be in [0, 1], got {min_lr_ratio}")
    lr_factor(warmup_steps, warmup_steps, max_steps, schedule, min_lr_ratio)  # an unknown schedule fails here

    def factor(k: int) -> float:
        return lr_factor(k, warmup_steps, max_steps, schedule, min_lr_ratio)

    return factor


def cosine_with_warmup(warmup_steps: int, max_steps: int, min_lr_ratio: float = 0.0) -> Any:
    """Linear warm-up, then cosine decay to ``min_lr_ratio`` at the last step (`lr_factor`)."""
    return lr_schedule(warmup_steps, max_steps, "cosine", min_lr_ratio)


def resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ProfileError(f"training.device is {name!r} but no CUDA device is available")
    return name


# ----------------------------------------------------------------------------- data


def load_pairs_dir(path: str | Path) -> tuple[list[TacticPair], list[TacticPair], dict[str, str]]:
    """``train.parquet`` and ``val.parquet`` of a prepared pairs dir (`burnqed data prepare`), with fingerprints."""
    from burnqed_core.record_io import read_records

    path = Path(path)
    if not path.is_dir():
        raise DataError(f"{path}: not a directory of prepared pairs (expected train.parquet and val.parquet)")
    files = {}
    for split, names in (("train", ("train.parquet", "train.jsonl")), ("val", ("val.parquet", "valid.parquet",
                                                                          "val.jsonl"))):
        found = next((path / n for n in names if (path / n).exists()), None)
        if found is None:
            raise DataError(f"{path}: no {' or '.join(names)}")
        files[split] = found
    train = read_records(files["train"], TacticPair)
    val = read_records(files["val"], TacticPair)
    prints = {f"{split}:{f.name}": file_sha256(f) for split, f in files.items()}
    return train, val, prints


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


# ----------------------------------------------------------------------------- checkpoints


def settings_signature(payload: dict[str, Any]) -> str:
    """What a resumed run must match to continue a checkpoint (`json_sha256`, 16 hex digits)."""
    return json_sha256(payload)[:16]


def list_checkpoints(run_dir: Path) -> list[Path]:
    """Complete checkpoint dirs, oldest first (temporary dirs of a killed save are ignored)."""
    root = run_dir / CHECKPOINTS
    if not root.is_dir():
        return []
    done = [p for p in root.iterdir() if p.is_dir() and p.name.startswith("step-") and (p / STATE_FILE).exists()]
    return sorted(done, key=lambda p: int(p.name.split("-")[1]))


def _trainable(model: Any) -> dict[str, Any]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def _rng_state() -> dict[str, Any]:
    import torch

    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    import torch

    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    run_dir: Path, step: int, model: Any, optimizer: Any, scheduler: Any, state: dict[str, Any],
    extension: dict[str, Any] | None = None,
) -> Path:
    """Write checkpoint ``step-NNNNNN`` atomically: a temp dir renamed into place. ``extension``: the state of
    a `LoopExtension` (the joint training's energy head), kept beside the optimiser's."""
    import torch
    from safetensors.torch import save_file

    root = run_dir / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{step:06d}"
    tmp = root / f".tmp-{final.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    weights = {n: p.detach().to("cpu").contiguous() for n, p in _trainable(model).items()}
    save_file(weights, tmp / TRAINABLE_FILE)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "rng": _rng_state(),
                "extension": extension or {}}, tmp / "optim.pt")
    (tmp / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")  # last: marks the dir complete
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def load_trainable(model: Any, ckpt: Path) -> None:
    """Copy a checkpoint's trainable weights into ``model`` (names must match exactly)."""
    import torch
    from safetensors.torch import load_file

    saved = load_file(ckpt / TRAINABLE_FILE)
    params = _trainable(model)
    if set(saved) != set(params):
        missing = sorted(set(params) - set(saved))[:3]
        raise TrainingError(f"{ckpt}: checkpoint does not match the model (e.g. missing {missing})")
    with torch.no_grad():
        for n, p in params.items():
            p.copy_(saved[n].to(p.device, p.dtype))


def _prune_checkpoints(run_dir: Path, keep_latest: int, best_name: str | None) -> None:
    ckpts = list_checkpoints(run_dir)
    keep = {p.name for p in ckpts[-keep_latest:]}
    if best_name:
        keep.add(best_name)
    for p in ckpts:
        if p.name not in keep:
            shutil.rmtree(p, ignore_errors=True)


# ----------------------------------------------------------------------------- the loop


def evaluate(model: Any, examples: Sequence[Example], collator: CompletionCollator, batch_size: int,
             device: str) -> float:
    """Token-weighted mean cross-entropy over the target tokens of ``examples``."""
    import torch

    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(examples), batch_size):
            batch = {k: v.to(device) for k, v in collator(examples[i:i + batch_size]).items()}
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
    _set_rng_state(blob["rng"])
    loop.ext.load_state_dict(blob.get("extension") or {})
    metrics.resumed_from_step = saved_state["step"]
    log.info("resuming %s from %s (step %d of %d)", s.kind, latest, saved_state["step"], s.max_steps)
    return dict(saved_state)


def _train_step(loop: _Loop, state: dict[str, Any]) -> tuple[float, float, float]:
    """One optimiser step over ``grad_accum`` micro-batches: (loss, grad norm, learning rate)."""
    import torch

    s, step = loop.s, state["step"]
    micro = [loop.order.take((step * s.grad_accum + m) * s.batch_size, s.batch_size) for m in range(s.grad_accum)]
    batches = [loop.collator([loop.train[i] for i in idx]) for idx in micro]
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
        _prune_checkpoints(loop.run_dir, s.keep_checkpoints, _best_checkpoint_name(state))


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


# ----------------------------------------------------------------------------- model loading


def check_quantizable(base: str | Path, target_modules: Sequence[str] = ()) -> None:
    """Raise `TrainingError` naming the first linear layer a 4-bit load could not pack.

    bitsandbytes repacks 4-bit weights for CPU inference in blocks of 32 output
    features (notes/stack-ml.md); checked on a meta-device copy before any
    weight is loaded. The output head stays unquantised and is skipped.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(base)
    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(config)
    head = skeleton.get_output_embeddings()
    for name, mod in skeleton.named_modules():
        if isinstance(mod, torch.nn.Linear) and mod is not head and mod.out_features % QUANT_WIDTH_MULTIPLE:
            raise TrainingError(
                f"cannot load {base} in 4-bit: layer {name} has out_features {mod.out_features}, not a multiple of "
                f"{QUANT_WIDTH_MULTIPLE} (bitsandbytes packs 4-bit weights in blocks of {QUANT_WIDTH_MULTIPLE}); "
                "train with qlora: false or change the model's widths")
    if target_modules:
        names = {n.rsplit(".", 1)[-1] for n, m in skeleton.named_modules() if isinstance(m, torch.nn.Linear)}
        if not set(target_modules) & names:
            raise ProfileError(f"training.lora.target_modules {list(target_modules)} match no linear layer of {base} "
                               f"(it has {sorted(names)})")


def bnb_config(compute_dtype: str = "bfloat16") -> Any:
    """NF4 + double quantisation + bf16 compute (the seeds' QLoRA)."""
    import torch
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                              bnb_4bit_compute_dtype=getattr(torch, compute_dtype))


def load_base(base: str | Path, qlora: bool, device: str, gradient_checkpointing: bool = False,
              target_modules: Sequence[str] = (), compute_dtype: str = "bfloat16") -> Any:
    """The base causal LM ready for LoRA: float32 (bf16 on CUDA), or 4-bit NF4 when ``qlora``."""
    import torch
    from transformers import AutoModelForCausalLM

    base = str(base)
    if not (Path(base) / "config.json").exists() and Path(base).exists():
        raise TrainingError(f"{base}: not a model directory (no config.json)")
    gc_kwargs = {"use_reentrant": False}
    if qlora:
        from peft import prepare_model_for_kbit_training

        check_quantizable(base, target_modules)
        kwargs: dict[str, Any] = {"quantization_config": bnb_config(compute_dtype),
                                  "dtype": getattr(torch, compute_dtype),
                                  # always named: without a device map, a 4-bit load goes to the GPU whenever
                                  # there is one, also for training.device: cpu (seen on an H100 box)
                                  "device_map": {"": device}}
        model = AutoModelForCausalLM.from_pretrained(base, **kwargs)
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gradient_checkpointing,
                                                gradient_checkpointing_kwargs=gc_kwargs)
    else:
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype).to(device)
        if gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=gc_kwargs)
            model.enable_input_require_grads()
    model.config.use_cache = False
    return model


def lora_model(model: Any, cfg: TrainingConfig, warm_adapter: Path | None) -> Any:
    from peft import LoraConfig as PeftLoraConfig
    from peft import PeftModel, get_peft_model

    if warm_adapter is not None:
        return PeftModel.from_pretrained(model, str(warm_adapter), is_trainable=True)
    lc = PeftLoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                        target_modules=list(cfg.lora.target_modules), bias="none", task_type="CAUSAL_LM")
    try:
        return get_peft_model(model, lc)
    except ValueError as e:
        raise ProfileError(f"training.lora: {e}") from None


def is_adapter_dir(path: str | Path) -> bool:
    return (Path(path) / "adapter_config.json").exists()


def adapter_base(adapter_dir: str | Path) -> str:
    """The base model an adapter dir was trained on (from adapter_config.json)."""
    cfg = json.loads((Path(adapter_dir) / "adapter_config.json").read_text(encoding="utf-8"))
    return str(cfg.get("base_model_name_or_path") or "")


def _count_params(model: Any) -> tuple[int, int]:
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = 0
    for p in model.parameters():
        # bitsandbytes Params4bit store two 4-bit values per element
        total += p.numel() * (2 if p.__class__.__name__ == "Params4bit" else 1)
    return trainable, total


# ----------------------------------------------------------------------------- SFT entry point


def with_premises(pairs: Sequence[TacticPair], fmt: PromptFormat,
                  premises: Callable[[TacticPair], Sequence[str]] | None) -> list[tuple[str, str, Sequence[str]]]:
    """(state, tactic, premise lines) of each pair: the lines only when the format shows premises."""
    if not fmt.premises or premises is None:
        if fmt.premises:
            log.warning("the model's prompt shows %d premises but none are given: training on prompts without",
                        fmt.premises)
        return [(p.state_before, p.tactic, ()) for p in pairs]
    return [(p.state_before, p.tactic, premises(p)) for p in pairs]


class ExtensionFactory(Protocol):
    """Builds the `LoopExtension` of a `train_sft` run once the model is loaded, and saves what it trained."""

    def signature(self) -> dict[str, Any]:
        """What a resumed run must match besides the SFT settings (the extension's settings and data)."""
        ...

    def build(self, model: Any, tokenizer: Any, fmt: PromptFormat, device: str) -> LoopExtension:
        ...

    def finish(self, ext: LoopExtension, best: Path | None, out: Path, aborted: LoopAborted | None) -> None:
        """Save what ``ext`` trained, as of checkpoint ``best``, beside the adapter in ``out``."""
        ...


def _warm_start(warm_from: str | Path | None, base: str) -> tuple[str, Path | None]:
    """(base model, adapter to continue) of a warm start from iteration N-1's output."""
    if warm_from is None:
        return base, None
    warm = Path(warm_from)
    if is_adapter_dir(warm):
        recorded = adapter_base(warm)
        if recorded and Path(recorded).resolve() != Path(base).resolve():
            log.warning("adapter %s was trained on %s, continuing it on %s", warm, recorded, base)
        return base, warm
    if (warm / "config.json").exists():
        return str(warm), None
    raise TrainingError(f"--from {warm}: neither an adapter dir nor a model dir")


def _loop_settings(cfg: TrainingConfig, kind: str, iteration: int) -> LoopSettings:
    lr, max_steps = iteration_schedule(cfg, iteration)
    return LoopSettings(kind=kind, lr=lr, max_steps=max_steps, warmup_steps=min(cfg.warmup_steps, max_steps),
                        batch_size=cfg.batch_size, grad_accum=cfg.grad_accum, eval_every=cfg.eval_every,
                        save_every=cfg.save_every, seed=cfg.seed, max_grad_norm=cfg.max_grad_norm,
                        keep_checkpoints=cfg.keep_checkpoints, lr_schedule=cfg.lr_schedule,
                        min_lr_ratio=cfg.min_lr_ratio)


def _signature(run: RunRecord, settings: LoopSettings, cfg: TrainingConfig, qlora: bool,
               extension: ExtensionFactory | None) -> str:
    """What a resumed run must match (`settings_signature`)."""
    payload = {"settings": asdict(settings), "data": run.data, "base": run.base_model, "prompt": run.prompt_version,
               "warm": run.warm_start_from, "lora": cfg.lora.model_dump(), "qlora": qlora,
               "max_seq_len": cfg.max_seq_len}
    if extension is not None:
        payload["extension"] = extension.signature()
    return settings_signature(payload)


def _tokenizer_and_format(base: str, cfg: TrainingConfig) -> tuple[Any, PromptFormat]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, PromptFormat.of_model(base, default=PromptFormat(local_names=cfg.local_names,
                                                                       numerals=cfg.numerals))


def _save_run(model: Any, tokenizer: Any, fmt: PromptFormat, best: Path | None, out: Path,
              metrics: TrainingMetrics) -> None:
    """The adapter of checkpoint ``best``, the tokenizer, the prompt format and the metrics (whose wall time
    counts the saving)."""
    t0 = time.perf_counter()
    if best is not None:
        load_trainable(model, best)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    fmt.save(out)
    metrics.wall_time_s += time.perf_counter() - t0
    metrics.save(out)
    log.info("%s", metrics.summary())


def train_sft(
    train: Sequence[TacticPair],
    val: Sequence[TacticPair],
    cfg: TrainingConfig,
    out_dir: str | Path,
    base_model: str | Path,
    *,
    iteration: int = 0,
    warm_from: str | Path | None = None,
    qlora: bool | None = None,
    data_fingerprints: dict[str, str] | None = None,
    resume: bool = True,
    progress: bool = True,
    premises: Callable[[TacticPair], Sequence[str]] | None = None,
    extension: ExtensionFactory | None = None,
) -> TrainingMetrics:
    """LoRA (or QLoRA) SFT; writes the best adapter + tokenizer + metrics.json + run.json to ``out_dir``.
    ``premises``: the premise lines of a pair's prompt (`PromptPremises.of`), shown when the base model's format
    shows premises. ``warm_from``: the previous iteration's output: an adapter dir (training continues on that
    adapter; its base must be ``base_model``) or a merged model dir (it becomes the base, a fresh adapter on it).
    ``extension``: what the loop adds to each step (the joint LoRA + EBM training, `training.joint`); when its
    monitor aborts the run (`LoopAborted`), the last checkpoint saved before the abort is written out as the
    run's result and the error is raised again."""
    import torch

    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    qlora = cfg.qlora if qlora is None else qlora
    device = resolve_device(cfg.device)
    base, warm_adapter = _warm_start(warm_from, str(base_model))
    if iteration > 0 and warm_from is None:
        log.warning("iteration %d without a warm start: a fresh adapter on %s", iteration, base)
    kind = "qlora" if qlora else "lora"
    settings = _loop_settings(cfg, kind, iteration)

    tokenizer, fmt = _tokenizer_and_format(base, cfg)
    train_ex, skipped = encode_pairs(tokenizer, with_premises(train, fmt, premises), cfg.max_seq_len, fmt=fmt)
    val_ex, _ = encode_pairs(tokenizer, with_premises(val, fmt, premises), cfg.max_seq_len, fmt=fmt)
    if not train_ex:
        raise DataError(f"no training example fits max_seq_len {cfg.max_seq_len} ({len(train)} pairs given)")
    prints = dict(data_fingerprints or {"train": fingerprint_pairs(train), "val": fingerprint_pairs(val)})

    torch.manual_seed(cfg.seed)
    model = lora_model(load_base(base, qlora, device, cfg.gradient_checkpointing, cfg.lora.target_modules), cfg,
                       warm_adapter)
    trainable, total = _count_params(model)
    log.info("%s on %s (%s): %s trainable of %s parameters, %d train / %d val examples, lr %.2e, %d steps", kind,
             base, device, f"{trainable:,}", f"{total:,}", len(train_ex), len(val_ex), settings.lr, settings.max_steps)

    run = RunRecord(kind=kind, iteration=iteration, base_model=str(Path(base).resolve()) if Path(base).exists()
                    else base, warm_start_from=str(warm_from) if warm_from else None,
                    config=cfg.model_dump(mode="json") | {"qlora": qlora}, data=prints,
                    seeds={"training": cfg.seed}, device=device, prompt_version=fmt.version)
    signature = _signature(run, settings, cfg, qlora, extension)
    metrics = TrainingMetrics(kind=kind, train_examples=len(train_ex), val_examples=len(val_ex),
                              skipped_examples=skipped, trainable_params=trainable, total_params=total, device=device)
    job = _Job(model=model, tokenizer=tokenizer, fmt=fmt, out=out, device=device, run=run, extension=extension)
    return _train_and_save(job, train_ex, val_ex, settings, metrics, signature, resume, progress, t0)


@dataclass
class _Job:
    """What `train_sft` hands `_train_and_save`: the loaded model and where its results go."""

    model: Any
    tokenizer: Any
    fmt: PromptFormat
    out: Path
    device: str
    run: RunRecord
    extension: ExtensionFactory | None


def _train_and_save(job: _Job, train_ex: Sequence[Example], val_ex: Sequence[Example], settings: LoopSettings,
                    metrics: TrainingMetrics, signature: str, resume: bool, progress: bool,
                    started: float) -> TrainingMetrics:
    """`run_loop`, then the best checkpoint saved as the run's result; an aborted run (`LoopAborted`) saves its
    last good checkpoint, lets the extension save what it trained, and raises again."""
    factory = job.extension
    ext = factory.build(job.model, job.tokenizer, job.fmt, job.device) if factory is not None else None
    try:
        metrics, best = run_loop(job.model, train_ex, val_ex, settings, job.out, job.tokenizer.pad_token_id, metrics,
                                 job.device, signature, resume=resume, progress=progress, started=started,
                                 extension=ext)
    except LoopAborted as e:
        if e.best is None or ext is None or factory is None:
            raise
        log.error("%s; keeping the last good checkpoint %s", e, e.best.name)
        _save_run(job.model, job.tokenizer, job.fmt, e.best, job.out, metrics)
        factory.finish(ext, e.best, job.out, e)
        job.run.save(job.out)
        raise
    _save_run(job.model, job.tokenizer, job.fmt, best, job.out, metrics)
    if factory is not None and ext is not None:
        factory.finish(ext, best, job.out, None)
    job.run.save(job.out)
    return metrics
