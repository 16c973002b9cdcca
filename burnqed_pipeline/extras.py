"""The metadata a stage's style asks for besides its result (`burnqed_pipeline.vocabulary.Style.extras`), one
function per kind (`EXTRAS`), each reading only the stage's output and result: the factory calls them by kind
and knows no stage."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from burnqed_core.records import StageResult
from burnqed_pipeline.metadata import joint_monitor, loss_curve, model_fingerprint, served_metadata
from burnqed_pipeline.vocabulary import Extra


@dataclass(frozen=True)
class Finished:
    """What an extra reads: the stage's title in the UI (`burnqed_pipeline.vocabulary.Style.title`), its output
    directory and its result."""

    title: str
    out: Path
    result: StageResult


def _loss_curve(f: Finished) -> dict[str, Any]:
    return loss_curve(f.out, f.title)


def _joint_monitor(f: Finished) -> dict[str, Any]:
    return joint_monitor(f.out, f.title)


def _model_fingerprint(f: Finished) -> dict[str, Any]:
    return model_fingerprint(f.out) if (f.out / "config.json").exists() else {}


def _served(f: Finished) -> dict[str, Any]:
    return served_metadata(f.result.metrics.get("served", {}))


def _eval_table(f: Finished) -> dict[str, Any]:
    from burnqed_core.loop.eval_outputs import read_eval_outputs
    from burnqed_pipeline.eval_metadata import eval_metadata

    outputs = read_eval_outputs(f.out)
    return eval_metadata(outputs) if outputs is not None else {}


EXTRAS: Mapping[Extra, Callable[[Finished], dict[str, Any]]] = MappingProxyType({
    "eval_table": _eval_table, "joint_monitor": _joint_monitor, "loss_curve": _loss_curve,
    "model_fingerprint": _model_fingerprint, "served": _served,
})


def extras(kinds: tuple[Extra, ...], finished: Finished) -> dict[str, Any]:
    """The metadata of ``kinds``, in that order."""
    md: dict[str, Any] = {}
    for kind in kinds:
        md |= EXTRAS[kind](finished)
    return md
