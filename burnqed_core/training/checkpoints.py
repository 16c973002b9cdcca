"""Training checkpoints, written so that a resumed run is exact: the trainable weights, optimiser, LR scheduler,
RNG states and the step, written to a temporary directory and renamed into place (a checkpoint directory exists
only when complete); the newest few and the best (by eval loss) are kept."""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from pathlib import Path
from typing import Any

from burnqed_core.errors import TrainingError
from burnqed_core.record_io import json_sha256

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
STATE_FILE = "state.json"
TRAINABLE_FILE = "trainable.safetensors"


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


def trainable_params(model: Any) -> dict[str, Any]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def rng_state() -> dict[str, Any]:
    import torch

    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
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
    weights = {n: p.detach().to("cpu").contiguous() for n, p in trainable_params(model).items()}
    save_file(weights, tmp / TRAINABLE_FILE)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "rng": rng_state(),
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
    params = trainable_params(model)
    if set(saved) != set(params):
        missing = sorted(set(params) - set(saved))[:3]
        raise TrainingError(f"{ckpt}: checkpoint does not match the model (e.g. missing {missing})")
    with torch.no_grad():
        for n, p in params.items():
            p.copy_(saved[n].to(p.device, p.dtype))


def prune_checkpoints(run_dir: Path, keep_latest: int, best_name: str | None) -> None:
    ckpts = list_checkpoints(run_dir)
    keep = {p.name for p in ckpts[-keep_latest:]}
    if best_name:
        keep.add(best_name)
    for p in ckpts:
        if p.name not in keep:
            shutil.rmtree(p, ignore_errors=True)
