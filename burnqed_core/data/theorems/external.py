"""Loaders for the external data formats users bring.

**LeanDojo Benchmark 4** (``random/`` or ``novel_premises/``, each with
``train.json``, ``val.json``, ``test.json``): a JSON list of traced theorems
``{url, commit, file_path, full_name, start: [line, col], end, traced_tactics:
[{tactic, annotated_tactic, state_before, state_after}]}`` where
``state_after`` is ``"no goals"`` when the tactic closed the proof.

* Each tactic becomes a `TacticPair` with ``depth`` = its index in
  ``traced_tactics`` and ``state_after`` ``""`` for ``"no goals"`` (the
  convention of `TrajectoryRecord.state`).
* Each entry becomes a `Theorem` with what the format has: ``name`` =
  ``full_name``, ``source`` = ``file_path:line``, ``family`` = the file's
  module without its last component (``Mathlib.Algebra.Group``), ``proof`` =
  the traced tactics in order (LeanDojo also traces tactics nested in others,
  so this measures proof length; it is not always a replayable script).
  The format has **no statement text**: ``statement`` is ``""`` and
  ``preamble`` is ``""``; such a theorem is started from its name (Pantograph
  ``goal.start`` with ``copyFrom``) in an environment that imports its module.

**miniF2F in Lean 4**, either one ``.lean`` file per problem
(yangky11/miniF2F-lean4: ``MiniF2F/Test/*.lean``, ``MiniF2F/Valid/*.lean``,
or one file of many problems), or the JSONL of DeepSeek-Prover / Goedel-Prover
``{name, split, informal_prefix?, formal_statement, header?, goal?,
formal_proof?}``. A JSONL row becomes the Lean text ``header +
informal_prefix + formal_statement + (formal_proof or sorry)`` parsed by
`parse_lean_file`, so the ``header`` is the preamble (rows sharing a header
share one preamble) and the split and name come from the row.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from tqdm import tqdm

from burnqed_core.data.theorems.lean_file import parse_lean_file
from burnqed_core.errors import DataError
from burnqed_core.records import Split, TacticPair, Theorem

log = logging.getLogger(__name__)

NO_GOALS = "no goals"
LEANDOJO_SPLITS: Mapping[str, Split] = MappingProxyType({"train": "train", "val": "valid", "valid": "valid",
                                                         "test": "test"})


class _DojoTactic(BaseModel):
    model_config = ConfigDict(extra="ignore")
    tactic: str
    annotated_tactic: Any = None
    state_before: str
    state_after: str


class _DojoTheorem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    url: str = ""
    commit: str = ""
    file_path: str
    full_name: str
    start: list[int]
    end: list[int] | None = None
    traced_tactics: list[_DojoTactic]


class LeanDojoData(BaseModel):
    """What one LeanDojo split file holds, in our records."""

    model_config = ConfigDict(frozen=True)
    theorems: list[Theorem]
    pairs: list[TacticPair]


def _split_of(path: Path, default: Split) -> Split:
    return LEANDOJO_SPLITS.get(path.stem.lower(), default)


def _module_family(file_path: str) -> str:
    parts = Path(file_path).with_suffix("").parts
    return ".".join(parts[:-1])


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    return f"{loc}: {err['msg']}" if loc else err["msg"]


def _read_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None


def is_leandojo_json(data: Any) -> bool:
    return isinstance(data, list) and (not data or (isinstance(data[0], dict) and "traced_tactics" in data[0]))


def read_leandojo(path: str | Path, split: Split | None = None, progress: bool = False) -> LeanDojoData:
    """Theorems and tactic pairs of one LeanDojo Benchmark 4 split file.

    ``split`` defaults to the file name (``val.json`` -> ``valid``; any other
    name -> ``train``)."""
    path = Path(path)
    data = _read_json(path)
    if not is_leandojo_json(data):
        raise DataError(f"{path}: not a LeanDojo Benchmark 4 file (expected a JSON list of traced theorems)")
    split = split or _split_of(path, "train")
    theorems: list[Theorem] = []
    pairs: list[TacticPair] = []
    for i, raw in enumerate(tqdm(data, desc=path.name, unit="thm", disable=not progress)):
        try:
            entry = _DojoTheorem.model_validate(raw)
        except ValidationError as e:
            raise DataError(f"{path}: entry {i} is not a LeanDojo theorem: {_first_error(e)}") from None
        line = entry.start[0] if entry.start else 0
        src = f"{entry.file_path}:{line}"
        tactics = [t.tactic for t in entry.traced_tactics]
        theorems.append(Theorem(
            name=entry.full_name, statement="", preamble="", split=split, source=src,
            family=_module_family(entry.file_path), proof=tactics,
        ))
        for depth, t in enumerate(entry.traced_tactics):
            after = "" if t.state_after.strip() == NO_GOALS else t.state_after
            pairs.append(TacticPair(
                theorem=entry.full_name, state_before=t.state_before, tactic=t.tactic,
                state_after=after, depth=depth, source=f"leandojo:{src}",
            ))
    log.info("%s: %d theorems, %d tactic pairs", path, len(theorems), len(pairs))
    return LeanDojoData(theorems=theorems, pairs=pairs)


def leandojo_split_files(directory: str | Path) -> list[Path]:
    """The split files of a LeanDojo split directory, in train/val/test order."""
    directory = Path(directory)
    files = [directory / f"{s}.json" for s in ("train", "val", "test") if (directory / f"{s}.json").exists()]
    if not files:
        variants = [d.name for d in directory.iterdir() if d.is_dir() and (d / "train.json").exists()]
        hint = f"; pick one of its split directories: {', '.join(sorted(variants))}" if variants else ""
        raise DataError(f"{directory}: no train.json/val.json/test.json{hint}")
    return files


# ---------------------------------------------------------------- miniF2F

_MINIF2F_SPLITS: Mapping[str, Split] = MappingProxyType({"test": "test", "valid": "valid", "val": "valid",
                                                         "train": "train"})


class _MiniF2FRow(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    split: str = "test"
    informal_prefix: str = ""
    formal_statement: str
    header: str = ""
    goal: str = ""
    formal_proof: str | None = None


def minif2f_family(name: str) -> str:
    """Competition/source family of a miniF2F problem name: ``mathd_algebra_478``
    -> ``mathd_algebra``; ``amc12a_2019_p21`` -> ``amc12a``; ``imo_1959_p1`` -> ``imo``."""
    parts = name.split("_")
    if parts[0] == "mathd" and len(parts) > 1:
        return "_".join(parts[:2])
    return parts[0]


def _minif2f_split(value: str, where: str) -> Split:
    split = _MINIF2F_SPLITS.get(value.lower())
    if split is None:
        raise DataError(f"{where}: unknown split {value!r} (expected test, valid or train)")
    return split


def _iter_jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        f = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, obj


def is_minif2f_row(obj: dict[str, Any]) -> bool:
    return "formal_statement" in obj and "name" in obj


def _minif2f_theorem(row: _MiniF2FRow, where: str, source: str) -> Theorem:
    stmt = row.formal_statement.rstrip()
    if row.formal_proof is not None and row.formal_proof.strip():
        proof = row.formal_proof if row.formal_proof.startswith("\n") else "\n" + row.formal_proof
        if not re.search(r":=\s*by$", stmt):
            stmt += " by" if stmt.endswith(":=") else ""
        body = stmt + proof
    else:
        body = stmt + ("" if stmt.endswith(("by", ":=")) else " :=") + " sorry"
    header = row.header if row.header.endswith("\n") or not row.header else row.header + "\n"
    text = header + row.informal_prefix + body + "\n"
    try:
        parsed = parse_lean_file(text, source=source, split=_minif2f_split(row.split, where),
                                 family=minif2f_family(row.name))
    except DataError as e:
        raise DataError(f"{where}: {e}") from None
    if len(parsed.theorems) != 1:
        raise DataError(f"{where}: formal_statement holds {len(parsed.theorems)} theorems, expected 1")
    thm = parsed.theorems[0]
    return thm.model_copy(update={"name": row.name, "preamble": row.header})


def read_minif2f_jsonl(path: str | Path) -> list[Theorem]:
    """miniF2F problems from a DeepSeek-Prover / Goedel-style JSONL."""
    path = Path(path)
    out: list[Theorem] = []
    for lineno, obj in _iter_jsonl_objects(path):
        where = f"{path}:{lineno}"
        try:
            row = _MiniF2FRow.model_validate(obj)
        except ValidationError as e:
            raise DataError(f"{where}: not a miniF2F row: {_first_error(e)}") from None
        out.append(_minif2f_theorem(row, where, f"{path.name}:{lineno}"))
    return out


def _dir_split(rel: Path, default: Split) -> Split:
    for part in reversed(rel.parts[:-1]):
        split = _MINIF2F_SPLITS.get(part.lower())
        if split is not None:
            return split
    return default


def read_lean_dir(directory: str | Path, default_split: Split = "test", family: str = "") -> list[Theorem]:
    """Theorems of every ``.lean`` file under a directory (recursively, sorted
    by path), e.g. miniF2F with one problem per file. The split comes from a
    ``Test``/``Valid``/``Train`` folder on the path (the directory itself
    included), else ``default_split``;
    the family from ``family`` or the miniF2F name convention."""
    directory = Path(directory)
    files = sorted(p for p in directory.rglob("*.lean") if p.is_file() and ".lake" not in p.parts)
    if not files:
        raise DataError(f"{directory}: no .lean files")
    default_split = _MINIF2F_SPLITS.get(directory.resolve().name.lower(), default_split)
    out: list[Theorem] = []
    for p in files:
        rel = p.relative_to(directory)
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{p}: not UTF-8 text") from None
        parsed = parse_lean_file(text, source=str(rel), split=_dir_split(rel, default_split))
        for t in parsed.theorems:
            out.append(t if t.family else t.model_copy(update={"family": family or minif2f_family(t.name)}))
    return out
