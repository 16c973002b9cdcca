"""Where each stage of each iteration writes, under ``paths.work_dir``.

Every stage directory gets a ``_done.json`` (the stage's result record, with
the fingerprint of its inputs and settings) as its last write, so a re-run
after a kill redoes only unfinished stages, and a re-run with changed inputs
redoes the stages they feed (`burnqed_core.loop.markers`). The directories
of iteration N are also how N+1 reads N's outputs: Dagster cannot express
"the previous partition" of a dynamic partition set (DESIGN.md, "Dagster")."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

DONE = "_done.json"
STARTED = "_started.json"


class IterationLayout(BaseModel):
    model_config = ConfigDict(frozen=True)
    root: Path
    iteration: int

    @property
    def dir(self) -> Path:
        return self.root / f"iter_{self.iteration}"

    @property
    def pairs(self) -> Path:
        return self.dir / "tactic_pairs"

    @property
    def adapter(self) -> Path:
        return self.dir / "lora_adapter"

    @property
    def merged(self) -> Path:
        return self.dir / "merged_model"

    @property
    def embeddings(self) -> Path:
        return self.dir / "embeddings"

    @property
    def ebm(self) -> Path:
        return self.dir / "ebm"

    @property
    def trajectories(self) -> Path:
        return self.dir / "trajectories"

    @property
    def eval(self) -> Path:
        return self.dir / "eval"


class BaseLayout(BaseModel):
    """Outputs shared by all iterations: traced base corpus, base model."""

    model_config = ConfigDict(frozen=True)
    root: Path

    @property
    def dir(self) -> Path:
        return self.root / "base"

    @property
    def traced(self) -> Path:
        return self.dir / "traced"

    @property
    def model(self) -> Path:
        return self.dir / "model"

    @property
    def baselines(self) -> Path:
        return self.dir / "automation"

    def iteration(self, n: int) -> IterationLayout:
        return IterationLayout(root=self.root, iteration=n)
