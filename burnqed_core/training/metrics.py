"""The metrics record every training run returns and saves beside its model."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.errors import RecordFileError
from burnqed_core.record_io import atomic_write_text

METRICS_FILE = "metrics.json"


class LossPoint(BaseModel):
    """Training loss of one optimiser step (token-weighted mean over the step's micro-batches)."""

    model_config = ConfigDict(frozen=True)
    step: int
    loss: float
    lr: float
    grad_norm: float = 0.0


class EvalPoint(BaseModel):
    """Token-weighted mean loss on the validation split at one step."""

    model_config = ConfigDict(frozen=True)
    step: int
    eval_loss: float
    checkpoint: str = Field("", description="checkpoint dir name saved at this step, if any")


class TrainingMetrics(BaseModel):
    """What the pipeline shows about a training run (seed 000: loss per checkpoint, best checkpoint)."""

    model_config = ConfigDict(extra="forbid")
    kind: str = Field(description="'pretrain', 'lora' or 'qlora'")
    steps: int = 0
    max_steps: int = 0
    loss_curve: list[LossPoint] = Field(default_factory=list)
    eval_curve: list[EvalPoint] = Field(default_factory=list)
    initial_eval_loss: float | None = None
    best_step: int | None = None
    best_eval_loss: float | None = None
    final_train_loss: float | None = None
    train_examples: int = 0
    val_examples: int = 0
    skipped_examples: int = 0
    tokens_seen: int = Field(0, description="non-padding input tokens processed by training steps")
    target_tokens_seen: int = Field(0, description="tokens that carried loss")
    tokens_per_s: float = Field(0.0, description="tokens_seen / train_time_s")
    train_time_s: float = Field(0.0, description="seconds in forward/backward/optimiser steps (all sessions)")
    wall_time_s: float = Field(0.0, description="total seconds including eval, checkpoints, loading (all sessions)")
    trainable_params: int = 0
    total_params: int = 0
    lr: float = 0.0
    resumed_from_step: int | None = Field(None, description="set when the last session resumed a checkpoint")
    device: str = "cpu"

    def save(self, out_dir: str | Path) -> Path:
        return atomic_write_text(Path(out_dir) / METRICS_FILE, self.model_dump_json(indent=2))

    @classmethod
    def load(cls, out_dir: str | Path) -> TrainingMetrics:
        path = Path(out_dir) / METRICS_FILE
        try:
            return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise RecordFileError(f"{path}: no such file (not a trained model dir?)") from None
        except (ValueError, TypeError) as e:
            raise RecordFileError(f"{path}: not a valid metrics file ({e})") from None

    def summary(self) -> str:
        """One line for logs and the command line."""
        best = f"best eval {self.best_eval_loss:.4f} @ step {self.best_step}" if self.best_eval_loss is not None else ""
        first = self.loss_curve[0].loss if self.loss_curve else float("nan")
        last = self.final_train_loss if self.final_train_loss is not None else float("nan")
        return (f"{self.kind}: {self.steps}/{self.max_steps} steps, train loss {first:.3f} -> {last:.3f}, {best}, "
                f"{self.tokens_per_s:.0f} tok/s, {self.trainable_params:,} trainable / {self.total_params:,} params, "
                f"{self.wall_time_s:.1f} s").replace(", ,", ",")
