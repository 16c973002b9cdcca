"""Read and write records as Parquet (pyarrow) or JSONL, validating on read.

A file that is missing, truncated, of another record kind, or with a row that
does not validate raises `RecordFileError` naming the file (and the row or
line), never a bare pyarrow or pydantic traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from burnqed_core.errors import RecordFileError
from burnqed_core.records import Record, arrow_schema

R = TypeVar("R", bound=Record)


def atomic_target(path: Path) -> Path:
    """A hidden temporary name beside ``path`` (parent created): write there,
    then ``replace`` it onto ``path`` so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (best effort: not every file system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_open(path: str | Path) -> Iterator[IO[bytes]]:
    """The one way the project writes a file: into a temporary file beside
    ``path``, flushed and fsynced, then renamed onto ``path`` (and the
    directory fsynced). Readers see the old file or the whole new one, never
    half; after a crash the file is either absent, old, or complete. On an
    exception inside the block the temporary file is removed and ``path`` is
    left as it was."""
    path = Path(path)
    tmp = atomic_target(path)
    try:
        with tmp.open("wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write a file atomically and durably (see `atomic_open`)."""
    path = Path(path)
    with atomic_open(path) as f:
        f.write(data)
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write a UTF-8 text file atomically and durably (see `atomic_open`)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def file_sha256(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def json_sha256(payload: object) -> str:
    """SHA-256 (hex) of ``payload`` as canonical JSON (sorted keys; ``str`` of
    what JSON cannot hold): the signature of a run's settings and inputs."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def to_table(records: Sequence[Record], model: type[R]) -> pa.Table:
    schema = arrow_schema(model)
    rows = [r.model_dump() for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def write_parquet(records: Sequence[R], path: str | Path, model: type[R] | None = None) -> Path:
    """Write records to a Parquet file atomically (temp file + rename)."""
    path = Path(path)
    if model is None:
        if not records:
            raise ValueError("model is required to write an empty record list")
        model = type(records[0])
    with atomic_open(path) as f:
        pq.write_table(to_table(records, model), f)
    return path


def _check_schema(schema: pa.Schema, model: type[Record], path: Path) -> None:
    want = arrow_schema(model)
    kind = (schema.metadata or {}).get(b"burnqed.kind")
    if kind is not None and kind.decode() != model.kind:
        raise RecordFileError(f"{path}: holds {kind.decode()!r} records, expected {model.kind!r}")
    missing = [f.name for f in want if f.name not in schema.names and not f.nullable
               and model.model_fields[f.name].is_required()]
    if missing:
        raise RecordFileError(f"{path}: not a {model.kind} file: missing column(s) {', '.join(missing)}")
    for f in want:
        if f.name in schema.names:
            got = schema.field(f.name).type
            if got != f.type and not (pa.types.is_null(got)):
                raise RecordFileError(f"{path}: column {f.name!r} has type {got}, expected {f.type}")


def read_table(path: str | Path, model: type[Record]) -> pa.Table:
    """The Parquet file as an Arrow table, schema checked against ``model``."""
    path = Path(path)
    if not path.exists():
        raise RecordFileError(f"{path}: no such file")
    try:
        pf = pq.ParquetFile(path)
        _check_schema(pf.schema_arrow, model, path)
        return pf.read()
    except RecordFileError:
        raise
    except (pa.ArrowException, OSError) as e:
        raise RecordFileError(f"{path}: not a readable Parquet file ({e})") from None


def read_parquet(path: str | Path, model: type[R]) -> list[R]:
    """All records of a Parquet file, each validated."""
    path = Path(path)
    return validate_rows(read_table(path, model).to_pylist(), model, path)


def validate_rows(rows: Iterable[dict[str, Any]], model: type[R], where: str | Path, what: str = "") -> list[R]:
    """``rows`` (e.g. of a Parquet table) as validated records; the first invalid one is an error naming
    ``where``, its row number and the field."""
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(model.model_validate(row))
        except ValidationError as e:
            raise RecordFileError(f"{where}: row {i} is not a valid {what or model.kind}: {_first_error(e)}") from None
    return out


def write_jsonl(records: Iterable[Record], path: str | Path) -> Path:
    path = Path(path)
    with atomic_open(path) as f:
        for r in records:
            f.write((r.model_dump_json() + "\n").encode("utf-8"))
    return path


def iter_jsonl(path: str | Path, model: type[R]) -> Iterator[R]:
    path = Path(path)
    if not path.exists():
        raise RecordFileError(f"{path}: no such file")
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield model.model_validate(json.loads(line))
            except json.JSONDecodeError as e:
                raise RecordFileError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
            except ValidationError as e:
                raise RecordFileError(f"{path}:{lineno}: not a valid {model.kind}: {_first_error(e)}") from None


def read_jsonl(path: str | Path, model: type[R]) -> list[R]:
    return list(iter_jsonl(path, model))


def read_records(path: str | Path, model: type[R]) -> list[R]:
    """Parquet or JSONL by suffix."""
    path = Path(path)
    if path.suffix in (".jsonl", ".json"):
        return read_jsonl(path, model)
    return read_parquet(path, model)


def write_records(records: Sequence[R], path: str | Path, model: type[R] | None = None) -> Path:
    path = Path(path)
    if path.suffix == ".jsonl":
        return write_jsonl(records, path)
    return write_parquet(records, path, model)


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    return f"{loc}: {err['msg']}" if loc else err["msg"]
