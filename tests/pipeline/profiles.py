"""Cheap profiles for the pipeline tests: the tiny profile with a smaller model, a few steps and small
theorem slices, written to a YAML file that `ProfileResource` (and `dagster dev`) load by path."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from burnqed_core.config import REPO_CONFIGS
from burnqed_core.data.theorems.load import automation_map, load_theorems
from burnqed_core.record_io import write_jsonl

CHEAP: dict[str, Any] = {
    "data.base_subsample": 200,
    "training.tiny_model.hidden_size": 64, "training.tiny_model.intermediate_size": 128,
    "training.tiny_model.num_layers": 2, "training.tiny_model.vocab_size": 512,
    "training.tiny_model.pretrain_steps": 30, "training.tiny_model.pretrain_batch_size": 16,
    "training.max_steps": 10, "training.max_steps_later": 6, "training.eval_every": 5,
    "training.save_every": 5, "training.batch_size": 8, "training.lora.r": 4,
    "search.max_nodes": 6, "search.collect_candidates": 4, "search.concurrency": 6,
    "eval.budgets": [2, 6], "eval.num_candidates": 4, "eval.max_theorems": 6, "eval.also": [],
    "lean.num_workers": 1, "lean.embedded.start_timeout_s": 900,
}


def slice_set(spec: str, per_family: int, out: Path) -> Path:
    """The first theorems of each family of a bundled set, with the matching part of its automation map."""
    by_family = defaultdict(list)
    for t in load_theorems(spec):
        by_family[t.family].append(t)
    picked = [t for fam in sorted(by_family) for t in by_family[fam][:per_family]]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(picked, out)
    auto = automation_map(spec) or {}
    (out.parent / "automation.json").write_text(json.dumps({t.name: auto[t.name] for t in picked if t.name in auto},
                                                           indent=1, sort_keys=True))
    return out


def leandojo_corpus(out: Path, theorems: int = 12) -> Path:
    """A LeanDojo Benchmark 4 style ``train.json`` built from the bundled corpus's known proofs (states are
    rendered from the statements: enough for tactic-pair preparation and training, no Lean needed)."""
    entries = []
    for i, t in enumerate(load_theorems("bundled:corpus")[:theorems]):
        tactics = [{"tactic": tac, "annotated_tactic": None, "state_before": f"⊢ {t.statement} -- step {k}",
                    "state_after": "no goals" if k == len(t.proof) - 1 else f"⊢ {t.statement} -- step {k + 1}"}
                   for k, tac in enumerate(t.proof)]
        entries.append({"url": "https://example.invalid/repo", "commit": "0" * 40, "file_path": f"Corpus/F{i}.lean",
                        "full_name": t.name, "start": [1, 1], "end": [2, 1], "traced_tactics": tactics})
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.json").write_text(json.dumps(entries), encoding="utf-8")
    return out


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = tree
        keys = dotted.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return tree


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def write_profile(path: Path, overrides: dict[str, Any]) -> Path:
    """The tiny profile with `CHEAP` and ``overrides`` (dotted keys) applied, as a YAML file."""
    raw = yaml.safe_load((REPO_CONFIGS / "tiny.yaml").read_text(encoding="utf-8"))
    raw = _merge(raw, nest({**CHEAP, **overrides}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path
