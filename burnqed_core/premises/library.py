"""The library's premises, read by the embedded Lean, and their cache.

What a library proof may cite is what the worker's environment holds: the theorems of the ``Init`` and ``Std``
modules it imports (the same read as the theorem pool's, `burnqed_core.data.theorems.core_pool.scan_library`, with
statements up to the header's own size limit), each with the module that declares it, and the import graph of
every module. Internal, generated and tactic-internal names are left out by the pool's own rules (a proof that
names one is legal, but no person writes it). Nothing is parsed from ``.olean`` files in Python and nothing is
shipped: the read runs once per Lean and these rules, and is cached as Parquet (premises) and JSON (the graph)
under ``<home>/premises/<key>/``, keyed by the Lean's identity (`burnqed_core.lean.install.lean_identity`), the
rules and the format version, so a new Lean or new rules read again and never reuse another's index.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.theorems.core_pool import PoolRules, generated_name, scan_library
from burnqed_core.errors import DataError
from burnqed_core.lean.library import ModuleScan, SourceChecker
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.records import Premise
from burnqed_core.record_io import atomic_write_bytes, atomic_write_text

log = logging.getLogger(__name__)

FORMAT = "premises-v1"
PREMISES_FILE = "premises.parquet"
GRAPH_FILE = "modules.json"
BUILD_FILE = "build.json"
# The header reads statements up to 400 nodes (`burnqed_core.lean.library`): the premises' limit, not the pool's.
LIBRARY_RULES = PoolRules(max_size=400)

_SCHEMA = pa.schema([("name", pa.string()), ("type", pa.string()), ("module", pa.string())])


class LibraryBuild(BaseModel):
    """What a library read produced: counts, its key and how long it took."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str
    lean: str
    rules: dict[str, Any]
    premises: int = Field(ge=0)
    modules: int = Field(ge=0, description="modules in the import graph")
    modules_read: int = Field(ge=0, description="modules whose theorems were read")
    modules_unread: list[str] = Field(default_factory=list, description="modules Lean gave no answer for")
    left_out: dict[str, int] = Field(default_factory=dict, description="reason -> theorems left out")
    read_s: float = Field(0.0, ge=0, description="seconds Lean took to read the library")


def library_key(lean_identity: str, rules: PoolRules = LIBRARY_RULES) -> str:
    payload = json.dumps({"format": FORMAT, "lean": lean_identity, "rules": rules.model_dump(mode="json")},
                         sort_keys=True)
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=12).hexdigest()


def _left_out(name: str, module: str, rules: PoolRules) -> str | None:
    def has(n: str, prefixes: Sequence[str]) -> bool:
        return any(n == p or n.startswith(p + ".") for p in prefixes)

    if has(name, rules.exclude_names) or "Internal" in name.split(".") or "Internal" in module.split("."):
        return "internal namespace"
    if any(generated_name(part) or part.startswith("congr_eq_") for part in name.split(".")):
        return "generated"
    return None


def premises_of(scans: Sequence[ModuleScan], rules: PoolRules = LIBRARY_RULES) -> tuple[list[Premise], dict[str, int]]:
    """The premises of scanned modules (the rules' left-out names dropped), and the count per reason."""
    out: list[Premise] = []
    left: dict[str, int] = {}
    seen: set[str] = set()
    for scan in scans:
        for c in scan.theorems:
            why = _left_out(c.name, c.module, rules) or ("named twice" if c.name in seen else None)
            seen.add(c.name)
            if why is not None:
                left[why] = left.get(why, 0) + 1
                continue
            out.append(Premise(name=c.name, type=c.type, module=c.module))
    return out, left


def write_library(directory: Path, premises: Sequence[Premise], graph: Mapping[str, Sequence[str]],
                  build: LibraryBuild) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([{"name": p.name, "type": p.type, "module": p.module} for p in premises],
                                 schema=_SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    atomic_write_bytes(directory / PREMISES_FILE, sink.getvalue().to_pybytes())
    atomic_write_text(directory / GRAPH_FILE, json.dumps({k: list(v) for k, v in sorted(graph.items())}) + "\n")
    atomic_write_text(directory / BUILD_FILE, build.model_dump_json(indent=1) + "\n")  # last: marks it complete
    return directory


def read_library(directory: Path) -> tuple[list[Premise], dict[str, list[str]], LibraryBuild]:
    """The premises, the import graph and the build record written by `write_library` (a `DataError` when the
    folder is not a complete one)."""
    try:
        build = LibraryBuild.model_validate_json((directory / BUILD_FILE).read_text(encoding="utf-8"))
        graph = json.loads((directory / GRAPH_FILE).read_text(encoding="utf-8"))
        rows = pq.read_table(directory / PREMISES_FILE).to_pylist()
    except FileNotFoundError as e:
        raise DataError(f"{directory}: not a complete premise library ({Path(e.filename or '').name} missing)") \
            from None
    except ValueError as e:
        raise DataError(f"{directory}: not a premise library ({str(e).splitlines()[0]})") from None
    premises = [Premise(name=r["name"], type=r["type"], module=r["module"]) for r in rows]
    if len(premises) != build.premises:
        raise DataError(f"{directory}: {len(premises)} premises, the build record says {build.premises}")
    return premises, graph, build


async def read_library_with_lean(lean: SourceChecker, lean_identity: str, rules: PoolRules = LIBRARY_RULES,
                                 progress: Any = None) -> tuple[list[Premise], dict[str, list[str]], LibraryBuild]:
    """Read the library's premises and import graph with Lean (minutes on 2 cores)."""
    t = time.perf_counter()
    scans, graph = await scan_library(lean, rules, progress=progress)
    premises, left = premises_of(scans, rules)
    unread = [s.module for s in scans if s.error]
    if unread:
        log.warning("premise library: %d modules gave no answer: %s", len(unread), ", ".join(unread[:10]))
    build = LibraryBuild(key=library_key(lean_identity, rules), lean=lean_identity,
                         rules=rules.model_dump(mode="json"), premises=len(premises), modules=len(graph),
                         modules_read=len(scans) - len(unread), modules_unread=unread, left_out=left,
                         read_s=time.perf_counter() - t)
    return premises, graph, build


async def cached_library(cache_root: Path, lean: Callable[[], Awaitable[SourceChecker]] | None, lean_identity: str,
                         rules: PoolRules = LIBRARY_RULES, progress: Any = None
                         ) -> tuple[list[Premise], dict[str, list[str]], LibraryBuild, bool]:
    """The library's premises from ``cache_root/<key>`` when a complete read is there, else read with the Lean
    that ``lean()`` gives (called only then) and cached; the last value says whether it was read now."""
    directory = cache_root / library_key(lean_identity, rules)
    if (directory / BUILD_FILE).exists():
        premises, graph, build = read_library(directory)
        return premises, graph, build, False
    if lean is None:
        raise DataError(f"no premise library cached in {directory} and no Lean to read one")
    premises, graph, build = await read_library_with_lean(await lean(), lean_identity, rules, progress)
    if not build.modules_unread:  # an incomplete read is used, never cached
        write_library(directory, premises, graph, build)
    return premises, graph, build, True


def load_index(directory: Path) -> PremiseIndex:
    """The `PremiseIndex` of a library folder (the ``premise_index`` stage's output)."""
    premises, graph, _ = read_library(directory)
    return PremiseIndex(premises, graph)
