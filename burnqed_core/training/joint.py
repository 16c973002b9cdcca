"""Joint LoRA + energy-head training (the seeds' v2 design, issue 67): one forward pass, two losses.

Each step of the SFT loop (`burnqed_core.training.sft.run_loop`, through its `LoopExtension` hook) takes its
SFT batch (the iteration's tactic pairs) and a contrastive batch: ``ebm.joint_batch_size`` proof-path states
of the trajectories of earlier iterations, each with ``ebm.num_negatives`` negatives (failed siblings first,
`burnqed_core.ebm.data.sample_group`), and their theorems' root goals. The states' prompts are appended to the
step's last SFT micro-batch and the decoder runs ONCE over both, with the adapter active: the SFT rows go
through the LM head (token cross-entropy, as `sft.token_loss_sum`), the state rows are pooled as the policy's
``encode`` pools them (`burnqed_core.policy.local.pool_hidden`, ``last_l2``: SGLang's ``/encode``) and scored
by the goal-conditioned head (`burnqed_core.ebm.model.EnergyHead`). The step backpropagates

    sft_loss + ebm.joint_lambda * InfoNCE

through the LoRA weights and the head (CURL-style auxiliary contrastive loss); InfoNCE has no temperature of
its own (the head's learnable one is the only one). The head has its own learning rate
(``ebm.joint_head_lr``; the adapter's is ``training.lr``) and its own gradient clipping.

Every ``ebm.joint_monitor_every`` steps the monitor (`burnqed_core.training.joint_monitor`) measures a fixed
probe set of states and aborts a run that collapses. The head of the checkpoint the run keeps is saved beside
the adapter (``joint_head.pt``, ``joint.json``: `JointRecord`, with the monitor's series and any abort);
the ``ebm`` stage then takes it as the iteration's EBM (`adopt_joint_head`) instead of training one.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from burnqed_core.config import EBMConfig
from burnqed_core.data.pairs.prompt import PromptFormat
from burnqed_core.ebm.data import ContrastiveData, build_data
from burnqed_core.ebm.embeddings import encoder_text
from burnqed_core.ebm.model import EnergyHead, info_nce
from burnqed_core.ebm.train import Split, batch_energies, head_config, head_param_groups, split_data, step_batch
from burnqed_core.errors import DataError
from burnqed_core.policy.local import pool_hidden
from burnqed_core.records import TrajectoryRecord
from burnqed_core.training.collate import IGNORE_INDEX
from burnqed_core.training.joint_head import JointRecord, save_joint_head
from burnqed_core.training.joint_monitor import AbortRecord, JointMonitor, MonitorPoint, probe_subset
from burnqed_core.training.sft import LoopAborted, LoopExtension, token_loss_from_logits

log = logging.getLogger(__name__)

POOLING = "last_l2"
#: At most this many states of the training theorems fit the head's standardiser before training.
STANDARDIZER_STATES = 2048


@dataclass
class JointData:
    """The contrastive side of a joint run: positives with their tiers, the split, the probe set."""

    data: ContrastiveData
    split: Split
    probe: ContrastiveData

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256("\n".join(self.data.keys).encode())
        h.update(f"{len(self.data.positives)}:{len(self.split.train_idx)}".encode())
        return h.hexdigest()[:16]


def joint_data(records: Sequence[TrajectoryRecord], cfg: EBMConfig) -> JointData:
    """The contrastive data of earlier iterations' trajectories; `DataError` when no proof path gives a
    positive."""
    data = build_data(records)
    if not data.positives:
        raise DataError("no positive proof states in the earlier trajectories: nothing to train an EBM on jointly")
    return JointData(data=data, split=split_data(data, cfg), probe=probe_subset(data, cfg.joint_probe_states,
                                                                                   cfg.seed))


# ----------------------------------------------------------------------------- encoding through the policy


class StateEncoder:
    """States as the policy encodes them (`burnqed_core.policy.local.LocalPolicy.encode_sync`): the prompt
    text of the model's `PromptFormat`, the tokenizer's special tokens, cut from the left to
    ``max_prompt_tokens`` keeping a leading BOS, right-padded."""

    def __init__(self, tokenizer: Any, fmt: PromptFormat, max_prompt_tokens: int, device: str) -> None:
        self.tokenizer = tokenizer
        self.fmt = fmt
        self.limit = max_prompt_tokens
        self.device = device
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.bos_id = tokenizer.bos_token_id

    def token_ids(self, state: str) -> list[int]:
        ids = list(self.tokenizer(encoder_text(state, self.fmt), add_special_tokens=True)["input_ids"])
        if len(ids) > self.limit:
            keep_bos = self.bos_id is not None and ids[0] == self.bos_id
            ids = [ids[0], *ids[len(ids) - (self.limit - 1):]] if keep_bos else ids[len(ids) - self.limit:]
        return ids

    def batch(self, states: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        rows = [self.token_ids(s) for s in states]
        return right_pad(rows, self.pad_id, self.device)


def right_pad(rows: Sequence[Sequence[int]], pad_id: int, device: str | torch.device,
              width: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    w = max(width or 0, max(len(r) for r in rows))
    ids = torch.full((len(rows), w), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), w), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(list(r), dtype=torch.long)
        mask[i, : len(r)] = 1
    return ids.to(device), mask.to(device)


def causal_lm(model: Any) -> Any:
    """The causal LM under a PEFT wrapper (the LoRA layers stay injected and active), or ``model``."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def decoder_hidden(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The final hidden states (after the last norm) of the decoder, without the LM head: what the policy's
    encoder reads (`LocalPolicy._last_hidden`)."""
    out = causal_lm(model).base_model(input_ids=ids, attention_mask=mask, use_cache=False)
    return out.last_hidden_state


def encode_states(model: Any, encoder: StateEncoder, states: Sequence[str], batch_size: int = 64) -> torch.Tensor:
    """Pooled embeddings ``[n, d]`` of ``states`` through ``model`` as it is (train or eval mode, with or
    without grad: the caller decides), float32 on the CPU only when no grad is kept."""
    out = []
    for s in range(0, len(states), batch_size):
        ids, mask = encoder.batch(states[s : s + batch_size])
        out.append(pool_hidden(decoder_hidden(model, ids, mask), mask, POOLING))
    return torch.cat(out)


def joint_forward(model: Any, batch: dict[str, torch.Tensor], state_ids: torch.Tensor,
                  state_mask: torch.Tensor, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """ONE decoder pass over an SFT micro-batch and a batch of state prompts (right-padded to one width):
    (the SFT rows' summed token cross-entropy, the state rows' pooled embeddings)."""
    b, width = batch["input_ids"].shape[0], max(batch["input_ids"].shape[1], state_ids.shape[1])

    def widen(t: torch.Tensor, fill: int) -> torch.Tensor:
        return torch.nn.functional.pad(t, (0, width - t.shape[1]), value=fill)

    ids = torch.cat([widen(batch["input_ids"], pad_id), widen(state_ids, pad_id)])
    mask = torch.cat([widen(batch["attention_mask"], 0), widen(state_mask, 0)])
    hidden = decoder_hidden(model, ids, mask)
    logits = causal_lm(model).get_output_embeddings()(hidden[:b])
    loss_sum, _ = token_loss_from_logits(logits, widen(batch["labels"], IGNORE_INDEX))
    return loss_sum, pool_hidden(hidden[b:], mask[b:], POOLING)


# ----------------------------------------------------------------------------- the loop's extension


class JointExtension(LoopExtension):
    """The joint step and its monitor (module docstring)."""

    def __init__(self, model: Any, head: EnergyHead, jd: JointData, cfg: EBMConfig, encoder: StateEncoder) -> None:
        self.model = model
        self.head = head
        self.jd = jd
        self.cfg = cfg
        self.encoder = encoder
        self.monitor = JointMonitor(cfg, jd.probe)
        self.groups = head_param_groups(head, cfg.joint_head_lr, cfg.weight_decay)
        self.steps = 0  # the last step made
        self._nce: float | None = None

    def param_groups(self) -> list[dict[str, Any]]:
        return self.groups

    def micro_loss(self, model: Any, batch: dict[str, Any], n_target: int, step: int,
                   last: bool) -> tuple[Any, float]:
        lam = self.cfg.joint_lambda
        if not last or lam == 0:  # λ = 0: SFT alone (the monitor still measures: the collapse baseline)
            return super().micro_loss(model, batch, n_target, step, last)
        jd, cfg = self.jd, self.cfg
        positives, groups = step_batch(jd.data, jd.split.train_idx, cfg.joint_batch_size, cfg.num_negatives,
                                       cfg.seed, step, jd.split.train_pool)
        rows = list(dict.fromkeys(r for i, g in zip(positives, groups, strict=True)
                                  for r in (jd.data.positives[i].state, jd.data.positives[i].goal, *g)))
        ids, mask = self.encoder.batch([jd.data.texts[r] for r in rows])
        loss_sum, z = joint_forward(model, batch, ids, mask, self.encoder.pad_id)
        e = batch_energies(self.head, z, jd.data, positives, groups, cfg.num_negatives,
                           row_of={r: j for j, r in enumerate(rows)})
        nce = info_nce(e)
        self._nce = float(nce.detach())
        sft = loss_sum / max(n_target, 1)
        return sft + lam * nce, float(sft.detach())

    def after_step(self, step: int, sft_loss: float) -> None:
        self.steps = step
        self.monitor.add_losses(sft_loss, self._nce)
        self._nce = None
        if self.monitor.due(step):
            self.measure(step)

    def measure(self, step: int) -> MonitorPoint:
        """Encode the probe set (eval mode, no grad) and judge it (`JointMonitor.measure`)."""
        was = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                z = encode_states(self.model, self.encoder, self.jd.probe.texts, self.cfg.encode_batch_size)
        finally:
            self.model.train(was)
        return self.monitor.measure(step, z.float().cpu().numpy(), float(self.head.temperature.detach()),
                                    self.head.temperature_pinned())

    def state_dict(self) -> dict[str, Any]:
        return {"head": self.head.state_dict(), "monitor": self.monitor.state_dict(), "steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state:
            self.head.load_state_dict(state["head"])
            self.monitor.load_state_dict(state["monitor"])
            self.steps = int(state.get("steps", 0))


# ----------------------------------------------------------------------------- the factory train_sft calls


@dataclass
class JointTraining:
    """`burnqed_core.training.sft.ExtensionFactory` of the joint training (``train_sft(extension=...)``)."""

    cfg: EBMConfig
    jd: JointData
    max_prompt_tokens: int

    def signature(self) -> dict[str, Any]:
        joint = {k: v for k, v in self.cfg.model_dump(mode="json").items()
                 if k not in ("encode_batch_size", "checkpoint_every", "save_every")}
        return {"ebm": joint, "contrastive": self.jd.fingerprint, "pooling": POOLING,
                "max_prompt_tokens": self.max_prompt_tokens}

    def build(self, model: Any, tokenizer: Any, fmt: PromptFormat, device: str) -> JointExtension:
        encoder = StateEncoder(tokenizer, fmt, self.max_prompt_tokens, device)
        head = self._new_head(model, encoder, device)
        ext = JointExtension(model, head, self.jd, self.cfg, encoder)
        ext.measure(0)
        log.info("joint training: %d positives of %d theorems, λ %.3g, head lr %.2e, probe %d states",
                 len(self.jd.split.train_idx), len(self.jd.split.train_thms), self.cfg.joint_lambda,
                 self.cfg.joint_head_lr, len(self.jd.probe.texts))
        return ext

    def _new_head(self, model: Any, encoder: StateEncoder, device: str) -> EnergyHead:
        jd = self.jd
        rows = sorted({r for t in jd.split.train_thms for r in jd.data.theorem_states.get(t, ())})
        rows = rows[:STANDARDIZER_STATES] or list(range(min(len(jd.data.texts), STANDARDIZER_STATES)))
        was = model.training
        model.eval()
        with torch.no_grad():
            z = encode_states(model, encoder, [jd.data.texts[r] for r in rows], self.cfg.encode_batch_size)
        model.train(was)
        torch.manual_seed(self.cfg.seed)
        head = EnergyHead(head_config(self.cfg, int(z.shape[1])))
        head.fit_standardizer(z.float().cpu())
        return head.to(device)

    def finish(self, ext: LoopExtension, best: Path | None, out: Path, aborted: LoopAborted | None) -> None:
        if not isinstance(ext, JointExtension):
            raise TypeError(f"expected the JointExtension, got {type(ext).__name__}")
        if best is not None:
            saved = torch.load(best / "optim.pt", map_location="cpu", weights_only=False).get("extension") or {}
            if saved:
                ext.head.load_state_dict(saved["head"])
        series = ext.monitor.series
        record = JointRecord(head=ext.head.cfg, pooling=POOLING, text_format=ext.encoder.fmt.version,
                             max_prompt_tokens=self.max_prompt_tokens, joint_lambda=self.cfg.joint_lambda,
                             head_lr=self.cfg.joint_head_lr, steps=ext.steps,
                             checkpoint=best.name if best is not None else None,
                             train_positives=len(self.jd.split.train_idx),
                             train_theorems=len(self.jd.split.train_thms), probe_states=len(self.jd.probe.texts),
                             monitor=series, aborted=AbortRecord(condition=aborted.condition, step=aborted.step,
                                                                 message=str(aborted)) if aborted else None)
        save_joint_head(ext.head, record, out)
