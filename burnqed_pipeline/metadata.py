"""What the Dagster UI shows for each materialisation: what every stage shows (`stage_metadata`), a training
run's loss curve, a model's fingerprint, what the policy served. The eval's own view: `burnqed_pipeline.eval_metadata`.

The UI lists a materialisation's entries in the order given: a stage's own view comes first (its headline, tables
and plots), then what every stage has (summary, time, path, the partitions it read), then its result's numbers,
flat while the whole stays under `MAX_ENTRIES`, else in one table (``metrics``). `MetadataValue` has no image
type, so plots are PNGs inlined in markdown as data URIs (the UI renders them); paths are `MetadataValue.path`
(a copy button).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_core.loop.inputs import UsedPartitions
from burnqed_core.records import StageResult


def png_markdown(fig: Any, alt: str) -> dg.MetadataValue:
    """A matplotlib figure as markdown holding the PNG as a data URI."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return dg.MetadataValue.md(f"![{alt}](data:image/png;base64,{data})")


def _figure(width: float = 6.0, height: float = 3.2, columns: int = 1) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, columns, figsize=(width, height))


def loss_curve(model_dir: Path, title: str) -> dict[str, Any]:
    """Loss metadata of a training run dir (its ``metrics.json``): figures and the curve as a PNG."""
    from burnqed_core.training.metrics import TrainingMetrics

    try:
        m = TrainingMetrics.load(model_dir)
    except Exception:
        return {}
    out: dict[str, Any] = {"steps": m.steps, "train_examples": m.train_examples, "val_examples": m.val_examples,
                           "trainable_params": m.trainable_params, "tokens_per_s": round(m.tokens_per_s, 1)}
    if m.final_train_loss is not None:
        out["final_train_loss"] = round(m.final_train_loss, 4)
    if m.best_eval_loss is not None:
        out["best_eval_loss"] = round(m.best_eval_loss, 4)
    if m.loss_curve:
        fig, ax = _figure()
        ax.plot([p.step for p in m.loss_curve], [p.loss for p in m.loss_curve], label="train loss")
        if m.eval_curve:
            ax.plot([p.step for p in m.eval_curve], [p.eval_loss for p in m.eval_curve], "o-", label="eval loss")
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_title(title)
        ax.legend()
        out["loss_curve"] = png_markdown(fig, f"{title} loss curve")
    return out


def joint_monitor(adapter_dir: Path, title: str) -> dict[str, Any]:
    """The joint training's monitor (``joint.json`` beside the adapter, `burnqed_core.training.joint_head`): its
    series as a table (one row per monitor) and a plot (centroid L2, linear probe, temperature, both losses),
    and its abort; nothing for an adapter trained alone."""
    from burnqed_core.training.joint_head import has_joint_head, read_joint_record

    if not has_joint_head(adapter_dir):
        return {}
    rec = read_joint_record(adapter_dir)
    cols = ("step", "centroid_l2", "centroid_l2_ratio", "linear_probe_acc", "temperature", "sft_loss", "infonce")
    rows = [dg.TableRecord({c: getattr(p, c) if c == "step" or getattr(p, c) is None else round(getattr(p, c), 5)
                            for c in cols}) for p in rec.monitor]
    out: dict[str, Any] = {
        "joint_monitor": dg.MetadataValue.table(records=rows, schema=dg.TableSchema(
            columns=[dg.TableColumn(c, "int" if c == "step" else "float") for c in cols])),
        "joint_aborted": rec.aborted.message if rec.aborted is not None else "no",
    }
    fig, (left, right) = _figure(10.0, 3.2, columns=2)
    steps = [p.step for p in rec.monitor]
    for name in ("centroid_l2", "linear_probe_acc", "temperature"):
        left.plot(steps, [getattr(p, name) for p in rec.monitor], "o-", label=name)
    for name in ("sft_loss", "infonce"):
        right.plot(steps, [getattr(p, name) for p in rec.monitor], "o-", label=name)
    for ax in (left, right):
        ax.set_xlabel("step")
        ax.legend()
    left.set_title(f"{title}: probe set")
    right.set_title(f"{title}: losses")
    out["joint_monitor_plot"] = png_markdown(fig, f"{title} joint monitor")
    return out


def model_fingerprint(model_dir: Path) -> dict[str, Any]:
    """Identity of a model dir: sha256 of its config and of each weight file's name, size and first MiB
    (cheap even for a 7B model)."""
    cfg = model_dir / "config.json"
    weights = sorted(f for f in model_dir.glob("*") if f.suffix in (".safetensors", ".bin") and f.is_file())
    h = hashlib.sha256(cfg.read_bytes() if cfg.is_file() else b"")
    for f in weights:
        h.update(f"{f.name}:{f.stat().st_size}".encode())
        with f.open("rb") as fh:
            h.update(fh.read(1 << 20))
    return {"model_fingerprint": h.hexdigest()[:16], "weight_files": len(weights),
            "weight_bytes": sum(f.stat().st_size for f in weights)}


MAX_ENTRIES = 30
"""The most entries a materialisation shows flat; beyond it a stage's numbers go to one table (``metrics``)."""


def _flat(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in metrics.items():
        key = f"{prefix}{k}"
        if isinstance(v, bool):
            out[key] = dg.MetadataValue.bool(v)
        elif isinstance(v, (int, float)) or (isinstance(v, str) and len(v) <= 200):
            out[key] = v
        elif isinstance(v, Mapping) and not prefix:
            out.update(_flat(v, prefix=f"{key}."))
    return out


def metrics_table(flat: Mapping[str, Any]) -> dg.TableMetadataValue:
    """A stage's numbers as a table: one row per name (``value`` as text: numbers, flags and short strings)."""
    rows = [dg.TableRecord({"name": k, "value": str(getattr(v, "value", v))}) for k, v in flat.items()]
    return dg.MetadataValue.table(records=rows, schema=dg.TableSchema(
        columns=[dg.TableColumn("name", "string"), dg.TableColumn("value", "string")]))


def stage_metadata(res: StageResult, used: UsedPartitions, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A stage's metadata, in the order the UI lists it: its own view (``extra``: headline, tables, plots), then
    what every stage has (what it did, whether it was skipped, its time, output path, fingerprint and the
    partitions it used), then its result's numbers: flat while the whole stays under `MAX_ENTRIES`, else in one
    table (``metrics``)."""
    md: dict[str, Any] = dict(extra or {})
    md |= {
        "summary": dg.MetadataValue.md("```\n" + res.summary + "\n```") if "\n" in res.summary else res.summary,
        "skipped": dg.MetadataValue.bool(res.skipped),
        "seconds": res.seconds,
        "path": dg.MetadataValue.path(res.path),
        "inputs_fingerprint": res.fingerprint[:16],
        "partitions_used": used.describe(),
        "partitions_used_json": dg.MetadataValue.json(used.model_dump()),
    }
    flat = _flat({k: v for k, v in res.metrics.items() if k not in md and k != "served"})
    if len(md) + len(flat) < MAX_ENTRIES:
        md |= flat
    elif flat:
        md["metrics"] = metrics_table(flat)
    return md


def served_metadata(served: Mapping[str, Any]) -> dict[str, Any]:
    return {"served_model": dg.MetadataValue.json(json.loads(json.dumps(dict(served), default=str)))}
