"""The loop's train/validation split is drawn once, before the tiny base is pre-trained: pre-training sees only
the training side, and every iteration's pairs reuse that split (issue 21). Real tiny pre-training, no Lean:
the base pairs are built directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.pairs.prepare import prepare_pairs
from burnqed_core.errors import DataError
from burnqed_core.loop import corpus as loop_corpus
from burnqed_core.loop.stages import base_model as base_model_stage
from burnqed_core.loop.stages import tactic_pairs as tactic_pairs_stage
from burnqed_core.record_io import read_records, write_parquet
from burnqed_core.records import TacticPair
from burnqed_core.training.run_record import fingerprint_pairs
from tests.core.data.pairs.test_prepare import make_pairs

TINY = {"vocab_size": 320, "hidden_size": 32, "num_layers": 1, "num_heads": 1, "num_kv_heads": 1,
        "intermediate_size": 64, "max_position_embeddings": 256, "pretrain_steps": 4, "pretrain_lr": 1e-3,
        "pretrain_batch_size": 4}


def test_validation_theorems_are_never_seen_in_pretraining(tmp_path: Path) -> None:
    pairs = make_pairs(40, seed=1)
    traced = tmp_path / "traced"
    traced.mkdir()
    write_parquet(pairs, traced / loop_corpus.PAIRS_FILE, TacticPair)
    profile = load_profile("tiny", environ={}, overrides={
        "paths.work_dir": str(tmp_path / "work"), "training.tiny_model": TINY, "training.eval_every": 2,
        "training.save_every": 2, "training.warmup_steps": 1, "data.val_fraction": 0.2, "data.seed": 5})
    model = tmp_path / "model"
    res = base_model_stage.base_model(profile, traced, model)

    split = loop_corpus.read_base_split(model)
    names = {p.theorem for p in pairs}
    assert set(split.train) | set(split.val) == names and not set(split.train) & set(split.val)
    assert len(split.val) >= 2 and (split.seed, split.val_fraction) == (5, 0.2)
    assert res.metrics["val_theorems"] == len(split.val) and res.metrics["train_theorems"] == len(split.train)

    # what pre-training trained on: run.json fingerprints exactly the training side's pairs, and its eval set is
    # the validation side
    run = json.loads((model / "run.json").read_text(encoding="utf-8"))
    prepared = prepare_pairs(pairs, 0.2, 5, profile.data.max_tokens, val_theorems=split.val)
    train_side = loop_corpus.frame_pairs(prepared.train)
    assert {p.theorem for p in train_side}.isdisjoint(split.val)
    assert run["data"]["pairs"] == fingerprint_pairs(train_side)
    assert run["data"]["pairs"] != fingerprint_pairs(pairs)  # not every traced pair, as before the fix
    assert run["data"]["val"] == fingerprint_pairs(loop_corpus.frame_pairs(prepared.val))
    metrics = json.loads((model / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["train_examples"] == len(train_side) and metrics["val_examples"] == prepared.val.height > 0

    # the iteration's SFT pairs reuse the split: validation = the theorems pre-training never saw
    out = tmp_path / "iter_0_pairs"
    tactic_pairs_stage.tactic_pairs(profile, 0, pairs, [], out, tokenizer_dir=model, split=split)
    val = read_records(out / "val.parquet", TacticPair)
    train = read_records(out / "train.parquet", TacticPair)
    assert {p.theorem for p in val} == set(split.val)
    assert {p.theorem for p in train}.isdisjoint(split.val)
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["split"]["val_theorems"] == len(split.val)


def test_a_base_without_its_split_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="re-materialise base_model"):
        loop_corpus.read_base_split(tmp_path)


def test_withheld_exercises_are_never_trained_on(tmp_path: Path) -> None:
    """With ``data.withhold_fraction`` the base split withholds that share of the corpus theorems the search could
    select (automation-resistant by the corpus's map, two steps or more): pre-training and every iteration's SFT
    pairs leave them out, and the search selection draws them first."""
    from burnqed_core.data.theorems.load import AUTOMATION_FILE
    from burnqed_core.loop.stages.trajectories import search_selection
    from burnqed_core.record_io import write_jsonl
    from burnqed_core.records import Theorem

    pairs = make_pairs(60, seed=2)
    depth: dict[str, int] = {}
    for p in pairs:
        depth[p.theorem] = max(depth.get(p.theorem, 0), p.depth + 1)
    names = sorted(depth)
    corpus_dir = tmp_path / "corpus"
    corpus_dir.mkdir()
    write_jsonl([Theorem(name=n, statement=f": {i} = {i}", proof=["skip"] * depth[n], family="f")
                 for i, n in enumerate(names)], corpus_dir / "corpus.jsonl")
    easy = set(names[::5])  # every fifth closed by a single automation tactic: never withheld
    (corpus_dir / AUTOMATION_FILE).write_text(json.dumps({n: ("simp" if n in easy else None) for n in names}),
                                              encoding="utf-8")
    traced = tmp_path / "traced"
    traced.mkdir()
    write_parquet(pairs, traced / loop_corpus.PAIRS_FILE, TacticPair)
    profile = load_profile("tiny", environ={}, overrides={
        "paths.work_dir": str(tmp_path / "work"), "training.tiny_model": TINY, "training.eval_every": 2,
        "training.save_every": 2, "training.warmup_steps": 1, "data.val_fraction": 0.2, "data.seed": 5,
        "data.corpus": str(corpus_dir / "corpus.jsonl"), "data.benchmark": str(corpus_dir / "corpus.jsonl"),
        "data.withhold_fraction": 0.5, "data.search_theorems": 6})
    model = tmp_path / "model"
    res = base_model_stage.base_model(profile, traced, model)
    split = loop_corpus.read_base_split(model)
    withheld = set(split.withheld)
    assert withheld and not withheld & easy and all(depth[n] >= 2 for n in withheld)
    assert not withheld & (set(split.train) | set(split.val))
    assert f"{len(withheld)} withheld" in res.summary
    run = json.loads((model / "run.json").read_text(encoding="utf-8"))
    prepared = prepare_pairs(split.trainable(pairs), 0.2, 5, profile.data.max_tokens, val_theorems=split.val)
    assert run["data"]["pairs"] == fingerprint_pairs(loop_corpus.frame_pairs(prepared.train))
    out = tmp_path / "iter_0_pairs"
    tactic_pairs_stage.tactic_pairs(profile, 0, pairs, [], out, tokenizer_dir=model, split=split)
    seen = {p.theorem for f in ("train.parquet", "val.parquet") for p in read_records(out / f, TacticPair)}
    assert seen == set(names) - withheld
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["split"]["withheld_theorems"] == len(withheld)
    # the benchmark is the corpus here (held out by the selection): search a copy without it
    profile = profile.model_copy(update={"data": profile.data.model_copy(update={"benchmark": str(
        _other_benchmark(tmp_path))})})
    sel = search_selection(profile, 0, [], withheld=split.withheld)
    assert {t.name for t in sel.theorems} <= withheld and sel.stats.preferred == 6
    # what the trajectories asset passes: the saved split's exercises, with either setting, else none
    assert loop_corpus.search_withheld(profile, model) == split.withheld
    by_family = profile.model_copy(update={"data": profile.data.model_copy(update={
        "withhold_fraction": 0.0, "withhold_families": ["f"]})})
    assert loop_corpus.search_withheld(by_family, model) == split.withheld
    plain = profile.model_copy(update={"data": profile.data.model_copy(update={"withhold_fraction": 0.0,
                                                                                    "withhold_families": []})})
    assert loop_corpus.search_withheld(plain, model) == []


def _other_benchmark(tmp_path: Path) -> Path:
    from burnqed_core.record_io import write_jsonl
    from burnqed_core.records import Theorem

    path = tmp_path / "bench" / "benchmark.jsonl"
    path.parent.mkdir()
    write_jsonl([Theorem(name="other", statement=": 1 = 1", proof=["rfl"], split="benchmark")], path)
    return path


def test_withheld_families(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``data.withhold_families`` withholds every theorem of those families outside validation and nothing
    else, whatever ``withhold_fraction``; with a corpus that lacks the family (a user's own under a profile
    written for another) nothing is withheld and the log says why."""
    from burnqed_core.record_io import write_jsonl
    from burnqed_core.records import Theorem

    names = [f"{fam}_{i}" for fam in ("ex", "other") for i in range(20)]
    corpus = tmp_path / "corpus.jsonl"
    write_jsonl([Theorem(name=n, statement=f": {i} = {i}", proof=["rfl", "rfl"], family=n.split("_")[0])
                 for i, n in enumerate(names)], corpus)
    pairs = [TacticPair(theorem=n, state_before="⊢ x", tactic="rfl", state_after="", depth=0) for n in names]
    profile = load_profile("tiny", environ={}, overrides={"data.corpus": str(corpus), "data.val_fraction": 0.2,
                                                          "data.withhold_families": ["ex"]})
    split = loop_corpus.base_split(profile, pairs)
    ex = {n for n in names if n.startswith("ex_")}
    assert set(split.withheld) == ex - set(split.val) and len(split.withheld) >= 10
    assert split.val == loop_corpus.base_split(load_profile("tiny", environ={}, overrides={
        "data.corpus": str(corpus), "data.val_fraction": 0.2}), pairs).val
    bad = load_profile("tiny", environ={}, overrides={"data.corpus": str(corpus),
                                                      "data.withhold_families": ["no_such_family"]})
    with caplog.at_level("WARNING"):
        assert loop_corpus.base_split(bad, pairs).withheld == []
    assert "no_such_family" in caplog.text and "nothing is withheld" in caplog.text


def test_excluded_families_are_never_traced_trained_on_or_searched(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """``data.exclude_families`` takes whole families out of the corpus for every stage that reads it (the
    trace, the split, the search selection, the checks); a family the corpus lacks is logged."""
    from burnqed_core.loop.checks import _source_theorems
    from burnqed_core.loop.stages.trajectories import search_selection
    from burnqed_core.record_io import write_jsonl
    from burnqed_core.records import Theorem

    names = [f"{fam}_{i}" for fam in ("ex", "other") for i in range(10)]
    corpus = tmp_path / "corpus.jsonl"
    write_jsonl([Theorem(name=n, statement=f": {i} = {i}", proof=["skip", "rfl"], family=n.split("_")[0])
                 for i, n in enumerate(names)], corpus)
    over = {"data.corpus": str(corpus), "data.benchmark": str(_other_benchmark(tmp_path)),
            "data.search_theorems": 100}
    profile = load_profile("tiny", environ={}, overrides={**over, "data.exclude_families": ["ex", "gone"]})
    with caplog.at_level("WARNING"):
        kept = {t.name for t in loop_corpus.corpus_theorems(profile)}
    assert kept == {n for n in names if n.startswith("other_")}
    assert "gone" in caplog.text
    assert {t.name for t in search_selection(profile, 0, []).theorems} <= kept
    assert {t.name for t in _source_theorems(profile)[0]} == kept
    every = load_profile("tiny", environ={}, overrides={**over, "data.exclude_families": []})
    assert any(t.name.startswith("ex_") for t in search_selection(every, 0, []).theorems)


def test_the_cpu_profiles_corpora() -> None:
    """tiny leaves the witness lesson and its exercises and the technique families out of the bundled corpus (its
    measured run is on the corpus without them); small trains on all but the ``lsum`` exercises, which it
    withholds: its search must prove them."""
    from burnqed_core.data.theorems.load import load_theorems

    full = load_theorems("bundled:corpus")
    fams = {t.family for t in full}
    assert {"lfill", "lsum"} <= fams
    from burnqed_core.data.synthetic.families import FAMILIES

    tiny = load_profile("tiny", environ={})
    # tiny: the first families less the witness lesson (the technique families are small's and transfer's)
    assert {t.family for t in loop_corpus.corpus_theorems(tiny)} == {f.name for f in FAMILIES if f.split == "train"} - {
        "lfill", "lsum"}
    transfer = load_profile("transfer", environ={})
    assert {t.family for t in loop_corpus.corpus_theorems(transfer)} == fams - {"lfill", "lsum"}
    assert tiny.data.withhold_families == [] and tiny.training.numerals == "as_printed"
    small = load_profile("small", environ={})
    assert loop_corpus.corpus_theorems(small) == full
    assert small.data.withhold_families == ["lsum"] and small.training.numerals == "canonical"
