"""Load a theorem set from any of the forms a user can name.

``load_theorems(spec)`` accepts:

* ``bundled:<name>``: ``burnqed_core/data/sets/<name>.jsonl`` or the
  directory ``burnqed_core/data/sets/<name>/`` of ``.lean`` files (shipped
  with the package: the tiny profile's corpus and benchmark, the hand-written
  benchmark); ``bundled:dev`` and ``bundled:test`` are the records of
  ``benchmark.jsonl`` whose split is ``dev`` / ``test`` (`SPLIT_VIEWS`);
* ``core:pool``, ``core:dev``, ``core:test``: Lean's own library as a
  theorem pool and its held-out splits (`burnqed_core.data.theorems.core_pool`);
* a ``.jsonl`` of `Theorem` records, a miniF2F JSONL (rows with
  ``formal_statement``) or a core pool file (rows with a ``module`` and no
  statement, `burnqed_core.data.theorems.core_pool.PoolTheorem`), told apart by the
  first row;
* a ``.parquet`` of `Theorem` records;
* a ``.lean`` file (every theorem in it, see `parse_lean_file`);
* a directory of ``.lean`` files (one problem per file, miniF2F style);
* a LeanDojo Benchmark 4 split file (``train.json`` ...) or split directory
  (all of its ``train``/``val``/``test`` files, with those splits).

Theorems are deduplicated by name: a repeat is dropped, two different
statements (or preambles) under one name are a `DataError` naming both sources.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core import reads
from burnqed_core.config import Profile
from burnqed_core.data.theorems.external import (
    _iter_jsonl_objects,
    is_minif2f_row,
    leandojo_split_files,
    read_lean_dir,
    read_leandojo,
    read_minif2f_jsonl,
)
from burnqed_core.data.theorems.lean_file import parse_lean_file
from burnqed_core.errors import DataError
from burnqed_core.lean.trust import digest
from burnqed_core.record_io import read_jsonl, read_parquet
from burnqed_core.records import Split, Theorem

log = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "sets"
BUNDLED_PREFIX = "bundled:"
AUTOMATION_FILE = "automation.json"
# bundled sets that are the records of one split of a bundled file: name -> (file stem, split)
SPLIT_VIEWS: Mapping[str, tuple[str, Split]] = MappingProxyType({"dev": ("benchmark", "dev"),
                                                                 "test": ("benchmark", "test")})


def bundled_names() -> list[str]:
    """Names of the theorem sets shipped with burnqed."""
    files = [p.stem for p in BUNDLED_DIR.glob("*.jsonl")]
    return sorted(files + [p.name for p in BUNDLED_DIR.iterdir() if p.is_dir() and any(p.glob("*.lean"))]
                  + [v for v, (stem, _) in SPLIT_VIEWS.items() if stem in files])


def _split_view(spec: str | Path) -> Split | None:
    """The split a ``bundled:<view>`` spec keeps (`SPLIT_VIEWS`), else None."""
    s = str(spec)
    view = SPLIT_VIEWS.get(s[len(BUNDLED_PREFIX):]) if s.startswith(BUNDLED_PREFIX) else None
    return view[1] if view else None


def resolve_spec(spec: str | Path) -> Path:
    """The file or directory a theorem-set spec names (checked to exist); for ``bundled:dev`` /
    ``bundled:test`` the file they are a split of."""
    s = str(spec)
    from burnqed_core.data.theorems.core_pool import core_path

    if (core := core_path(s)) is not None:
        if not core.exists():
            raise DataError(f"{spec}: {core} is missing (build it: burnqed data core-pool --out {core.parent})")
        return core
    if s.startswith(BUNDLED_PREFIX):
        name = s[len(BUNDLED_PREFIX):]
        path = BUNDLED_DIR / f"{SPLIT_VIEWS[name][0] if name in SPLIT_VIEWS else name}.jsonl"
        if not path.exists() and name and "/" not in name and (BUNDLED_DIR / name).is_dir():
            path = BUNDLED_DIR / name
        if not path.exists():
            raise DataError(f"no bundled theorem set {name!r}; available: {', '.join(bundled_names()) or 'none'}")
        return path
    path = Path(spec)
    if not path.exists():
        raise DataError(f"{path}: no such file or directory (a theorem set is 'bundled:<name>', "
                        ".jsonl, .parquet, .lean, a directory of .lean files or a LeanDojo split)")
    return path


def _read_any(path: Path) -> list[Theorem]:
    reads.record(path)  # a stage that loads a theorem set depends on its contents (`burnqed_core.reads`)
    if path.is_dir():
        if any((path / f"{s}.json").exists() for s in ("train", "val", "test")):
            out: list[Theorem] = []
            for f in leandojo_split_files(path):
                out.extend(read_leandojo(f, progress=True).theorems)
            return out
        if not any(path.rglob("*.lean")):
            leandojo_split_files(path)  # raises with a hint when it holds LeanDojo split dirs
        return read_lean_dir(path)
    suffix = path.suffix.lower()
    if suffix == ".lean":
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{path}: not UTF-8 text") from None
        return parse_lean_file(text, source=str(path)).theorems
    if suffix == ".jsonl":
        first = next(_iter_jsonl_objects(path), None)
        if first is not None and is_minif2f_row(first[1]):
            return read_minif2f_jsonl(path)
        from burnqed_core.data.theorems.core_pool import is_pool_row, read_pool_jsonl

        if first is not None and is_pool_row(first[1]):
            return read_pool_jsonl(path)
        return read_jsonl(path, Theorem)
    if suffix == ".parquet":
        return read_parquet(path, Theorem)
    if suffix == ".json":
        return read_leandojo(path, progress=True).theorems
    raise DataError(f"{path}: unknown theorem file type {suffix!r} (use .jsonl, .parquet, .lean or a LeanDojo .json)")


def dedup_theorems(theorems: Iterable[Theorem], where: str = "") -> list[Theorem]:
    """Theorems in order, repeats of a name dropped (the first kept: another
    known proof of the same statement is no conflict); two theorems with one
    name but a different statement or preamble are an error."""
    seen: dict[str, Theorem] = {}
    out: list[Theorem] = []
    for t in theorems:
        prev = seen.get(t.name)
        if prev is None:
            seen[t.name] = t
            out.append(t)
            continue
        if (prev.statement, prev.preamble) != (t.statement, t.preamble):
            a, b = prev.source or "?", t.source or "?"
            raise DataError(f"{where + ': ' if where else ''}two different theorems named {t.name!r} "
                            f"(from {a} and {b})")
    return out


def load_theorems(spec: str | Path) -> list[Theorem]:
    """All theorems of a theorem set (see the module doc for the forms of ``spec``)."""
    path = resolve_spec(spec)
    thms = _read_any(path)
    if (split := _split_view(spec)) is not None:
        thms = [t for t in thms if t.split == split]
    if not thms:
        raise DataError(f"{spec}: no theorems found")
    out = dedup_theorems(thms, where=str(spec))
    if len(out) < len(thms):
        log.info("%s: dropped %d repeated theorems", spec, len(thms) - len(out))
    return out


def bundled_lean_preamble_digests() -> list[str]:
    """The digests of the preambles the file parser cuts from the package's bundled ``.lean`` sets: what
    `burnqed_core.lean.trust.PREAMBLES_FILE` holds (a test keeps them equal; write them with
    ``python -c "from burnqed_core.data.theorems.load import write_lean_preamble_digests as w; w()"``)."""
    found = {digest(t.preamble) for path in sorted(BUNDLED_DIR.rglob("*.lean")) for t in load_theorems(path)
             if t.preamble.strip()}
    return sorted(found)


def write_lean_preamble_digests() -> Path:
    from burnqed_core.lean.trust import PREAMBLES_FILE

    PREAMBLES_FILE.write_text(json.dumps(bundled_lean_preamble_digests(), indent=1) + "\n", encoding="utf-8")
    return PREAMBLES_FILE


def load_many(specs: Sequence[str | Path]) -> list[Theorem]:
    """Several theorem sets as one list (deduplicated across sets)."""
    return dedup_theorems((t for s in specs for t in load_theorems(s)), where=", ".join(map(str, specs)))


def set_dir(spec: str | Path) -> Path:
    """The directory of a theorem set (where its ``automation.json`` and
    shipped eval baselines live)."""
    path = resolve_spec(spec)
    return path if path.is_dir() else path.parent


def automation_map(spec: str | Path) -> dict[str, str | None] | None:
    """The ``automation.json`` beside a theorem set (name -> the single
    automation tactic that closes it, or null for a hard theorem), if any."""
    candidate = reads.record(set_dir(spec) / AUTOMATION_FILE)  # recorded when missing too
    if not candidate.exists():
        return None
    try:
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(f"{candidate}: not valid JSON ({e.msg})") from None
    if not isinstance(data, dict) or not all(v is None or isinstance(v, str) for v in data.values()):
        raise DataError(f"{candidate}: expected a JSON object mapping theorem names to a tactic or null")
    return data


class TheoremSetStats(BaseModel):
    """Counts of a theorem set, as `burnqed data stats` shows them."""

    model_config = ConfigDict(frozen=True)
    theorems: int
    by_split: dict[str, int]
    by_family: dict[str, int]
    proof_length_histogram: dict[int, int] = Field(description="known proof length -> theorems (0: no known proof)")
    hard: int | None = Field(None, description="no single automation tactic closes it (None: no automation map)")
    easy: int | None = None
    unmeasured: int | None = Field(None, description="not in the automation map")
    closed_by: dict[str, int] = Field(default_factory=dict, description="automation tactic -> theorems it closes")
    hard_by_family: dict[str, int] = Field(default_factory=dict)


def _count(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def theorem_set_stats(theorems: Sequence[Theorem], automation: Mapping[str, str | None] | None = None
                      ) -> TheoremSetStats:
    lengths = Counter(len(t.proof) for t in theorems)
    stats: dict[str, object] = {
        "theorems": len(theorems),
        "by_split": _count(t.split for t in theorems),
        "by_family": _count(t.family or "-" for t in theorems),
        "proof_length_histogram": dict(sorted(lengths.items())),
    }
    if automation is not None:
        measured = [t for t in theorems if t.name in automation]
        hard = [t for t in measured if automation[t.name] is None]
        stats |= {
            "hard": len(hard),
            "easy": len(measured) - len(hard),
            "unmeasured": len(theorems) - len(measured),
            "closed_by": _count(automation[t.name] or "" for t in measured if automation[t.name]),
            "hard_by_family": _count(t.family or "-" for t in hard),
        }
    return TheoremSetStats.model_validate(stats)


def corpus_theorems(profile: Profile) -> list[Theorem]:
    """The theorems of ``data.corpus`` less the families of ``data.exclude_families`` (a family the corpus
    lacks is logged, not an error: the profile may be used with another corpus): the corpus the loop traces,
    trains on and searches."""
    d = profile.data
    theorems = load_theorems(d.corpus)
    if not d.exclude_families:
        return theorems
    excluded = set(d.exclude_families)
    missing = excluded - {t.family for t in theorems}
    if missing:
        log.warning("data.exclude_families: %s not in %s", sorted(missing), d.corpus)
    return [t for t in theorems if t.family not in excluded]
