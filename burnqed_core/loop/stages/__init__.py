"""Every stage, declared once (`burnqed_core.loop.spec.StageSpec`), one module per stage: its settings model,
its run function and its spec. `SPECS`: the stages of the loop, in the order they run; `NIGHTLY`: the stage the
nightly schedule runs; `BY_NAME`: all of them.

To add a setting: add the field to `burnqed_core.config`, the field to the ``Settings`` model of each stage
that reads it (`tests/core/loop/test_stages_reads.py` fails on a read of an undeclared setting), and read it;
from then on changing it re-runs exactly the stages that hold it. To add a stage: write its module here and
add its spec to `SPECS`; the Dagster asset, its fingerprint, inputs checks, metadata and its place in
``burnqed loop`` follow (what the UI calls it: `burnqed_pipeline.vocabulary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from burnqed_core.loop.spec import StageSpec, topological
from burnqed_core.loop.stages import (
    automation_baselines,
    base_model,
    base_tactic_pairs,
    ebm,
    embeddings,
    eval_report,
    lora_adapter,
    merged_model,
    nightly_eval,
    premise_index,
    premise_reranker,
    tactic_pairs,
    trajectories,
)

SPECS: tuple[StageSpec, ...] = tuple(topological([
    base_tactic_pairs.BASE_TACTIC_PAIRS, base_model.BASE_MODEL, automation_baselines.AUTOMATION_BASELINES,
    premise_index.PREMISE_INDEX,
    tactic_pairs.TACTIC_PAIRS, lora_adapter.LORA_ADAPTER, merged_model.MERGED_MODEL, embeddings.EMBEDDINGS,
    ebm.EBM, premise_reranker.PREMISE_RERANKER, trajectories.TRAJECTORIES, eval_report.EVAL_REPORT,
]))
NIGHTLY: tuple[StageSpec, ...] = (nightly_eval.NIGHTLY_EVAL,)
ALL: tuple[StageSpec, ...] = SPECS + NIGHTLY
BY_NAME: Mapping[str, StageSpec] = MappingProxyType({s.name: s for s in ALL})
