"""Embeddings of proof states: encoded by the policy, cached in Parquet.

A cache is a directory:

* ``_cache.json``: `CacheMeta`: the encoder's model fingerprint (sha256 of its
  config, tokenizer and weight files), the pooling, the text format (the
  prompt version: a state is encoded as its policy prompt, so that the EBM
  sees what the policy sees),
  and the vector width;
* ``part-00000.parquet`` ...: rows ``(key, state, vector)`` where ``key`` is the
  sha256 of the state text. A part is written to a hidden temporary file and
  renamed: it exists whole or not at all. One part per ``checkpoint_every``
  newly encoded states, so a killed run loses at most that many and a rerun
  encodes only the states no part holds yet.

Rows also carry ``fingerprint`` and ``pooling``; opening a cache made by
another model or another pooling is an `EmbeddingMismatchError` (never a
silent mix: an energy head trained on one pooling scores garbage on another).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from burnqed_core.data.pairs.prompt import PLAIN, PROMPT_VERSION, PromptFormat, format_of
from burnqed_core.errors import BurnqedError
from burnqed_core.record_io import atomic_target, atomic_write_text

log = logging.getLogger(__name__)

META_FILE = "_cache.json"
PART_PREFIX = "part-"
MODEL_FILE_SUFFIXES = (".safetensors", ".bin", ".json", ".model", ".txt")


class EmbeddingMismatchError(BurnqedError):
    """Embeddings of another model, pooling or text format than asked for."""


def state_key(state: str) -> str:
    """The cache key of a proof state: sha256 of its text."""
    return hashlib.sha256(state.encode("utf-8")).hexdigest()


def encoder_text(state: str, fmt: PromptFormat = PLAIN) -> str:
    """What is encoded for a state (or a root goal): its policy prompt, in the model's `PromptFormat`."""
    return fmt.prompt_text(state)


def model_fingerprint(path: str | Path) -> str:
    """sha256 over the names and contents of a model directory's config,
    tokenizer and weight files (fine-tuning keeps sizes: only contents tell two
    iterations apart). Read afresh at every call: nothing is kept between calls."""
    p = Path(path)
    if not p.is_dir():
        raise EmbeddingMismatchError(f"{p}: not a model directory")
    files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in MODEL_FILE_SUFFIXES
                   and not f.name.startswith((".", "_")))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0")
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
    return h.hexdigest()


def policy_fingerprint(policy: Any, model_path: str | Path | None = None) -> str:
    """The fingerprint of the encoder behind ``policy``: of ``model_path`` if
    given, else of a local policy's model directory, else the policy's name."""
    path = model_path or getattr(policy, "model_path", None)
    if path is not None and Path(path).is_dir():
        return model_fingerprint(path)
    expected = getattr(policy, "expected_model", None)
    if expected and Path(expected).is_dir():
        return model_fingerprint(expected)
    name = str(getattr(policy, "name", type(policy).__name__))
    log.warning("no model directory for %s: its embeddings are keyed by name only", name)
    return "name:" + hashlib.sha256(name.encode()).hexdigest()


def policy_pooling(policy: Any) -> str:
    pooling = getattr(policy, "pooling", None)
    if not isinstance(pooling, str):
        raise EmbeddingMismatchError(f"policy {getattr(policy, 'name', policy)!r} has no pooling: it cannot encode")
    return pooling


class CacheMeta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    fingerprint: str
    pooling: str
    text_format: str = PROMPT_VERSION
    dim: int | None = None
    model_path: str = ""

    def check(self, other: CacheMeta, where: Path) -> None:
        """Refuse to mix: same fingerprint, pooling and text format."""
        for field in ("pooling", "fingerprint", "text_format"):
            a, b = getattr(self, field), getattr(other, field)
            if a != b:
                raise EmbeddingMismatchError(
                    f"{where} holds embeddings with {field} {a!r}, not {b!r}: embeddings of different "
                    f"{'poolings' if field == 'pooling' else 'encoders'} cannot be mixed; use another directory")
        if self.dim is not None and other.dim is not None and self.dim != other.dim:
            raise EmbeddingMismatchError(f"{where}: vectors of width {self.dim}, not {other.dim}")


def _schema(dim: int) -> pa.Schema:
    return pa.schema([
        pa.field("key", pa.string(), nullable=False),
        pa.field("state", pa.string(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), dim), nullable=False),
        pa.field("fingerprint", pa.string(), nullable=False),
        pa.field("pooling", pa.string(), nullable=False),
    ])


class EmbeddingCache:
    """A directory of embedding parts (see the module docstring)."""

    def __init__(self, directory: str | Path, meta: CacheMeta) -> None:
        self.dir = Path(directory)
        self.meta = meta

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def read_meta(cls, directory: str | Path) -> CacheMeta | None:
        path = Path(directory) / META_FILE
        if not path.is_file():
            return None
        return CacheMeta.model_validate_json(path.read_text(encoding="utf-8"))

    @classmethod
    def open(cls, directory: str | Path, meta: CacheMeta) -> EmbeddingCache:
        """Open (or create) a cache for ``meta``; an existing cache of another
        fingerprint, pooling or text format is refused."""
        d = Path(directory)
        saved = cls.read_meta(d)
        if saved is not None:
            saved.check(meta, d)
            meta = saved if saved.dim is not None else meta
        d.mkdir(parents=True, exist_ok=True)
        for tmp in d.glob(f".{PART_PREFIX}*"):  # a part cut short by a kill
            tmp.unlink(missing_ok=True)
        cache = cls(d, meta)
        cache._write_meta()
        return cache

    @classmethod
    def load(cls, directory: str | Path) -> EmbeddingCache:
        """An existing cache, read-only use."""
        d = Path(directory)
        meta = cls.read_meta(d)
        if meta is None:
            raise EmbeddingMismatchError(f"{d}: not an embeddings cache (no {META_FILE})")
        return cls(d, meta)

    def _write_meta(self) -> None:
        atomic_write_text(self.dir / META_FILE, self.meta.model_dump_json(indent=1))

    # -- reading ---------------------------------------------------------------------

    def parts(self) -> list[Path]:
        return sorted(p for p in self.dir.glob(f"{PART_PREFIX}*.parquet") if p.is_file())

    def _read_part(self, part: Path, columns: list[str]) -> pa.Table:
        t = pq.read_table(part, columns=[*columns, "fingerprint", "pooling"])
        for field in ("fingerprint", "pooling"):
            values = set(t.column(field).unique().to_pylist())
            expected = getattr(self.meta, field)
            if values - {expected}:
                raise EmbeddingMismatchError(f"{part}: rows with {field} {sorted(values - {expected})}, "
                                             f"the cache is {expected!r}: refusing to mix")
        return t

    def keys(self) -> set[str]:
        out: set[str] = set()
        for part in self.parts():
            out.update(self._read_part(part, ["key"]).column("key").to_pylist())
        return out

    def vectors(self, keys: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """key -> float32 vector, for ``keys`` (all if None)."""
        wanted = set(keys) if keys is not None else None
        out: dict[str, np.ndarray] = {}
        for part in self.parts():
            t = self._read_part(part, ["key", "vector"])
            ks = t.column("key").to_pylist()
            flat = t.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
            mat = np.asarray(flat, dtype=np.float32).reshape(len(ks), -1) if ks else np.zeros((0, 0), np.float32)
            for i, k in enumerate(ks):
                if wanted is None or k in wanted:
                    out[k] = mat[i]
        return out

    def matrix(self, keys: Sequence[str]) -> np.ndarray:
        """Vectors of ``keys`` in order as one ``[n, dim]`` array; a missing key is an error."""
        vecs = self.vectors(keys)
        missing = [k for k in keys if k not in vecs]
        if missing:
            raise EmbeddingMismatchError(f"{self.dir}: {len(missing)} states are not encoded (run the encoding "
                                         f"again for these trajectories)")
        dim = self.meta.dim or 0
        return np.stack([vecs[k] for k in keys]) if keys else np.zeros((0, dim), np.float32)

    # -- writing ---------------------------------------------------------------------

    def write_part(self, keys: Sequence[str], states: Sequence[str], vectors: Sequence[Sequence[float]]) -> Path:
        dim = len(vectors[0])
        if self.meta.dim is None:
            self.meta = self.meta.model_copy(update={"dim": dim})
            self._write_meta()
        elif dim != self.meta.dim:
            raise EmbeddingMismatchError(f"{self.dir}: the encoder returned width {dim}, the cache holds "
                                         f"{self.meta.dim}")
        n = len(keys)
        table = pa.table({
            "key": pa.array(keys, pa.string()),
            "state": pa.array(states, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(np.asarray(vectors, dtype=np.float32).reshape(-1), pa.float32()), dim),
            "fingerprint": pa.array([self.meta.fingerprint] * n, pa.string()),
            "pooling": pa.array([self.meta.pooling] * n, pa.string()),
        }, schema=_schema(dim))
        seq = len(self.parts())
        path = self.dir / f"{PART_PREFIX}{seq:05d}.parquet"
        while path.exists():
            seq += 1
            path = self.dir / f"{PART_PREFIX}{seq:05d}.parquet"
        tmp = atomic_target(path)
        pq.write_table(table, tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        tmp.replace(path)
        return path


class EncodeReport(BaseModel):
    """What an encoding run did."""

    states: int = 0
    cached: int = 0
    encoded: int = 0
    parts_written: int = 0
    seconds: float = 0.0
    dim: int | None = None
    pooling: str = ""
    fingerprint: str = ""

    @property
    def states_per_s(self) -> float:
        return self.encoded / self.seconds if self.seconds > 0 else 0.0


async def encode_states(
    policy: Any,
    states: Iterable[str],
    cache: EmbeddingCache,
    *,
    batch_size: int = 64,
    checkpoint_every: int = 512,
    progress: bool = False,
) -> EncodeReport:
    """Encode every unique state not yet in ``cache`` through ``policy.encode``
    (batches of ``batch_size``), writing a part every ``checkpoint_every`` states."""
    fmt = _checked_format(policy, cache)
    unique = list(dict.fromkeys(states))
    todo = _uncached(unique, cache)
    report = EncodeReport(states=len(unique), cached=len(unique) - len(todo), pooling=cache.meta.pooling,
                          fingerprint=cache.meta.fingerprint, dim=cache.meta.dim)
    if not todo:
        return report
    t0 = time.perf_counter()
    await _encode_in_parts(policy, fmt, todo, cache, report, batch_size=batch_size,
                           checkpoint_every=checkpoint_every, progress=progress)
    report.seconds = time.perf_counter() - t0
    report.dim = cache.meta.dim
    log.info("encoded %d new states (%d cached) in %.1f s, %.1f states/s", report.encoded, report.cached,
             report.seconds, report.states_per_s)
    return report


def _checked_format(policy: Any, cache: EmbeddingCache) -> PromptFormat:
    """The policy's `PromptFormat`, once its pooling and text format are the cache's (else an
    `EmbeddingMismatchError`: never a mix of poolings or text formats in one cache)."""
    if policy_pooling(policy) != cache.meta.pooling:
        raise EmbeddingMismatchError(f"the policy pools {policy_pooling(policy)!r}, the cache at {cache.dir} holds "
                                     f"{cache.meta.pooling!r} embeddings: refusing to mix poolings")
    fmt = format_of(policy)
    if fmt.version != cache.meta.text_format:
        raise EmbeddingMismatchError(f"the policy prompts as {fmt.version!r}, the cache at {cache.dir} holds "
                                     f"{cache.meta.text_format!r} embeddings: refusing to mix text formats")
    return fmt


def _uncached(unique: Sequence[str], cache: EmbeddingCache) -> list[tuple[str, str]]:
    """(key, state) of the states of ``unique`` that ``cache`` does not hold yet, shortest first."""
    have = cache.keys()
    keys = [state_key(s) for s in unique]
    # sorted by length: a batch of similar lengths carries little padding (and none often,
    # which lets attention take its causal fast path)
    return sorted(((k, s) for k, s in zip(keys, unique, strict=True) if k not in have), key=lambda ks: len(ks[1]))


class _PartBuffer:
    """Encoded rows not yet in the cache; `flush` writes them as one part of ``cache`` and counts it in
    ``report``."""

    def __init__(self, cache: EmbeddingCache, report: EncodeReport) -> None:
        self.cache = cache
        self.report = report
        self.keys: list[str] = []
        self.states: list[str] = []
        self.vectors: list[list[float]] = []

    def add(self, chunk: Sequence[tuple[str, str]], vectors: Sequence[list[float]]) -> None:
        """Hold the rows (key, state, vector) of ``chunk`` and its ``vectors``."""
        for (k, s), v in zip(chunk, vectors, strict=True):
            self.keys.append(k)
            self.states.append(s)
            self.vectors.append(v)

    def __len__(self) -> int:
        return len(self.keys)

    def flush(self) -> None:
        """Write the rows held (if any) as one part, and hold none."""
        if self.keys:
            self.cache.write_part(self.keys, self.states, self.vectors)
            self.report.parts_written += 1
            self.keys.clear()
            self.states.clear()
            self.vectors.clear()


async def _encode_in_parts(policy: Any, fmt: PromptFormat, todo: Sequence[tuple[str, str]], cache: EmbeddingCache,
                           report: EncodeReport, *, batch_size: int, checkpoint_every: int, progress: bool) -> None:
    """Encode the states of ``todo`` (key, state) in batches of ``batch_size``, writing a part of ``cache`` as
    soon as ``checkpoint_every`` rows are held and one for the rest at the end; counted in ``report``."""
    from tqdm import tqdm

    buffer = _PartBuffer(cache, report)
    bar = tqdm(total=report.states, initial=report.cached, unit="state", desc="encode", disable=not progress,
               mininterval=1.0)
    try:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            vecs = await policy.encode([encoder_text(s, fmt) for _, s in chunk])
            if len(vecs) != len(chunk):
                raise EmbeddingMismatchError(f"the encoder returned {len(vecs)} vectors for {len(chunk)} texts")
            buffer.add(chunk, vecs)
            report.encoded += len(chunk)
            bar.update(len(chunk))
            if len(buffer) >= checkpoint_every:
                buffer.flush()
        buffer.flush()
    finally:
        bar.close()


def trajectory_texts(records: Iterable[Any]) -> list[str]:
    """The unique non-empty states and root goals of trajectory records."""
    out: dict[str, None] = {}
    for r in records:
        if r.goal:
            out.setdefault(r.goal)
        if r.state:
            out.setdefault(r.state)
    return list(out)


def cache_dir_for(out_dir: str | Path) -> Path:
    """Where the embeddings stage keeps its cache inside its directory."""
    return Path(out_dir) / "cache"


def describe(meta: CacheMeta) -> str:
    return json.dumps({"pooling": meta.pooling, "dim": meta.dim, "fingerprint": meta.fingerprint[:12]})
