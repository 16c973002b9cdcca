"""What the Dagster UI shows for each materialisation.

An eval's figures are tables the UI draws as tables (`MetadataValue.table`: one row per node budget, one row
per iteration in the comparison), with its full markdown report and its plot beside them. `MetadataValue` has
no image type, so plots are PNGs inlined in markdown as data URIs (the UI renders them); paths are
`MetadataValue.path` (a copy button).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from burnqed_core.eval.summary import EvalSummary
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


def _est(e: Any) -> tuple[float | None, float | None, float | None]:
    return (round(e.value, 4), round(e.low, 4), round(e.high, 4)) if e is not None else (None, None, None)


def summary_table(s: EvalSummary) -> dg.TableMetadataValue:
    """An eval summary as a table: one row per node budget, rates with their 95% cluster-bootstrap intervals."""
    cols = [("budget", "int"), ("solved", "string"), ("rate", "float"), ("rate_low", "float"), ("rate_high", "float"),
            ("by_cluster", "float"), ("pass1", "float"), ("hard", "string"), ("hard_rate", "float"),
            ("avg_nodes_to_proof", "float"), ("baseline_c", "string")]
    rows = []
    for b in s.budgets:
        rate, low, high = _est(b.all_ci)
        rows.append(dg.TableRecord({
            "budget": b.budget, "solved": f"{b.all.solved}/{b.all.total}",
            "rate": rate if rate is not None else round(b.all.rate, 4), "rate_low": low, "rate_high": high,
            "by_cluster": _est(b.all_by_cluster)[0], "pass1": round(b.pass1, 4),
            "hard": f"{b.hard.solved}/{b.hard.total}", "hard_rate": round(b.hard.rate, 4),
            "avg_nodes_to_proof": round(b.avg_nodes_proved, 2),
            "baseline_c": f"{b.structural.solved}/{b.structural.total}" if b.structural is not None else None}))
    return dg.MetadataValue.table(records=rows, schema=dg.TableSchema(
        columns=[dg.TableColumn(name, kind) for name, kind in cols]))


def comparison_table(summaries: Sequence[EvalSummary]) -> dg.TableMetadataValue:
    """Evals across iterations as a table: one row per iteration, the rate at each budget, the hard split, the
    baselines (a), (b), (c), the policy alone and what was solved beyond automation."""
    budgets = sorted({b.budget for s in summaries for b in s.budgets})
    cols = [("iteration", "int"), *((f"rate_at_{b}", "float") for b in budgets), ("by_cluster", "float"),
            ("hard_rate", "float"), ("beyond_automation", "int"), ("baseline_a", "float"), ("baseline_b", "float"),
            ("baseline_c", "float"), ("policy_alone", "float")]
    rows = []
    for s in summaries:
        rec: dict[str, Any] = {"iteration": s.iteration}
        for b in budgets:
            r = s.rate_at(b)
            rec[f"rate_at_{b}"] = round(r, 4) if r is not None else None
        rec |= {"by_cluster": _est(s.cumulative_by_cluster)[0], "hard_rate": round(s.cumulative_hard.rate, 4),
                "beyond_automation": s.beyond_count, "baseline_a": round(s.automation_baseline.rate, 4),
                "baseline_b": round(s.defaware_baseline.rate, 4),
                "baseline_c": round(s.structural_baseline.rate, 4) if s.structural_baseline is not None else None,
                "policy_alone": round(s.policy_only.cumulative.rate, 4) if s.policy_only is not None else None}
        rows.append(dg.TableRecord(rec))
    return dg.MetadataValue.table(records=rows, schema=dg.TableSchema(
        columns=[dg.TableColumn(name, kind) for name, kind in cols]))


def set_metadata(slug: str, s: EvalSummary) -> dict[str, Any]:
    """One more set of the eval (``eval.also``), under ``<slug>_``: its table, its report, its rates per theorem
    and per cluster with their 95% intervals."""
    from burnqed_core.eval.report import format_markdown

    out: dict[str, Any] = {f"{slug}_table": summary_table(s), f"{slug}_report": dg.MetadataValue.md(format_markdown(s)),
                           f"{slug}_cumulative_rate": round(s.cumulative.rate, 4),
                           f"{slug}_hard_rate": round(s.cumulative_hard.rate, 4), f"{slug}_theorems": s.theorems}
    for key, est in (("cumulative_rate", s.cumulative_ci), ("cumulative_by_cluster", s.cumulative_by_cluster),
                     ("hard_rate", s.hard_ci)):
        if est is not None:
            out |= {f"{slug}_{key}": round(est.value, 4), f"{slug}_{key}_low": round(est.low, 4),
                    f"{slug}_{key}_high": round(est.high, 4)}
    return out


def eval_metadata(summaries: Sequence[EvalSummary]) -> dict[str, Any]:
    """The last summary as a table (``eval_table``, one row per budget) with its markdown report, the comparison
    across iterations as a table, and the solve-rate plot; the rates per theorem and per cluster with their 95%
    cluster-bootstrap intervals (``<rate>_low``/``<rate>_high``), and the change from the iteration before
    with its paired interval (``change_*``)."""
    from burnqed_core.eval.report import format_markdown, headline

    s = summaries[-1]
    out: dict[str, Any] = {
        "eval_table": summary_table(s),
        "eval_report": dg.MetadataValue.md(format_markdown(s)),
        "comparison": comparison_table(summaries),
        "headline": dg.MetadataValue.md("\n".join(f"- {line}" for line in headline(s))),
        "cumulative_rate": round(s.cumulative.rate, 4),
        "hard_rate": round(s.cumulative_hard.rate, 4),
        "automation_baseline": round(s.automation_baseline.rate, 4),
        "theorems": s.theorems,
        "clusters": s.clusters,
        "newly_solved": len(s.newly_solved),
    }
    if s.structural_baseline is not None:
        out["structural_baseline"] = round(s.structural_baseline.rate, 4)
    for key, best in (("best_baseline", s.best_baseline), ("best_baseline_hard", s.best_baseline_hard)):
        if best is not None:
            out[key] = best.describe()
            if best.versus is not None:
                c = best.versus.change
                out |= {f"vs_{key}": round(c.value, 4), f"vs_{key}_low": round(c.low, 4),
                        f"vs_{key}_high": round(c.high, 4)}
    for key, est in (("cumulative_rate", s.cumulative_ci), ("cumulative_by_cluster", s.cumulative_by_cluster),
                     ("hard_rate", s.hard_ci), ("hard_by_cluster", s.hard_by_cluster),
                     ("per_attempt_rate", s.per_attempt), ("per_attempt_by_cluster", s.per_attempt_by_cluster)):
        if est is not None:
            out |= {key: round(est.value, 4), f"{key}_low": round(est.low, 4), f"{key}_high": round(est.high, 4)}
    if len(summaries) > 1:
        from burnqed_core.eval.compare import compare_summaries, format_compare_markdown

        c = compare_summaries(summaries[-2:], [f"iteration {x.iteration}" for x in summaries[-2:]])
        out["change"] = dg.MetadataValue.md(format_compare_markdown(c))
        paired = c.changes[-1].paired
        for d in paired.deltas if paired is not None else []:
            key = "change_" + "_".join("".join(ch if ch.isalnum() else " " for ch in d.name.lower()).split())
            out |= {key: round(d.change.value, 4), f"{key}_low": round(d.change.low, 4),
                    f"{key}_high": round(d.change.high, 4)}
    import tempfile

    from burnqed_core.eval.plot import plot_summaries

    with tempfile.TemporaryDirectory() as tmp:  # the report's own plot: hard split, both baselines, EBM ablation
        png = plot_summaries(summaries, Path(tmp) / "solve_rate.png", title=f"Solve rate on {s.benchmark}")
        data = base64.b64encode(png.read_bytes()).decode()
    out["solve_rate_plot"] = dg.MetadataValue.md(f"![solve rate per budget](data:image/png;base64,{data})")
    return out


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


def stage_metadata(res: StageResult, used: UsedPartitions, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Common metadata of every stage: what it did, whether it was skipped, its counts, the partitions it used,
    its output path and fingerprint."""
    md: dict[str, Any] = {
        "summary": dg.MetadataValue.md("```\n" + res.summary + "\n```") if "\n" in res.summary else res.summary,
        "skipped": dg.MetadataValue.bool(res.skipped),
        "seconds": res.seconds,
        "path": dg.MetadataValue.path(res.path),
        "inputs_fingerprint": res.fingerprint[:16],
        "partitions_used": used.describe(),
        "partitions_used_json": dg.MetadataValue.json(used.model_dump()),
    }
    md.update(_flat({k: v for k, v in res.metrics.items() if k not in md and k != "served"}))
    if extra:
        md.update(extra)
    return md


def served_metadata(served: Mapping[str, Any]) -> dict[str, Any]:
    return {"served_model": dg.MetadataValue.json(json.loads(json.dumps(dict(served), default=str)))}
