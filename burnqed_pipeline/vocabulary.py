"""What the Dagster UI calls each stage and how it shows it: the vocabulary of the pipeline, kept here and not in
the core's stage specs (`burnqed_core.loop.spec`).

Per stage: its asset group (``base``, ``iteration``, ``nightly``: the jobs select by group), its kinds (the
UI's icons), a label (what the UI calls its work, e.g. the title of its loss curve), the step priority (when
steps of several stages are ready in one run, the higher priority's run first), whether it is materialised
as soon as its inputs land (eager automation), the progress the step logs while it runs, what a shard step
says it did (``shard_verb``), and the metadata it adds to its result (`Extra`).
`tests/pipeline/test_definitions.py` checks that every stage has an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Extra = Literal["loss_curve", "model_fingerprint", "served", "eval_table", "joint_monitor"]
BASE_GROUP = "base"
ITERATION_GROUP = "iteration"
NIGHTLY_GROUP = "nightly"


@dataclass(frozen=True)
class Style:
    group: str
    kinds: frozenset[str]
    label: str = ""
    priority: int = 0
    eager: bool = False
    progress: Literal["training", "search"] | None = None
    extras: tuple[Extra, ...] = ()
    shard_verb: str = "done"

    def title(self, name: str, n: int | None) -> str:
        """The stage's work as the UI names it: the label (``pre-training``; ``LoRA iteration N``)."""
        label = self.label or name
        return f"{label} iteration {n}" if n is not None else label


STYLES: Mapping[str, Style] = MappingProxyType({
    "base_tactic_pairs": Style(BASE_GROUP, frozenset({"parquet"})),
    "base_model": Style(BASE_GROUP, frozenset({"pytorch"}), label="pre-training", progress="training",
                        extras=("loss_curve", "model_fingerprint")),
    "automation_baselines": Style(BASE_GROUP, frozenset({"json"})),
    "premise_index": Style(BASE_GROUP, frozenset({"parquet"})),
    "tactic_pairs": Style(ITERATION_GROUP, frozenset({"parquet"})),
    "lora_adapter": Style(ITERATION_GROUP, frozenset({"pytorch"}), label="LoRA", progress="training",
                          extras=("loss_curve", "joint_monitor")),
    "merged_model": Style(ITERATION_GROUP, frozenset({"safetensors"}), extras=("model_fingerprint",)),
    "embeddings": Style(ITERATION_GROUP, frozenset({"parquet"})),
    "ebm": Style(ITERATION_GROUP, frozenset({"pytorch"})),
    "premise_reranker": Style(ITERATION_GROUP, frozenset({"pytorch"})),
    "trajectories": Style(ITERATION_GROUP, frozenset({"parquet"}), progress="search", extras=("served",),
                          shard_verb="searched"),
    # priority 1: in one run the report goes before the iteration's trajectory search (only iteration N+1 reads
    # that), so whoever watches the run sees the eval first
    "eval_report": Style(ITERATION_GROUP, frozenset({"markdown"}), priority=1, eager=True, progress="search",
                         extras=("eval_table", "served"), shard_verb="evaluated"),
    "nightly_eval": Style(NIGHTLY_GROUP, frozenset({"markdown"}), extras=("eval_table",), shard_verb="evaluated"),
})


DEFAULT = Style(ITERATION_GROUP, frozenset())


def style(name: str) -> Style:
    """The stage's entry (`tests/pipeline/test_definitions.py`: every stage of `burnqed_core.loop.stages` has
    one); a stage made elsewhere (a test's) gets a plain iteration asset."""
    return STYLES.get(name, DEFAULT)
