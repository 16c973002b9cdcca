"""Where each stage writes, under ``paths.work_dir``: a folder named by the stage.

The shared base stages write ``base/<stage>/``, the stages of iteration N ``iter_N/<stage>/`` (a dated stage,
the nightly eval, ``iter_N/<stage>/<YYYY-MM-DD>/``). Every stage folder gets a ``_done.json`` (the stage's
result record, with the fingerprint of its inputs, settings and code and the digests of the files it read)
as its last write, so a re-run after a kill redoes only unfinished stages, and a re-run with a change redoes
the stages it touches (`burnqed_core.loop.markers`). The folders of iteration N are also how N+1 reads N's
outputs: Dagster cannot express "the previous partition" of a dynamic partition set (docs/operations.md)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

DONE = "_done.json"
STARTED = "_started.json"


class IterationLayout(BaseModel):
    """The folders of one iteration."""

    model_config = ConfigDict(frozen=True)
    root: Path
    iteration: int

    @property
    def dir(self) -> Path:
        return self.root / f"iter_{self.iteration}"

    def stage(self, name: str) -> Path:
        """The folder of stage ``name`` of this iteration."""
        return self.dir / name


class BaseLayout(BaseModel):
    """The run directory: the shared base's folders and each iteration's."""

    model_config = ConfigDict(frozen=True)
    root: Path

    @property
    def dir(self) -> Path:
        return self.root / "base"

    def stage(self, name: str) -> Path:
        """The folder of the shared (not partitioned) stage ``name``."""
        return self.dir / name

    def iteration(self, n: int) -> IterationLayout:
        return IterationLayout(root=self.root, iteration=n)
