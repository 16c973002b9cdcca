"""The trace cache (`burnqed_core.lean.trace_cache`): keyed by theorem, Lean and the Lean settings that decide;
only complete traces stored; unreadable or foreign files ignored; and the corpus trace stage reading it on
real Lean (the same pairs as tracing, a failed proof traced again every time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.synthetic.catalogue import BY_NAME
from burnqed_core.data.synthetic.generate_sets import family_theorems
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.trace_cache import TraceCache
from burnqed_core.loop.stages.base_tactic_pairs import trace_base
from burnqed_core.record_io import read_parquet, write_jsonl
from burnqed_core.records import TacticPair, Theorem

T = Theorem(name="t1", statement="(n : Nat) : n + 0 = n", proof=["simp"])


def _cache(tmp_path: Path, version: str = "v1", **lean: object) -> TraceCache:
    settings = load_profile("tiny", overrides={f"lean.{k}": v for k, v in lean.items()}).lean.model_dump(mode="json")
    return TraceCache(tmp_path, version, settings)


def _pairs(name: str) -> list[TacticPair]:
    return [TacticPair(theorem=name, state_before="n : Nat\n⊢ n + 0 = n", tactic="simp", state_after="", depth=0)]


def test_the_key_holds_the_theorem_lean_and_deciding_settings_only(tmp_path: Path) -> None:
    base = _cache(tmp_path).key(T)
    assert _cache(tmp_path).key(T) == base
    assert _cache(tmp_path).key(T.model_copy(update={"proof": ["omega"]})) != base
    assert _cache(tmp_path).key(T.model_copy(update={"name": "t2"})) != base
    assert _cache(tmp_path).key(T.model_copy(update={"preamble": "def f := 1"})) != base
    assert _cache(tmp_path, version="v2").key(T) != base
    assert _cache(tmp_path, tactic_timeout_s=5.0).key(T) != base
    # how many workers, restart limits: the machine's, not the verdict's
    assert _cache(tmp_path, num_workers=3, max_requests_per_worker=7).key(T) == base


def test_put_get_and_what_is_ignored(tmp_path: Path) -> None:
    c = _cache(tmp_path)
    assert c.get(T) is None
    c.put(T, [])  # nothing traced: nothing stored
    assert c.get(T) is None and not any(tmp_path.rglob("*.json"))
    c.put(T, _pairs("t1"))
    assert c.get(T) == _pairs("t1")
    hits, misses = c.split([T, T.model_copy(update={"name": "t2"})])
    assert list(hits) == ["t1"] and [t.name for t in misses] == ["t2"]
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{not json")
    assert c.get(T) is None  # unreadable: traced again
    path.write_bytes(b'[{"theorem": "other", "state_before": "a", "tactic": "b", "state_after": "", "depth": 0}]')
    assert c.get(T) is None  # pairs of another theorem: ignored


@pytest.mark.lean
async def test_the_trace_stage_reads_the_cache_and_traces_failures_again(lean_pool: LeanPool,
                                                                         tmp_path: Path) -> None:
    good = family_theorems(BY_NAME["tmul"])[:2] + family_theorems(BY_NAME["onat"])[:1]
    bad = good[2].model_copy(update={"name": "onat_wrong", "proof": ["rfl"]})
    corpus = write_jsonl([*good, bad], tmp_path / "corpus.jsonl")
    prof = load_profile("tiny", overrides={"data.corpus": str(corpus), "data.exclude_families": [],
                                           "paths.trace_cache": str(tmp_path / "cache")})
    first = await trace_base(prof, lean_pool, tmp_path / "a")
    assert first.metrics["cached"] == 0 and first.metrics["failed"] == 1
    second = await trace_base(prof, lean_pool, tmp_path / "b")
    assert second.metrics["cached"] == 3 and second.metrics["failed"] == 1  # the failure is traced again
    assert "3 theorems from the trace cache" in second.summary
    a = read_parquet(tmp_path / "a" / "pairs.parquet", TacticPair)
    b = read_parquet(tmp_path / "b" / "pairs.parquet", TacticPair)
    assert a == b and {p.theorem for p in a} == {t.name for t in good}
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 3


def _put_many(directory: str, times: int, out: object) -> None:
    """A run tracing ``T`` again and again into a cache other runs share (a child process)."""
    cache, pairs = _cache(Path(directory)), _pairs("t1")
    try:
        for _ in range(times):
            cache.put(T, pairs)
            assert cache.get(T) == pairs
        out.put("ok")  # type: ignore[attr-defined]
    except BaseException as e:  # reported to the test, which names it
        out.put(repr(e))  # type: ignore[attr-defined]


def test_runs_that_store_the_same_theorem_at_once_neither_fail_nor_leave_half_a_file(tmp_path: Path) -> None:
    """Every run on the machine shares the cache: four processes storing the same theorem's pairs at once each
    finish and always read back the whole file."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_put_many, args=(str(tmp_path), 150, out)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [out.get(timeout=5) for _ in procs] == ["ok"] * 4
    assert _cache(tmp_path).get(T) == _pairs("t1")
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and ".tmp" in p.name]


def test_the_key_holds_the_checker_and_the_premise_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change of the trusted checker's sources never serves an old trace (nor an old step verdict), and a
    theorem posed in a library module (premise rule) is another question than the same text without it."""
    from burnqed_core.lean import trace_cache, verdict_cache
    from burnqed_core.lean.judge import checker_fingerprint

    base = _cache(tmp_path).key(T)
    assert _cache(tmp_path).key(T.model_copy(update={"module": "Init.Data.Nat.Basic"})) != base
    vc = verdict_cache.VerdictCache(10)
    assert vc.key(T, ("simp",))[0] == checker_fingerprint()
    monkeypatch.setattr(trace_cache, "checker_fingerprint", lambda: "another checker")
    monkeypatch.setattr(verdict_cache, "checker_fingerprint", lambda: "another checker")
    assert _cache(tmp_path).key(T) != base
    assert verdict_cache.VerdictCache(10).key(T, ("simp",)) != vc.key(T, ("simp",))
