"""Joint training (seed 002, "v2"): the LoRA adapter and the energy head
trained together, ``SFT loss + lambda x InfoNCE``, the InfoNCE gradients
flowing through the shared encoder (the LoRA-adapted policy).

Why: SFT alone moves the representation the EBM reads (seed 002, iteration
5: centroid L2 6.40 -> 1.33, the EBM's gain lost); a contrastive loss on the
same backbone keeps positive and negative states apart (CURL). Off by
default (``ebm.joint.enabled``); used at iterations N > 0, which have
trajectories to draw positives and negatives from.

One step = the SFT micro-batches of `training.sft` (token-weighted
cross-entropy on the tactic tokens) + one contrastive batch of
``ebm.joint.contrastive_batch_size`` positives with ``ebm.num_negatives``
negatives each (`ebm.data.sample_group`), every state and goal encoded WITH
gradients exactly as `LocalPolicy.encode` does at search time (policy
prompt, right padding, last token, L2-normalised), scored by the head. Two
learning rates: ``training.lr`` (schedule of the iteration) for LoRA,
``ebm.joint.ebm_lr`` for the head. The head's temperature is checked as in
`ebm.train` (a pinned temperature aborts).

Output: the adapter + tokenizer in ``out_dir`` (what `merge_adapter`
takes), the head in ``out_dir/ebm`` with its encoder fingerprint left
``pending``: the merged model is the encoder, so `attach_encoder` writes its
fingerprint after the merge. This loop saves at the end only (no mid-run
resume, unlike `sft.train_sft`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from burnqed_core.config import EBMConfig, TrainingConfig
from burnqed_core.data.prompt import PLAIN, PromptFormat
from burnqed_core.ebm.data import (
    ContrastiveData,
    build_data,
    fixed_groups,
    other_theorem_pool,
    sample_group,
    split_positives,
    theorem_in_val,
)
from burnqed_core.ebm.embeddings import encoder_text, model_fingerprint
from burnqed_core.ebm.metrics import EbmMetrics, rank_metrics
from burnqed_core.ebm.model import EnergyHead, info_nce
from burnqed_core.ebm.train import EbmRecord, TemperaturePinnedError, head_config, load_head, save_head
from burnqed_core.errors import DataError
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import TacticPair, TrajectoryRecord

log = logging.getLogger(__name__)

JOINT_EBM_DIR = "ebm"
PENDING = "pending:joint"
REPORT_FILE = "joint_metrics.json"


class JointReport(BaseModel):
    steps: int = 0
    lr: float = 0.0
    ebm_lr: float = 0.0
    ebm_weight: float = 0.0
    trainable_params: int = 0
    sft_loss_first: float | None = None
    sft_loss_last: float | None = None
    nce_loss_first: float | None = None
    nce_loss_last: float | None = None
    initial_eval_loss: float | None = None
    final_eval_loss: float | None = None
    temperature: float | None = None
    val: EbmMetrics | None = Field(None, description="the head on held-out theorems, encoder = the trained adapter")
    seconds: float = 0.0

    def summary(self) -> str:
        s = f"joint LoRA + EBM (lambda {self.ebm_weight}), {self.steps} steps"
        if self.sft_loss_first is not None:
            s += f", SFT loss {self.sft_loss_first:.3f} -> {self.sft_loss_last:.3f}"
        if self.nce_loss_first is not None:
            s += f", InfoNCE {self.nce_loss_first:.3f} -> {self.nce_loss_last:.3f}"
        if self.final_eval_loss is not None:
            s += f", eval loss {self.final_eval_loss:.3f}"
        if self.val is not None:
            s += f"; {self.val.summary()}"
        return s


class SharedEncoder:
    """`LocalPolicy.encode`'s pooling on a (LoRA) model in training: prompt
    text, BOS kept and cut from the left to ``max_tokens``, right padding,
    last real token, L2-normalised; with or without gradients."""

    def __init__(self, model: Any, tokenizer: Any, device: str, max_tokens: int, fmt: PromptFormat = PLAIN) -> None:
        self.model = model
        self.fmt = fmt
        self.tok = tokenizer
        self.device = device
        self.max_tokens = max_tokens
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def _ids(self, text: str) -> list[int]:
        ids = list(self.tok(text, add_special_tokens=True)["input_ids"])
        if len(ids) > self.max_tokens:
            bos = self.tok.bos_token_id
            ids = [ids[0], *ids[len(ids) - (self.max_tokens - 1):]] if bos is not None and ids[0] == bos \
                else ids[len(ids) - self.max_tokens:]
        return ids

    def encode(self, states: Sequence[str], batch: int = 64) -> Any:
        import torch

        from burnqed_core.policy.local import pool_hidden

        out = []
        for s in range(0, len(states), batch):
            rows = [self._ids(encoder_text(t, self.fmt)) for t in states[s : s + batch]]
            width = max(len(r) for r in rows)
            ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for i, r in enumerate(rows):
                ids[i, : len(r)] = torch.tensor(r)
                mask[i, : len(r)] = 1
            ids, mask = ids.to(self.device), mask.to(self.device)
            res = self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True, use_cache=False)
            out.append(pool_hidden(res.hidden_states[-1], mask, "last_l2"))
        return torch.cat(out) if out else torch.zeros((0, 0))


def _group_energies(head: EnergyHead, encoder: SharedEncoder, data: ContrastiveData, positives: list[int],
                    groups: list[list[int]], k: int) -> Any:
    """``[B, 1 + k]`` energies with gradients through the encoder; missing negatives +inf."""
    import torch

    rows: dict[int, int] = {}
    for i, g in zip(positives, groups, strict=True):
        p = data.positives[i]
        for r in (p.state, p.goal, *g[:k]):
            rows.setdefault(r, len(rows))
    z = encoder.encode([data.texts[r] for r in rows])
    b = len(positives)
    idx = torch.zeros((b, 1 + k), dtype=torch.long, device=z.device)
    valid = torch.zeros((b, 1 + k), dtype=torch.bool, device=z.device)
    goals = torch.tensor([rows[data.positives[i].goal] for i in positives], device=z.device)
    for j, (i, g) in enumerate(zip(positives, groups, strict=True)):
        members = [rows[data.positives[i].state], *(rows[r] for r in g[:k])]
        idx[j, : len(members)] = torch.tensor(members)
        valid[j, : len(members)] = True
    e = head(z[idx], z[goals].unsqueeze(1))
    return e.masked_fill(~valid, float("inf"))


def train_joint(
    train_pairs: Sequence[TacticPair],
    val_pairs: Sequence[TacticPair],
    records: Sequence[TrajectoryRecord],
    cfg: TrainingConfig,
    ebm_cfg: EBMConfig,
    out_dir: str | Path,
    base_model: str | Path,
    *,
    iteration: int = 1,
    warm_from: str | Path | None = None,
    max_steps: int | None = None,
    progress: bool = False,
) -> JointReport:
    """Train adapter and head together; see the module docstring."""
    import numpy as np
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoTokenizer

    from burnqed_core.training.collate import IGNORE_INDEX, CompletionCollator, encode_pairs
    from burnqed_core.training.sft import (
        SampleOrder,
        TrainingError,
        evaluate,
        is_adapter_dir,
        iteration_schedule,
        load_base,
        lora_model,
        lr_schedule,
        resolve_device,
        token_loss_sum,
    )

    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jc = ebm_cfg.joint
    device = resolve_device(cfg.device)
    lr, steps = iteration_schedule(cfg, iteration)
    steps = max_steps or steps
    base, warm_adapter = str(base_model), None
    if warm_from is not None:
        if is_adapter_dir(warm_from):
            warm_adapter = Path(warm_from)
        elif (Path(warm_from) / "config.json").exists():
            base = str(warm_from)
        else:
            raise TrainingError(f"{warm_from}: neither an adapter dir nor a model dir")

    data = build_data(records)
    train_idx, val_idx = split_positives(data, ebm_cfg.val_fraction, ebm_cfg.seed)
    if not train_idx:
        raise DataError("joint training needs positive proof states (depth >= 1) in the trajectories")
    thms = sorted(data.theorem_states)
    train_pool = other_theorem_pool(data, [t for t in thms if not theorem_in_val(t, ebm_cfg.val_fraction,
                                                                                    ebm_cfg.seed)])
    val_pool = other_theorem_pool(data, [t for t in thms if theorem_in_val(t, ebm_cfg.val_fraction, ebm_cfg.seed)])
    k = ebm_cfg.num_negatives

    tokenizer = AutoTokenizer.from_pretrained(base)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    fmt = PromptFormat.of_model(base, default=PromptFormat(local_names=cfg.local_names, numerals=cfg.numerals))
    train_ex, _ = encode_pairs(tokenizer, ((p.state_before, p.tactic) for p in train_pairs), cfg.max_seq_len,
                               fmt=fmt)
    val_ex, _ = encode_pairs(tokenizer, ((p.state_before, p.tactic) for p in val_pairs), cfg.max_seq_len, fmt=fmt)
    if not train_ex:
        raise DataError("no SFT example fits training.max_seq_len")

    torch.manual_seed(cfg.seed)
    model = lora_model(load_base(base, cfg.qlora, device, cfg.gradient_checkpointing, cfg.lora.target_modules),
                        cfg, warm_adapter)
    encoder = SharedEncoder(model, tokenizer, device, cfg.max_seq_len, fmt)
    hidden = int(model.config.hidden_size)
    head = EnergyHead(head_config(ebm_cfg, hidden)).to(device)
    train_thm_rows = sorted({r for t in {data.positives[i].theorem for i in train_idx}
                             for r in data.theorem_states.get(t, ())})[:4096]
    model.eval()
    with torch.no_grad():
        head.fit_standardizer(encoder.encode([data.texts[r] for r in train_thm_rows]).float())
    model.train()
    lora_params = [p for p in model.parameters() if p.requires_grad]
    scale = [head.log_temperature, head.first_gain]
    decay = [p for n, p in head.named_parameters() if n not in ("log_temperature", "first_gain")]
    opt = torch.optim.AdamW([{"params": lora_params, "lr": lr, "weight_decay": 0.0},
                             {"params": decay, "lr": jc.ebm_lr, "weight_decay": ebm_cfg.weight_decay},
                             {"params": scale, "lr": jc.ebm_lr, "weight_decay": 0.0}])
    warm = min(cfg.warmup_steps, steps)
    lora_sched = lr_schedule(warm, steps, cfg.lr_schedule, cfg.min_lr_ratio)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, [lora_sched, lambda _k: 1.0, lambda _k: 1.0])
    collator = CompletionCollator(tokenizer.pad_token_id)
    order = SampleOrder(len(train_ex), cfg.seed)
    n_trainable = sum(p.numel() for p in lora_params) + sum(p.numel() for p in head.parameters())
    report = JointReport(lr=lr, ebm_lr=jc.ebm_lr, ebm_weight=jc.ebm_weight, trainable_params=n_trainable)
    if val_ex:
        report.initial_eval_loss = evaluate(model, val_ex, collator, cfg.batch_size, device)
    pinned = 0
    bar = tqdm(total=steps, desc="train joint", unit="step", disable=not progress, mininterval=1.0)
    for step in range(steps):
        micro = [order.take((step * cfg.grad_accum + m) * cfg.batch_size, cfg.batch_size)
                 for m in range(cfg.grad_accum)]
        batches = [collator([train_ex[i] for i in idx]) for idx in micro]
        n_target = sum(int((b["labels"] != IGNORE_INDEX).sum()) for b in batches)
        opt.zero_grad(set_to_none=True)
        sft = 0.0
        for b in batches:
            loss_sum, _ = token_loss_sum(model, {kk: v.to(device) for kk, v in b.items()})
            loss = loss_sum / max(n_target, 1)
            loss.backward()
            sft += float(loss.detach())
        rng = np.random.default_rng([ebm_cfg.seed, step])
        picks = rng.choice(len(train_idx), size=jc.contrastive_batch_size,
                           replace=len(train_idx) < jc.contrastive_batch_size)
        positives = [train_idx[int(j)] for j in picks]
        groups = [sample_group(data, data.positives[i], k, rng, train_pool) for i in positives]
        nce = info_nce(_group_energies(head, encoder, data, positives, groups, k))
        (jc.ebm_weight * nce).backward()
        torch.nn.utils.clip_grad_norm_(lora_params, cfg.max_grad_norm)
        opt.step()
        sched.step()
        nv = float(nce.detach())
        if not (math.isfinite(sft) and math.isfinite(nv)):
            raise TrainingError(f"joint training diverged at step {step + 1} (SFT {sft}, InfoNCE {nv})")
        if step == 0:
            report.sft_loss_first, report.nce_loss_first = sft, nv
        report.sft_loss_last, report.nce_loss_last = sft, nv
        bar.update(1)
        bar.set_postfix(sft=f"{sft:.3f}", nce=f"{nv:.3f}", refresh=False)
        if (step + 1) % ebm_cfg.temperature_check_every == 0:
            p = head.temperature_pinned()
            pinned = pinned + 1 if p else 0
            if p and pinned >= ebm_cfg.temperature_patience:
                raise TemperaturePinnedError(f"joint training: EBM temperature pinned at its {p} at step {step + 1}")
    bar.close()
    report.steps = steps
    model.eval()
    head.eval()
    if val_ex:
        report.final_eval_loss = evaluate(model, val_ex, collator, cfg.batch_size, device)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    fmt.save(out)
    record = EbmRecord(head=head.cfg, pooling="last_l2", fingerprint=PENDING, text_format=fmt.version,
                       iteration=iteration, steps=steps, num_negatives=k,
                       params=sum(p.numel() for p in head.parameters()))
    save_head(head.cpu(), record, out / JOINT_EBM_DIR)
    if val_idx:
        with torch.no_grad():
            z = encoder.encode(data.texts).float().cpu()
        report.val = rank_metrics(head, z, data, val_idx, fixed_groups(data, val_idx, k, ebm_cfg.seed, val_pool))
    report.temperature = float(head.temperature.detach())
    report.seconds = time.perf_counter() - t0
    atomic_write_text(out / REPORT_FILE, report.model_dump_json(indent=1))
    log.info("%s", report.summary())
    return report


def attach_encoder(adapter_dir: str | Path, merged_dir: str | Path, out_dir: str | Path) -> Path:
    """Save the jointly trained head of ``adapter_dir`` to ``out_dir`` as an EBM of the merged
    model ``merged_dir`` (its encoder): the fingerprint left pending by `train_joint` is filled in."""
    head, record = load_head(Path(adapter_dir) / JOINT_EBM_DIR)
    record = record.model_copy(update={"fingerprint": model_fingerprint(merged_dir),
                                       "model_path": str(Path(merged_dir).resolve())})
    save_head(head, record, out_dir)
    return Path(out_dir)


def has_joint_head(adapter_dir: str | Path | None) -> bool:
    return adapter_dir is not None and (Path(adapter_dir) / JOINT_EBM_DIR / "ebm.json").is_file()
