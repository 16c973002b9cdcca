"""What several stages share: the known proofs' states (``ebm.hindsight``: ``embeddings`` and ``ebm``), and how
a training run is summarised (``base_model`` and ``lora_adapter``)."""

from __future__ import annotations

from typing import Any

from burnqed_core.loop import corpus
from burnqed_core.loop.spec import StageContext


def known_proof_states(ctx: StageContext[Any], hindsight: bool) -> dict[str, list[str]] | None:
    """With ``hindsight`` (``ebm.hindsight``): the known proofs' states of the training side of the base split
    (never an exercise's or a validation theorem's), from the stage's ``base_tactic_pairs`` and ``base_model``
    inputs."""
    if not hindsight:
        return None
    from burnqed_core.ebm.hindsight import known_paths

    split = corpus.read_base_split(ctx.input("base_model"))
    return known_paths(corpus.base_pairs(ctx.input("base_tactic_pairs")), frozenset(split.train))


def train_metrics(m: Any) -> dict[str, Any]:
    d = m.model_dump(mode="json")
    d.pop("loss_curve", None)
    return d


def train_summary(what: str, m: Any) -> str:
    d = m.model_dump(mode="json")
    curve = d.get("loss_curve") or []
    first = curve[0]["loss"] if curve else None
    last = curve[-1]["loss"] if curve else None
    parts = [what]
    if first is not None:
        parts.append(f"loss {first:.3f} -> {last:.3f}")
    if d.get("best_eval_loss") is not None:
        parts.append(f"best eval loss {d['best_eval_loss']:.3f}")
    parts.append(f"{d['steps']} steps, {d['tokens_per_s']:.0f} tokens/s, {d['trainable_params']:,} trainable "
                 f"params, {d['wall_time_s']:.0f} s")
    return ", ".join(parts)
