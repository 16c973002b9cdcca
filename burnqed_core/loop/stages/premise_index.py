"""``premise_index``: what a proof may cite, for the search's premise steps (`burnqed_core.premises`).

With ``premises.library`` the library's premises (Init and Std theorems with their modules) and the module
import graph are read by Lean once per Lean and cached (`burnqed_core.premises.library.cached_library`), then
written here; without it the index holds no library premise and retrieval offers a theorem's own file's
definitions and lemmas only. The index itself (BM25) is built from this folder by each search in a second or
two (`burnqed_core.premises.library.load_index`); its build time and size are reported here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from burnqed_core.config import LeanConfig, PathsConfig, PremisesConfig
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.spec import StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult


class Paths(Projection):
    SOURCE = PathsConfig
    home: Path


class Premises(Projection):
    """Whether the library is read (the re-ranker's settings are the premise_reranker stage's)."""

    SOURCE = PremisesConfig
    library: bool


class Settings(StageSettings):
    """Whether the library is read, the Lean that reads it (its identity keys the cache), and where the cache
    lives (the machine's)."""

    premises: Premises
    lean: LeanConfig
    paths: Paths


async def premise_index(settings: Settings, env: Callable[[], Awaitable[ProofEnv]], out_dir: Path) -> StageResult:
    """Write the library's premises and import graph (empty without ``premises.library``) to ``out_dir`` and
    report the index built from them."""
    import time

    from tqdm import tqdm

    from burnqed_core.data.theorems.core_pool import PoolRules
    from burnqed_core.lean.install import lean_identity
    from burnqed_core.premises.index import PremiseIndex
    from burnqed_core.premises.library import LIBRARY_RULES, LibraryBuild, cached_library, write_library

    identity = lean_identity()
    fresh = False
    if settings.premises.library:
        with tqdm(desc="premise library: modules", unit="module", disable=None) as bar:
            premises, graph, build, fresh = await cached_library(settings.paths.home / "premises", env,  # type: ignore[arg-type]
                                                                 identity, LIBRARY_RULES, progress=bar)
    else:
        premises, graph = [], {}
        build = LibraryBuild(key="none", lean=identity, rules=PoolRules(roots=[]).model_dump(mode="json"),
                             premises=0, modules=0, modules_read=0)
    write_library(out_dir, premises, graph, build)
    t = time.perf_counter()
    index = PremiseIndex(premises, graph)
    build_s = time.perf_counter() - t
    size = sum(f.stat().st_size for f in out_dir.iterdir() if f.is_file())
    what = (f"{len(premises):,} library premises of {build.modules_read} modules ({build.modules} in the import "
            f"graph)" if settings.premises.library else "no library premises (premises.library off): a theorem's "
            "own file's definitions and lemmas only")
    read = f"read by Lean in {build.read_s:.0f} s" if fresh else "read from the cache" if premises else ""
    return StageResult(stage="premise_index", path=str(out_dir),
                       summary=f"{what}{'; ' + read if read else ''}; BM25 index built in {build_s:.1f} s, "
                               f"{size / 1e6:.1f} MB on disk",
                       metrics={"premises": len(index), "modules": build.modules, "modules_read": build.modules_read,
                                "modules_unread": len(build.modules_unread), "read_now": fresh,
                                "read_s": build.read_s if fresh else 0.0, "index_build_s": build_s,
                                "bytes": size, "library": settings.premises.library})


async def _run(ctx: StageContext[Settings]) -> StageResult:
    return await premise_index(ctx.settings, ctx.env, ctx.out)


PREMISE_INDEX = StageSpec(
    name="premise_index", partitioned=False, settings=Settings, run=_run,
    doc="What a proof may cite: the library's premises and module import graph (read by Lean once per Lean, "
        "cached) for retrieval under the premise rule; the search's premise steps draw from it.",
)
