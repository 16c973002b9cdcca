"""Train the energy head with InfoNCE on cached embeddings; exact resume after a kill.

* Every step takes ``batch_size`` training positives and ``num_negatives``
  negatives for each (`data.sample_group`: failed siblings, then other
  off-path states, then other theorems), all drawn from a generator seeded
  with (seed, step); dropout is seeded per step too. A resumed run therefore
  computes exactly the steps an uninterrupted one would.
* A checkpoint (``checkpoint.pt``: step, head, optimiser, best head so far,
  curves) is written every ``save_every`` steps to a temporary file and
  renamed; a rerun continues from it when its signature (settings, data,
  encoder) matches.
* The temperature is logged every ``temperature_check_every`` steps; when it
  sits at a bound for ``temperature_patience`` checks in a row, training stops
  with `TemperaturePinnedError` (seed gotcha 3: a pinned temperature means
  the loss is fighting the scale, not learning).
* Validation is split by theorem; the head kept is the one with the best
  validation loss (the last one without validation).

The output directory holds ``head.pt`` (state dict), ``ebm.json`` (`EbmRecord`:
head config, pooling, encoder fingerprint: what `scorer.load_energy_scorer`
needs in a new process) and ``metrics.json`` (`TrainReport`).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, Field

from burnqed_core.config import EBMConfig
from burnqed_core.ebm.data import (
    ContrastiveData,
    fixed_groups,
    other_theorem_pool,
    sample_group,
    split_positives,
    theorem_in_val,
)
from burnqed_core.ebm.embeddings import CacheMeta
from burnqed_core.ebm.metrics import EbmMetrics, SeparationMetrics, rank_metrics, separation_metrics
from burnqed_core.ebm.model import EnergyHead, HeadConfig, count_params, info_nce
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.record_io import atomic_target, atomic_write_text, json_sha256

log = logging.getLogger(__name__)

HEAD_FILE = "head.pt"
RECORD_FILE = "ebm.json"
METRICS_FILE = "metrics.json"
CHECKPOINT_FILE = "checkpoint.pt"


class EbmTrainingError(BurnqedError):
    """Training cannot go on (bad data, diverged, changed settings)."""


class TemperaturePinnedError(EbmTrainingError):
    """The learnable temperature sits at a bound (seed gotcha 3)."""


class EbmRecord(BaseModel):
    """What a saved EBM is: enough to rebuild and use it in another process."""

    kind: str = "burnqed_ebm"
    head: HeadConfig
    pooling: str
    fingerprint: str
    text_format: str
    model_path: str = ""
    iteration: int | None = None
    steps: int = 0
    best_step: int | None = None
    num_negatives: int = 0
    params: int = 0


class CurvePoint(BaseModel):
    step: int
    loss: float
    temperature: float


class EvalCurvePoint(BaseModel):
    step: int
    val_loss: float
    val_rank1: float | None = None


class TrainReport(BaseModel):
    steps: int = 0
    resumed_from_step: int = 0
    train_positives: int = 0
    val_positives: int = 0
    hindsight_positives: int = Field(0, description="positives from known proofs of unproved searches "
                                     "(ebm.hindsight), train and validation")
    train_theorems: int = 0
    val_theorems: int = 0
    params: int = 0
    best_step: int | None = None
    seconds: float = 0.0
    loss_curve: list[CurvePoint] = Field(default_factory=list)
    eval_curve: list[EvalCurvePoint] = Field(default_factory=list)
    train: EbmMetrics | None = None
    val: EbmMetrics | None = None
    separation: SeparationMetrics | None = None
    trained_jointly: bool = Field(False, description="the head was trained with the adapter in lora_adapter "
                                  "(ebm.joint), not on these cached embeddings")
    joint_abort: str | None = Field(None, description="the joint run's abort (condition and step), if it stopped")

    def summary(self) -> str:
        first = self.loss_curve[0].loss if self.loss_curve else None
        last = self.loss_curve[-1].loss if self.loss_curve else None
        s = f"EBM ({self.params:,} params) on {self.train_positives} positives of {self.train_theorems} theorems"
        if self.hindsight_positives:
            s += f" ({self.hindsight_positives} of all positives from known proofs)"
        if first is not None:
            s += f", loss {first:.3f} -> {last:.3f} in {self.steps} steps"
        if self.trained_jointly:
            s += f", trained jointly with the adapter ({self.steps} steps)"
        if self.joint_abort:
            s += f"; ABORTED: {self.joint_abort}"
        for m in (self.val, self.train):
            if m is not None and m.rank1.rank1 is not None:
                s += f"; {m.summary()}"
                break
        return s


def step_batch(data: ContrastiveData, train_idx: Sequence[int], n: int, k: int, seed: int, step: int,
               pool: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Step ``step``'s ``n`` training positives and ``k`` negatives for each (`sample_group`: failed siblings
    first), from a generator seeded with (seed, step): a resumed run draws what an uninterrupted one would."""
    rng = np.random.default_rng([seed, step])
    picks = rng.choice(len(train_idx), size=n, replace=len(train_idx) < n)
    positives = [train_idx[int(j)] for j in picks]
    groups = [sample_group(data, data.positives[i], k, rng, pool) for i in positives]
    return positives, groups


def batch_energies(head: EnergyHead, z: torch.Tensor, data: ContrastiveData, positives: list[int],
                   groups: list[list[int]], k: int, row_of: Mapping[int, int] | None = None) -> torch.Tensor:
    """``[B, 1 + k]`` energies, positive first; missing negatives are +inf (no logit). ``row_of``: the row of
    ``z`` that holds each state row of ``data`` (None: the same row; the joint training encodes only a
    step's states)."""
    def at(i: int) -> int:
        return i if row_of is None else row_of[i]

    b = len(positives)
    rows = torch.zeros((b, 1 + k), dtype=torch.long)
    valid = torch.zeros((b, 1 + k), dtype=torch.bool)
    goals = torch.tensor([at(data.positives[i].goal) for i in positives], dtype=torch.long)
    for r, (i, g) in enumerate(zip(positives, groups, strict=True)):
        members = [at(data.positives[i].state), *(at(x) for x in g[:k])]
        rows[r, : len(members)] = torch.tensor(members)
        valid[r, : len(members)] = True
    e = head(z[rows.to(z.device)], z[goals.to(z.device)].unsqueeze(1))
    return e.masked_fill(~valid.to(e.device), float("inf"))


@torch.no_grad()
def _val_loss(head: EnergyHead, z: torch.Tensor, data: ContrastiveData, val_idx: list[int],
              groups: list[list[int]], k: int) -> float:
    was = head.training
    head.eval()
    try:
        losses = []
        for s in range(0, len(val_idx), 256):
            e = batch_energies(head, z, data, val_idx[s : s + 256], groups[s : s + 256], k)
            losses.append(float(info_nce(e)) * len(val_idx[s : s + 256]))
        return sum(losses) / max(len(val_idx), 1)
    finally:
        head.train(was)


def head_config(cfg: EBMConfig, dim: int) -> HeadConfig:
    return HeadConfig(dim=dim, hidden_dims=list(cfg.hidden_dims), dropout=cfg.dropout,
                      first_layer_scale=cfg.first_layer_scale, power_iterations=cfg.power_iterations,
                      temperature_init=cfg.temperature_init, temperature_min=cfg.temperature_min,
                      temperature_max=cfg.temperature_max)


def head_param_groups(head: EnergyHead, lr: float, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW groups of a head: weight decay on the layers, none on the temperature and the first gain."""
    scale = [head.log_temperature, head.first_gain]
    decay = [p for n, p in head.named_parameters() if n not in ("log_temperature", "first_gain")]
    return [{"params": decay, "weight_decay": weight_decay, "lr": lr},
            {"params": scale, "weight_decay": 0.0, "lr": lr}]


def check_temperature(head: EnergyHead, cfg: EBMConfig, step: int, pinned_before: int) -> int:
    """Log the temperature and count the checks in a row it sat at a bound; `TemperaturePinnedError` after
    ``cfg.temperature_patience`` of them (seed gotcha 3). Returns the new count."""
    temp = float(head.temperature.detach())
    if not 0.5 <= temp <= 3.0:
        log.warning("EBM temperature %.3f outside the healthy range [0.5, 3.0] (seed gotcha 3)", temp)
    pinned = head.temperature_pinned()
    count = pinned_before + 1 if pinned else 0
    if pinned and count >= cfg.temperature_patience:
        raise TemperaturePinnedError(
            f"EBM temperature pinned at its {pinned} ({temp:.3g}, bounds [{cfg.temperature_min}, "
            f"{cfg.temperature_max}]) for {count} checks at step {step}: aborting (the scale, "
            f"not the ranking, is being learned; check the embeddings for collapse, lower ebm.lr or "
            f"widen the bounds)")
    return count


def _save_checkpoint(path: Path, blob: dict[str, Any]) -> None:
    tmp = atomic_target(path)
    torch.save(blob, tmp)
    tmp.replace(path)


@dataclass
class Split:
    """Training and validation positives (split by theorem), their pools of other theorems' states and the
    fixed negatives the metrics use."""

    train_idx: list[int]
    val_idx: list[int]
    train_thms: list[str]
    val_thms: list[str]
    train_pool: list[int]
    val_groups: list[list[int]]
    train_eval_idx: list[int]
    train_groups: list[list[int]]


def split_data(data: ContrastiveData, cfg: EBMConfig) -> Split:
    """The split of `train_ebm` (and of the joint training's contrastive batches)."""
    train_idx, val_idx = split_positives(data, cfg.val_fraction, cfg.seed)
    if not train_idx:
        if val_idx:  # too few theorems to hold any out: train on all, report on train
            log.warning("all %d positives fell into validation; training on them without a validation split",
                        len(val_idx))
            train_idx, val_idx = val_idx, []
        else:
            raise DataError("no positive proof states to train an EBM on (no proved theorem with depth >= 1)")
    all_thms = sorted(data.theorem_states)
    in_val = {t: theorem_in_val(t, cfg.val_fraction, cfg.seed) for t in all_thms}
    train_pool = other_theorem_pool(data, [t for t in all_thms if not in_val[t]] or all_thms)
    val_pool = other_theorem_pool(data, [t for t in all_thms if in_val[t]])
    k = cfg.num_negatives
    train_eval_idx = train_idx[:2000]
    return Split(train_idx=train_idx, val_idx=val_idx,
                 train_thms=sorted({data.positives[i].theorem for i in train_idx}),
                 val_thms=sorted({data.positives[i].theorem for i in val_idx}), train_pool=train_pool,
                 val_groups=fixed_groups(data, val_idx, k, cfg.seed, val_pool), train_eval_idx=train_eval_idx,
                 train_groups=fixed_groups(data, train_eval_idx, k, cfg.seed, train_pool))


def new_head(cfg: EBMConfig, zt: torch.Tensor, data: ContrastiveData, train_thms: Sequence[str]) -> EnergyHead:
    """A fresh head (seeded) whose standardiser is fitted on the states of the training theorems."""
    torch.manual_seed(cfg.seed)
    head = EnergyHead(head_config(cfg, int(zt.shape[1])))
    train_rows = sorted({r for t in train_thms for r in data.theorem_states.get(t, ())})
    head.fit_standardizer(zt[train_rows] if len(train_rows) > 1 else zt)
    return head


def _signature(cfg: EBMConfig, data: ContrastiveData, meta: CacheMeta) -> str:
    return json_sha256({"cfg": cfg.model_dump(mode="json", exclude={"encode_batch_size", "checkpoint_every"}),
                        "keys": hashlib.sha256("\n".join(data.keys).encode()).hexdigest(),
                        "positives": len(data.positives), "fingerprint": meta.fingerprint, "pooling": meta.pooling})


def _resume(ckpt_path: Path, signature: str, resume: bool, head: EnergyHead,
            opt: torch.optim.Optimizer) -> dict[str, Any] | None:
    """The saved loop state when a checkpoint of the same run exists (head and optimiser reloaded), else None
    (a checkpoint of other settings or data is removed)."""
    if not ckpt_path.exists():
        return None
    blob = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    if not resume or blob.get("signature") != signature:
        if resume:
            log.warning("%s: checkpoint of other settings or data; starting over", ckpt_path)
        ckpt_path.unlink()
        return None
    head.load_state_dict(blob["head"])
    opt.load_state_dict(blob["optimizer"])
    return dict(blob["state"])


@dataclass
class _Run:
    """What the steps of `train_ebm` share."""

    head: EnergyHead
    opt: torch.optim.Optimizer
    zt: torch.Tensor
    data: ContrastiveData
    cfg: EBMConfig
    split: Split
    ckpt_path: Path
    signature: str


def _train_step(run: _Run, step: int) -> float:
    """One InfoNCE step (seeded by the step: a resumed run computes the same); the loss."""
    cfg, split = run.cfg, run.split
    positives, groups = step_batch(run.data, split.train_idx, cfg.batch_size, cfg.num_negatives, cfg.seed, step,
                                   split.train_pool)
    torch.manual_seed(cfg.seed * 1_000_003 + step)
    e = batch_energies(run.head, run.zt, run.data, positives, groups, cfg.num_negatives)
    loss = info_nce(e)
    run.opt.zero_grad(set_to_none=True)
    loss.backward()
    run.opt.step()
    lv = float(loss.detach())
    if not math.isfinite(lv):
        raise EbmTrainingError(f"EBM loss is {lv} at step {step + 1}; lower ebm.lr")
    return lv


def _after_step(run: _Run, state: dict[str, Any], step: int) -> None:
    """Temperature check, validation (best head kept) and checkpoint, each at its period."""
    cfg, split = run.cfg, run.split
    last = step == cfg.steps
    if step % cfg.temperature_check_every == 0 or last:
        log.info("EBM step %d: loss %.4f, temperature %.3f", step, state["loss_curve"][-1]["loss"],
                 state["loss_curve"][-1]["temperature"])
        state["pinned"] = check_temperature(run.head, cfg, step, state["pinned"])
    if split.val_idx and (step % cfg.eval_every == 0 or last):
        vl = _val_loss(run.head, run.zt, run.data, split.val_idx, split.val_groups, cfg.num_negatives)
        state["eval_curve"].append({"step": step, "val_loss": vl})
        if vl < state["best_loss"]:
            state["best_loss"], state["best_step"] = vl, step
            state["best_head"] = {n: t.detach().clone() for n, t in run.head.state_dict().items()}
    if step % cfg.save_every == 0 or last:
        _save_checkpoint(run.ckpt_path, {"signature": run.signature, "head": run.head.state_dict(),
                                         "optimizer": run.opt.state_dict(), "state": state})


def _train_loop(run: _Run, state: dict[str, Any], progress: bool) -> None:
    from tqdm import tqdm

    run.head.train()
    bar = tqdm(total=run.cfg.steps, initial=state["step"], desc="train ebm", unit="step", disable=not progress,
               mininterval=1.0)
    try:
        while state["step"] < run.cfg.steps:
            lv = _train_step(run, state["step"])
            state["step"] = step = state["step"] + 1
            temp = float(run.head.temperature.detach())
            state["loss_curve"].append({"step": step, "loss": lv, "temperature": temp})
            bar.update(1)
            bar.set_postfix(loss=f"{lv:.3f}", T=f"{temp:.2f}", refresh=False)
            _after_step(run, state, step)
    finally:
        bar.close()


def train_ebm(
    z: np.ndarray,
    data: ContrastiveData,
    cfg: EBMConfig,
    out_dir: str | Path,
    meta: CacheMeta,
    *,
    iteration: int | None = None,
    resume: bool = True,
    progress: bool = False,
) -> TrainReport:
    """Train, evaluate and save a head on embeddings ``z`` (row i = ``data.keys[i]``)."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if z.shape[0] != len(data.keys):
        raise EbmTrainingError(f"{z.shape[0]} embeddings for {len(data.keys)} states")
    split = split_data(data, cfg)
    zt = torch.from_numpy(np.ascontiguousarray(z, dtype=np.float32))
    head = new_head(cfg, zt, data, split.train_thms)
    opt = torch.optim.AdamW(head_param_groups(head, cfg.lr, cfg.weight_decay), lr=cfg.lr)
    run = _Run(head=head, opt=opt, zt=zt, data=data, cfg=cfg, split=split, ckpt_path=out / CHECKPOINT_FILE,
               signature=_signature(cfg, data, meta))
    report = TrainReport(train_positives=len(split.train_idx), val_positives=len(split.val_idx),
                         train_theorems=len(split.train_thms), val_theorems=len(split.val_thms),
                         params=count_params(head), hindsight_positives=data.hindsight)
    state = _resume(run.ckpt_path, run.signature, resume, head, opt)
    if state is not None:
        report.resumed_from_step = state["step"]
        log.info("EBM: resuming from step %d of %d", state["step"], cfg.steps)
    else:
        state = {"step": 0, "best_loss": math.inf, "best_step": None, "best_head": None,
                 "loss_curve": [], "eval_curve": [], "pinned": 0}
    _train_loop(run, state, progress)
    if state["best_head"] is not None:
        head.load_state_dict(state["best_head"])
    head.eval()
    _fill_report(report, run, state)
    report.seconds = time.perf_counter() - t0
    record = EbmRecord(head=head.cfg, pooling=meta.pooling, fingerprint=meta.fingerprint, text_format=meta.text_format,
                       model_path=meta.model_path, iteration=iteration, steps=report.steps, best_step=report.best_step,
                       num_negatives=cfg.num_negatives, params=report.params)
    save_head(head, record, out)
    atomic_write_text(out / METRICS_FILE, report.model_dump_json(indent=1))
    log.info("%s", report.summary())
    return report


def _fill_report(report: TrainReport, run: _Run, state: dict[str, Any]) -> None:
    split = run.split
    report.steps = state["step"]
    report.best_step = state["best_step"] if state["best_head"] is not None else state["step"]
    report.loss_curve = [CurvePoint(**p) for p in state["loss_curve"]]
    report.eval_curve = [EvalCurvePoint(**p) for p in state["eval_curve"]]
    report.train = rank_metrics(run.head, run.zt, run.data, split.train_eval_idx, split.train_groups, split="train")
    if split.val_idx:
        report.val = rank_metrics(run.head, run.zt, run.data, split.val_idx, split.val_groups, split="val")
    report.separation = separation_metrics(run.zt, run.data, run.cfg.val_fraction, run.cfg.seed)


def save_head(head: EnergyHead, record: EbmRecord, out_dir: str | Path) -> None:
    """``head.pt`` then ``ebm.json`` (written last: its presence means a usable EBM)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = atomic_target(out / HEAD_FILE)
    torch.save(head.state_dict(), tmp)
    tmp.replace(out / HEAD_FILE)
    atomic_write_text(out / RECORD_FILE, record.model_dump_json(indent=1))


def has_ebm(directory: str | Path | None) -> bool:
    """Whether ``directory`` holds a saved EBM (iteration 0's stage has none)."""
    return directory is not None and (Path(directory) / RECORD_FILE).is_file() and \
        (Path(directory) / HEAD_FILE).is_file()


def load_head(directory: str | Path) -> tuple[EnergyHead, EbmRecord]:
    d = Path(directory)
    if not has_ebm(d):
        raise EbmTrainingError(f"{d}: no EBM here (expected {RECORD_FILE} and {HEAD_FILE})")
    record = EbmRecord.model_validate_json((d / RECORD_FILE).read_text(encoding="utf-8"))
    head = EnergyHead(record.head)
    head.load_state_dict(torch.load(d / HEAD_FILE, map_location="cpu", weights_only=True))
    head.eval()
    return head, record


def read_report(directory: str | Path) -> TrainReport:
    return TrainReport.model_validate_json((Path(directory) / METRICS_FILE).read_text(encoding="utf-8"))
