"""The joint training's monitor: the encoder's separation on a fixed probe set, the head's temperature and both
losses every N steps, and the conditions that abort a run (the seeds' v2 design, issue 67).

* **probe set**: a fixed sample (seeded) of ``ebm.joint_probe_states`` positive and as many negative states of
  the contrastive data (`probe_subset`), encoded by the policy with the adapter active, in eval mode, at
  step 0 and every ``ebm.joint_monitor_every`` steps; measured with the seeds' metrics
  (`burnqed_core.ebm.metrics.separation_metrics`: centroid L2 and linear probe);
* **aborts** (`JointAbortError`, naming the condition and the step):

  - ``centroid_l2``: the probe set's centroid L2 fell below ``ebm.joint_abort_centroid_keep`` of its value
    at step 0 (seeds: 3.0 against 5.0; their iteration 5 went 6.40 -> 1.33);
  - ``sft_not_falling``: the SFT loss (mean over a monitor period) has not gone below its best for
    ``ebm.joint_abort_sft_patience`` monitors in a row;
  - ``temperature_floor`` / ``temperature_ceiling``: the head's temperature sat at a bound for
    ``ebm.temperature_patience`` monitors in a row (seed gotcha 3).

The series (`MonitorPoint`) go to the stage's ``joint.json`` and from there to the run's metadata.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from burnqed_core.config import EBMConfig
from burnqed_core.ebm.data import ContrastiveData
from burnqed_core.ebm.metrics import separation_metrics
from burnqed_core.training.loop import LoopAborted

log = logging.getLogger(__name__)

CONDITIONS = ("centroid_l2", "sft_not_falling", "temperature_floor", "temperature_ceiling")


class JointAbortError(LoopAborted):
    """A monitor crossed an abort condition (`CONDITIONS`) at a step."""


class MonitorPoint(BaseModel):
    step: int
    centroid_l2: float | None = None
    centroid_l2_ratio: float | None = None
    linear_probe_acc: float | None = None
    temperature: float
    sft_loss: float | None = Field(None, description="mean over the steps since the previous monitor")
    infonce: float | None = Field(None, description="mean over the steps since the previous monitor")


class AbortRecord(BaseModel):
    condition: str
    step: int
    message: str


def probe_subset(data: ContrastiveData, per_class: int, seed: int) -> ContrastiveData:
    """A fixed sample of ``per_class`` positive and negative states of ``data`` (rows renumbered; theorem
    ownership kept so that the linear probe still splits by theorem)."""
    rng = np.random.default_rng([seed, 67])
    neg = set(data.negatives)
    pos = [r for r in data.positive_rows if r not in neg]

    def pick(rows: Sequence[int]) -> list[int]:
        rows = list(rows)
        if len(rows) <= per_class:
            return rows
        return sorted(int(rows[i]) for i in rng.choice(len(rows), size=per_class, replace=False))

    chosen_pos, chosen_neg = pick(pos), pick(data.negatives)
    rows = list(dict.fromkeys(chosen_pos + chosen_neg))
    new = {r: i for i, r in enumerate(rows)}
    sub = ContrastiveData(keys=[data.keys[r] for r in rows], texts=[data.texts[r] for r in rows])
    sub.positive_rows = [new[r] for r in chosen_pos]
    sub.negatives = [new[r] for r in chosen_neg]
    for t, owned in data.theorem_states.items():
        mine = [new[r] for r in owned if r in new]
        if mine:
            sub.theorem_states[t] = mine
    return sub


class JointMonitor:
    """Collects the losses of each step and, at each monitor, judges the figures against the abort
    conditions (module docstring). ``series``: every monitor so far, step 0 first."""

    def __init__(self, cfg: EBMConfig, probe: ContrastiveData) -> None:
        self.cfg = cfg
        self.probe = probe
        self.series: list[MonitorPoint] = []
        self._sft: list[float] = []
        self._nce: list[float] = []
        self._best_sft = float("inf")
        self._stale = 0
        self._pinned = 0

    def state_dict(self) -> dict[str, Any]:
        return {"series": [p.model_dump(mode="json") for p in self.series], "sft": list(self._sft),
                "nce": list(self._nce), "best_sft": self._best_sft, "stale": self._stale, "pinned": self._pinned}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.series = [MonitorPoint.model_validate(p) for p in state["series"]]
        self._sft, self._nce = list(state["sft"]), list(state["nce"])
        self._best_sft, self._stale, self._pinned = state["best_sft"], state["stale"], state["pinned"]

    def add_losses(self, sft: float, infonce: float | None) -> None:
        self._sft.append(sft)
        if infonce is not None:
            self._nce.append(infonce)

    def due(self, step: int) -> bool:
        return step % self.cfg.joint_monitor_every == 0

    def measure(self, step: int, z: np.ndarray, temperature: float, pinned: str | None) -> MonitorPoint:
        """Record a monitor of the probe's embeddings ``z`` (rows of `probe`); `JointAbortError` when a
        condition is crossed."""
        sep = separation_metrics(z, self.probe, self.cfg.val_fraction, self.cfg.seed)
        point = MonitorPoint(step=step, centroid_l2=sep.centroid_l2, centroid_l2_ratio=sep.centroid_l2_ratio,
                             linear_probe_acc=sep.linear_probe_acc, temperature=temperature,
                             sft_loss=float(np.mean(self._sft)) if self._sft else None,
                             infonce=float(np.mean(self._nce)) if self._nce else None)
        self._sft, self._nce = [], []
        self.series.append(point)
        log.info("joint step %d: centroid L2 %s, linear probe %s, temperature %.3f, SFT %s, InfoNCE %s", step,
                 _fmt(point.centroid_l2), _fmt(point.linear_probe_acc), temperature, _fmt(point.sft_loss),
                 _fmt(point.infonce))
        self._judge(point, pinned)
        return point

    def _judge(self, p: MonitorPoint, pinned: str | None) -> None:
        cfg = self.cfg
        start = self.series[0].centroid_l2
        if start and p.centroid_l2 is not None and p.centroid_l2 < cfg.joint_abort_centroid_keep * start:
            self._abort("centroid_l2", p.step, f"the probe set's centroid L2 {p.centroid_l2:.4g} fell below "
                        f"{cfg.joint_abort_centroid_keep:.0%} of its {start:.4g} at step 0 (embedding collapse)")
        if p.sft_loss is not None:
            if p.sft_loss < self._best_sft:
                self._best_sft, self._stale = p.sft_loss, 0
            else:
                self._stale += 1
            if self._stale >= cfg.joint_abort_sft_patience:
                self._abort("sft_not_falling", p.step, f"the SFT loss {p.sft_loss:.4g} has not gone below its best "
                            f"{self._best_sft:.4g} for {self._stale} monitors")
        self._pinned = self._pinned + 1 if pinned else 0
        if pinned and self._pinned >= cfg.temperature_patience:
            self._abort(f"temperature_{pinned}", p.step, f"the head's temperature {p.temperature:.3g} sat at its "
                        f"{pinned} (bounds [{cfg.temperature_min}, {cfg.temperature_max}]) for {self._pinned} "
                        "monitors")

    @staticmethod
    def _abort(condition: str, step: int, why: str) -> None:
        raise JointAbortError(condition, step, f"joint training aborted at step {step}: {condition}: {why}")


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"
