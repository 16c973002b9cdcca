"""Record round-trips (Parquet and JSONL, all four kinds) and clear errors on
corrupt, truncated or mismatched files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from burnqed_core.errors import RecordFileError
from burnqed_core.record_io import read_jsonl, read_parquet, read_records, write_jsonl, write_parquet, write_records
from burnqed_core.records import (
    RECORD_TYPES,
    EvalResult,
    Record,
    TacticPair,
    Theorem,
    TrajectoryRecord,
    arrow_schema,
)

SAMPLES: dict[type[Record], list[Record]] = {
    Theorem: [
        Theorem(name="t1", statement="(n : Nat) : n + 0 = n", proof=["simp"], family="arith"),
        Theorem(name="t2", statement="(xs : List α) :\n    xs ++ [] = xs",
                preamble="universe u\nvariable {α : Type u}\n", split="dev", source="x.lean",
                proof=["induction xs with\n| nil => rfl\n| cons x xs ih => simp"]),
    ],
    TacticPair: [
        TacticPair(theorem="t1", state_before="n : Nat\n⊢ n + 0 = n", tactic="simp", state_after="", depth=0),
        TacticPair(theorem="t2", state_before="⊢ ∀ p, p → p", tactic="intro p hp", state_after="p : Prop\nhp : p\n⊢ p",
                   depth=0, source="leandojo:x.lean:3"),
    ],
    TrajectoryRecord: [
        TrajectoryRecord(theorem="t1", iteration=0, node_id=0, parent_id=-1, state="⊢ a", goal="⊢ a", tactic="",
                         depth=0, logprob=0.0, cum_logprob=0.0),
        TrajectoryRecord(theorem="t1", iteration=0, node_id=1, parent_id=0, state="", goal="⊢ a", tactic="simp",
                         depth=1, logprob=-0.25, cum_logprob=-0.25, energy=-1.5, label="positive", terminal=True,
                         proved=True, created_s=1.7e9, elapsed_s=0.5),
    ],
    EvalResult: [
        EvalResult(iteration=1, benchmark="bundled:benchmark", theorem="t1", budget=100, proved=True,
                   nodes_used=3, time_s=1.25, proof=["intro h", "exact h"], hard=True, model="m", ebm="e"),
        EvalResult(iteration=1, benchmark="bundled:benchmark", theorem="t2", budget=100, attempt=1, proved=False,
                   nodes_used=100, time_s=60.0, error="infra", automation="omega"),
    ],
}


@pytest.mark.parametrize("model", list(SAMPLES), ids=lambda m: m.kind)
def test_round_trips(tmp_path: Path, model: type[Record]) -> None:
    recs = SAMPLES[model]
    assert read_parquet(write_parquet(recs, tmp_path / "r.parquet"), model) == recs
    assert read_jsonl(write_jsonl(recs, tmp_path / "r.jsonl"), model) == recs
    assert read_records(write_records(recs, tmp_path / "s.jsonl"), model) == recs
    assert read_records(write_records(recs, tmp_path / "s.parquet"), model) == recs
    # the file carries its kind and the schema derived from the model
    schema = pq.read_schema(tmp_path / "r.parquet")
    assert schema.metadata[b"burnqed.kind"] == model.kind.encode()
    assert schema.remove_metadata().equals(arrow_schema(model).remove_metadata())
    assert RECORD_TYPES[model.kind] is model


def test_empty_file_needs_model(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_parquet([], tmp_path / "e.parquet")
    assert read_parquet(write_parquet([], tmp_path / "e.parquet", TacticPair), TacticPair) == []


def test_nullable_columns() -> None:
    schema = arrow_schema(TrajectoryRecord)
    assert schema.field("energy").nullable and not schema.field("logprob").nullable
    assert schema.field("energy").type == pa.float64()
    assert arrow_schema(Theorem).field("proof").type == pa.list_(pa.string())


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordFileError, match="no such file"):
        read_parquet(tmp_path / "none.parquet", Theorem)
    with pytest.raises(RecordFileError, match="no such file"):
        read_jsonl(tmp_path / "none.jsonl", Theorem)


def test_truncated_parquet(tmp_path: Path) -> None:
    path = write_parquet(SAMPLES[TacticPair] * 50, tmp_path / "t.parquet")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(RecordFileError, match=r"t\.parquet: not a readable Parquet file"):
        read_parquet(path, TacticPair)


def test_garbage_parquet(tmp_path: Path) -> None:
    path = tmp_path / "g.parquet"
    path.write_text("this is not parquet", encoding="utf-8")
    with pytest.raises(RecordFileError, match=r"g\.parquet"):
        read_parquet(path, Theorem)


def test_mismatched_kind(tmp_path: Path) -> None:
    path = write_parquet(SAMPLES[TacticPair], tmp_path / "pairs.parquet")
    with pytest.raises(RecordFileError, match=r"pairs\.parquet: holds 'tactic_pair' records, expected 'theorem'"):
        read_parquet(path, Theorem)


def test_foreign_parquet_missing_columns_and_wrong_types(tmp_path: Path) -> None:
    path = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"theorem": ["a"], "tactic": ["simp"]}), path)
    with pytest.raises(RecordFileError, match=r"foreign\.parquet: not a tactic_pair file: missing column\(s\) "
                                              r"state_before, state_after, depth"):
        read_parquet(path, TacticPair)
    pq.write_table(pa.table({"theorem": ["a"], "state_before": ["s"], "tactic": ["t"], "state_after": [""],
                             "depth": ["zero"]}), path)
    with pytest.raises(RecordFileError, match="column 'depth' has type string, expected int64"):
        read_parquet(path, TacticPair)


def test_invalid_row_in_parquet(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    table = pa.table({"name": ["ok", "bad"], "statement": ["s", "s"], "split": ["train", "nonsense"]})
    pq.write_table(table, path)
    with pytest.raises(RecordFileError, match=r"rows\.parquet: row 1 is not a valid theorem: split"):
        read_parquet(path, Theorem)


def test_corrupt_jsonl(tmp_path: Path) -> None:
    path = write_jsonl(SAMPLES[Theorem], tmp_path / "t.jsonl")
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) - 20], encoding="utf-8")  # truncated last line
    with pytest.raises(RecordFileError, match=r"t\.jsonl:2: not valid JSON"):
        read_jsonl(path, Theorem)
    path.write_text(SAMPLES[TacticPair][0].model_dump_json() + "\n", encoding="utf-8")
    with pytest.raises(RecordFileError, match=r"t\.jsonl:1: not a valid theorem"):
        read_jsonl(path, Theorem)
