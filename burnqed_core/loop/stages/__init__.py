"""Every stage of the loop, declared once (`burnqed_core.loop.spec.StageSpec`), one module per stage, in the
order they run.

To add a setting: add the field to `burnqed_core.config` and read it in the stage; if the stage's settings
below do not hold it yet, the stage fails in its tests with `UndeclaredSetting` until its path is added
to the stage's spec, and from then on changing it re-runs exactly the stages that hold it. To add a stage:
write its module here (its run function and its spec) and add the spec to `SPECS`; the Dagster asset, its
fingerprint, inputs checks, metadata and its place in ``burnqed loop`` follow.
"""

from __future__ import annotations

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
    tactic_pairs,
    trajectories,
)

SPECS: tuple[StageSpec, ...] = tuple(topological([
    base_tactic_pairs.BASE_TACTIC_PAIRS, base_model.BASE_MODEL, automation_baselines.AUTOMATION_BASELINES,
    tactic_pairs.TACTIC_PAIRS, lora_adapter.LORA_ADAPTER, merged_model.MERGED_MODEL, embeddings.EMBEDDINGS,
    ebm.EBM, trajectories.TRAJECTORIES, eval_report.EVAL_REPORT,
]))
BY_NAME: dict[str, StageSpec] = {s.name: s for s in SPECS}
