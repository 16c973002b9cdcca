"""The head a joint run trained beside its adapter (`burnqed_core.training.joint`): ``joint_head.pt`` and
``joint.json`` (`JointRecord`: how its states were encoded, the monitor's series, any abort), and how the
``ebm`` stage adopts it as the iteration's EBM (`adopt_joint_head`): measured on the ``embeddings`` cache of
the merged model (the same encoder, pooling and prompt) and saved as any EBM (`burnqed_core.ebm.train`), with
the encoder fingerprint of that cache, so that the search's scorer loads it like a head trained apart.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import torch
from pydantic import BaseModel, Field

from burnqed_core.config import EBMConfig
from burnqed_core.ebm.embeddings import EmbeddingMismatchError
from burnqed_core.ebm.metrics import rank_metrics, separation_metrics
from burnqed_core.ebm.model import EnergyHead, HeadConfig, count_params
from burnqed_core.ebm.run import load_training_data
from burnqed_core.ebm.train import METRICS_FILE, EbmRecord, TrainReport, save_head, split_data
from burnqed_core.record_io import atomic_target, atomic_write_text
from burnqed_core.training.joint_monitor import AbortRecord, MonitorPoint

log = logging.getLogger(__name__)

JOINT_HEAD_FILE = "joint_head.pt"
JOINT_RECORD_FILE = "joint.json"


class JointRecord(BaseModel):
    """What a joint run trained beside its adapter: the head, how its states were encoded, the monitor."""

    kind: str = "burnqed_joint"
    head: HeadConfig
    pooling: str
    text_format: str
    max_prompt_tokens: int
    joint_lambda: float
    head_lr: float
    steps: int = Field(0, description="the steps the run made (to the abort, if any)")
    checkpoint: str | None = Field(None, description="the checkpoint the adapter and the head come from")
    train_positives: int = 0
    train_theorems: int = 0
    probe_states: int = 0
    monitor: list[MonitorPoint] = Field(default_factory=list)
    aborted: AbortRecord | None = None


def save_joint_head(head: EnergyHead, record: JointRecord, out_dir: str | Path) -> None:
    """``joint_head.pt`` then ``joint.json`` (written last: its presence means a usable head)."""
    out = Path(out_dir)
    tmp = atomic_target(out / JOINT_HEAD_FILE)
    torch.save({n: t.detach().cpu() for n, t in head.state_dict().items()}, tmp)
    tmp.replace(out / JOINT_HEAD_FILE)
    atomic_write_text(out / JOINT_RECORD_FILE, record.model_dump_json(indent=1))


def has_joint_head(adapter_dir: str | Path) -> bool:
    d = Path(adapter_dir)
    return (d / JOINT_RECORD_FILE).is_file() and (d / JOINT_HEAD_FILE).is_file()


def read_joint_record(adapter_dir: str | Path) -> JointRecord:
    return JointRecord.model_validate_json((Path(adapter_dir) / JOINT_RECORD_FILE).read_text(encoding="utf-8"))


def load_joint_head(adapter_dir: str | Path) -> tuple[EnergyHead, JointRecord]:
    record = read_joint_record(adapter_dir)
    head = EnergyHead(record.head)
    head.load_state_dict(torch.load(Path(adapter_dir) / JOINT_HEAD_FILE, map_location="cpu", weights_only=True))
    head.eval()
    return head, record


def adopt_joint_head(adapter_dir: str | Path, cache_dir: str | Path, trajectory_dirs: Sequence[str | Path],
                     cfg: EBMConfig, out_dir: str | Path, iteration: int | None = None) -> TrainReport:
    """Make the joint head of ``adapter_dir`` the EBM in ``out_dir``: its rank metrics and the encoder's
    separation measured on the cache's embeddings of the trajectories (as `train_ebm` reports them), its
    record keyed to the cache's encoder."""
    head, joint = load_joint_head(adapter_dir)
    z, data, meta = load_training_data(cache_dir, trajectory_dirs)
    if (meta.pooling, meta.text_format) != (joint.pooling, joint.text_format) or z.shape[1] != joint.head.dim:
        raise EmbeddingMismatchError(
            f"{cache_dir} holds {meta.pooling!r} {z.shape[1]}-d embeddings in format {meta.text_format!r}; the joint "
            f"head of {adapter_dir} read {joint.pooling!r} {joint.head.dim}-d ones in {joint.text_format!r}")
    split = split_data(data, cfg)
    zt = torch.from_numpy(z)
    report = TrainReport(steps=joint.steps, train_positives=len(split.train_idx), val_positives=len(split.val_idx),
                         train_theorems=len(split.train_thms), val_theorems=len(split.val_thms),
                         params=count_params(head), trained_jointly=True,
                         joint_abort=joint.aborted.message if joint.aborted is not None else None)
    report.train = rank_metrics(head, zt, data, split.train_eval_idx, split.train_groups, split="train")
    if split.val_idx:
        report.val = rank_metrics(head, zt, data, split.val_idx, split.val_groups, split="val")
    report.separation = separation_metrics(zt, data, cfg.val_fraction, cfg.seed)
    record = EbmRecord(head=head.cfg, pooling=meta.pooling, fingerprint=meta.fingerprint, text_format=meta.text_format,
                       model_path=meta.model_path, iteration=iteration, steps=joint.steps, best_step=joint.steps,
                       num_negatives=cfg.num_negatives, params=report.params)
    save_head(head, record, out_dir)
    atomic_write_text(Path(out_dir) / METRICS_FILE, report.model_dump_json(indent=1))
    log.info("EBM trained jointly with the adapter: %s", report.summary())
    return report
