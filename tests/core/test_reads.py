"""The one reader (issue 57): a read is recorded with the file's digest (a directory's contents, a missing file
too), recordings nest and follow tasks and threads, and `changed` names what changed since."""

from __future__ import annotations

import asyncio
from pathlib import Path

from burnqed_core import reads
from burnqed_core.data.theorems.load import automation_map, load_theorems
from burnqed_core.record_io import write_jsonl
from burnqed_core.records import Theorem


def test_reads_are_recorded_with_their_digests_and_changes_are_named(tmp_path: Path) -> None:
    f, d, gone = tmp_path / "a.txt", tmp_path / "dir", tmp_path / "not-there.json"
    f.write_text("one")
    d.mkdir()
    (d / "x.lean").write_text("theorem t : True := trivial")
    (d / ".hidden").write_text("ignored")
    assert reads.record(f) == f  # outside a recording: nothing recorded, the path returned
    with reads.recording() as rec:
        assert reads.read_text(f) == "one"
        reads.record(d)
        reads.record(gone)
        reads.record(f)  # a second read keeps the first digest
    assert set(rec.reads) == {str(f.resolve()), str(d.resolve()), str(gone.resolve())}
    assert rec.reads[str(gone.resolve())] == reads.MISSING and reads.changed(rec.reads) == []
    (d / ".hidden").write_text("still ignored")
    assert reads.changed(rec.reads) == []
    f.write_text("two")
    (d / "x.lean").write_text("theorem t : True := by trivial")
    gone.write_text("{}")
    assert reads.changed(rec.reads) == sorted(str(p.resolve()) for p in (f, d, gone))


def test_recordings_nest_and_follow_tasks_and_threads(tmp_path: Path) -> None:
    files = [tmp_path / f"f{i}" for i in range(3)]
    for p in files:
        p.write_text(p.name)
    seen: list[dict[str, str]] = []

    async def stage() -> None:
        reads.record(files[0])
        await asyncio.gather(asyncio.to_thread(reads.record, files[1]), asyncio.sleep(0))
        with reads.recording():  # an inner recording (a shard's) adds to the outer one
            reads.record(files[2])

    with reads.recording(on_new=seen.append) as rec:
        asyncio.run(stage())
    assert set(rec.reads) == {str(p.resolve()) for p in files}
    assert [len(s) for s in seen] == [1, 2, 3]  # the stage's _started.json follows each new read


def test_theorem_sets_and_automation_maps_go_through_the_reader(tmp_path: Path) -> None:
    bench = tmp_path / "bench" / "b.jsonl"
    bench.parent.mkdir()
    write_jsonl([Theorem(name="t", statement=": True")], bench)
    with reads.recording() as rec:
        load_theorems(str(bench))
        assert automation_map(str(bench)) is None  # none beside the set: recorded as missing
    auto = str((bench.parent / "automation.json").resolve())
    assert rec.reads[str(bench.resolve())].startswith("file:") and rec.reads[auto] == reads.MISSING
    (bench.parent / "automation.json").write_text('{"t": "trivial"}')
    assert reads.changed(rec.reads) == [auto]
