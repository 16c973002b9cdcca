"""What an evaluation reads of the profile (`EvalSettings`): every entry point of the eval
(`burnqed_core.eval.plan`) receives this, the ``eval_report`` and ``nightly_eval`` stages as their settings."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import DataConfig, EvalConfig, LeanConfig, PathsConfig, PolicyConfig, SearchConfig
from burnqed_core.projection import Projection, StageSettings


class EvalData(Projection):
    """The benchmark (each set in turn while it is searched) and the corpus it is checked against."""

    SOURCE = DataConfig
    benchmark: str
    corpus: str
    exclude_families: list[str]
    trace_repo: str | None


class EvalSettings(StageSettings):
    """What an evaluation reads. The whole ``search`` section, though the eval replaces ``max_nodes`` and
    ``timeout_s`` (``eval.budgets``, ``eval.timeout_s``) and never reads ``noisy_pass``: baseline (c)'s cache
    key (`burnqed_core.eval.baselines.structural`) hashes the search settings as a whole. ``paths`` (where baselines are
    cached), ``name``, ``seed`` and ``source`` (the run records) are the machine's."""

    eval: EvalConfig
    search: SearchConfig
    policy: PolicyConfig
    lean: LeanConfig
    data: EvalData
    paths: PathsConfig
    name: str
    seed: int
    source: Path | None
