"""Supervised fine-tuning: LoRA / QLoRA on tactic pairs, resumable after a kill.

A manual training loop rather than HF Trainer, because resume must be exact and cheap to reason about: the loop
(`burnqed_core.training.loop`), its checkpoints (`burnqed_core.training.checkpoints`), its learning-rate schedule
(`burnqed_core.training.schedule`) and the base model with its adapter (`burnqed_core.training.base_models`,
QLoRA included) are modules of their own; this one is the job: the pairs read and encoded in the model's prompt
format, the settings signed so that a resumed run is the same run, and the best checkpoint saved as the adapter.

Iteration N > 0 warm-starts from iteration N-1: either its adapter (trained further) or its merged model (a fresh
adapter on top), with ``lr * lr_decay_per_iteration ** N`` and ``max_steps_later`` steps.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from burnqed_core.config import TrainingConfig
from burnqed_core.data.pairs.prompt import PromptFormat
from burnqed_core.errors import DataError, TrainingError
from burnqed_core.record_io import file_sha256
from burnqed_core.records import TacticPair
from burnqed_core.training.base_models import adapter_base, count_params, is_adapter_dir, load_base, lora_model
from burnqed_core.training.checkpoints import load_trainable, settings_signature
from burnqed_core.training.collate import Example, encode_pairs
from burnqed_core.training.loop import LoopAborted, LoopExtension, LoopSettings, resolve_device, run_loop
from burnqed_core.training.metrics import TrainingMetrics
from burnqed_core.training.run_record import RunRecord, fingerprint_pairs
from burnqed_core.training.schedule import iteration_schedule

log = logging.getLogger(__name__)

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
                        min_lr_ratio=cfg.min_lr_ratio, length_groups=cfg.length_groups)


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
    trainable, total = count_params(model)
    log.info("%s on %s (%s, %d torch threads): %s trainable of %s parameters, %d train / %d val examples, lr %.2e, "
             "%d steps", kind, base, device, torch.get_num_threads(), f"{trainable:,}", f"{total:,}", len(train_ex),
             len(val_ex), settings.lr, settings.max_steps)

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
