"""Pair preparation: theorem-level split, sorry filter, dedup, token filter, files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from burnqed_core.data.pairs.prepare import (
    assign_split,
    char_token_estimate,
    hf_token_counter,
    is_unsafe_tactic,
    load_pairs,
    prepare_pairs,
    proof_lengths,
    read_split,
    split_theorems,
    write_prepared,
    write_split,
)
from burnqed_core.data.pairs.prompt import format_example
from burnqed_core.errors import DataError
from burnqed_core.record_io import read_records, write_jsonl, write_parquet
from burnqed_core.records import TacticPair


def make_pairs(n_theorems: int, seed: int = 0, prefix: str = "thm") -> list[TacticPair]:
    """Proofs of 1-5 steps over varied (but per-theorem distinct) states."""
    rng = random.Random(seed)
    out = []
    for i in range(n_theorems):
        steps = rng.randint(1, 5)
        for d in range(steps):
            out.append(TacticPair(
                theorem=f"{prefix}_{i}", state_before=f"n{i} : Nat\nh : n{i} > {d}\n⊢ f n{i} = {d}",
                tactic=rng.choice(["simp", "omega", "rfl", "exact h", f"induction n{i}"]),
                state_after="" if d == steps - 1 else f"n{i} : Nat\n⊢ g {d}", depth=d, source="test",
            ))
    return out


def test_split_is_by_theorem_and_deterministic() -> None:
    pairs = make_pairs(300)
    p = prepare_pairs(pairs, val_fraction=0.2, seed=7, max_tokens=10_000)
    train_names, val_names = set(p.train["theorem"]), set(p.val["theorem"])
    assert not train_names & val_names  # no theorem on both sides
    assert train_names | val_names == {t.theorem for t in pairs}
    assert 0.1 < len(val_names) / 300 < 0.3
    # every pair of a theorem is on its theorem's side
    assert p.train.height + p.val.height == len(pairs)
    # same seed, shuffled input: same split; another seed: another split
    shuffled = pairs[:]
    random.Random(1).shuffle(shuffled)
    assert set(prepare_pairs(shuffled, 0.2, 7, 10_000).val["theorem"]) == val_names
    assert set(prepare_pairs(pairs, 0.2, 8, 10_000).val["theorem"]) != val_names
    # adding theorems never moves an existing theorem to the other side
    more = prepare_pairs(pairs + make_pairs(50, prefix="new"), 0.2, 7, 10_000)
    assert set(more.val["theorem"]) & {t.theorem for t in pairs} == val_names
    assert p.stats.train_theorems == len(train_names) and p.stats.val_theorems == len(val_names)


def test_tiny_input_has_both_sides() -> None:
    pairs = make_pairs(2)
    p = prepare_pairs(pairs, 0.01, 0, 10_000)
    assert p.stats.train_theorems == 1 and p.stats.val_theorems == 1
    p = prepare_pairs(pairs, 0.99, 0, 10_000)
    assert p.stats.train_theorems == 1 and p.stats.val_theorems == 1
    for seed in range(5):  # a single theorem is always for training
        p = prepare_pairs(make_pairs(1), 0.5, seed, 10_000)
        assert p.stats.train_theorems == 1 and p.val.height == 0


def test_unsafe_theorems_are_dropped_whole() -> None:
    assert is_unsafe_tactic("sorry") and is_unsafe_tactic("simp; admit") and is_unsafe_tactic("native_decide")
    assert is_unsafe_tactic("exact cheat") and is_unsafe_tactic("· sorry")
    assert not is_unsafe_tactic("exact sorry_free_lemma") and not is_unsafe_tactic("apply admitted")
    assert not is_unsafe_tactic("decide")
    pairs = make_pairs(20)
    bad = {"thm_3", "thm_11"}
    pairs = [p.model_copy(update={"tactic": "native_decide"}) if p.theorem == "thm_3" and p.depth == 0 else p
             for p in pairs]
    pairs.append(TacticPair(theorem="thm_11", state_before="x", tactic="sorry", state_after="", depth=9))
    out = prepare_pairs(pairs, 0.2, 0, 10_000)
    kept = set(out.train["theorem"]) | set(out.val["theorem"])
    assert not kept & bad and len(kept) == 18
    assert out.stats.unsafe_theorems == 2
    assert out.stats.unsafe_pairs == sum(1 for p in pairs if p.theorem in bad)


def test_dedup_and_empty() -> None:
    pairs = make_pairs(10)
    dup = pairs[0].model_copy(update={"theorem": "copy", "depth": 3})  # same state and tactic, other theorem
    empty = TacticPair(theorem="thm_1", state_before="  ", tactic="simp", state_after="", depth=0)
    out = prepare_pairs([*pairs, pairs[1], dup, empty], 0.2, 0, 10_000)
    both = pl.concat([out.train, out.val])
    assert both.height == len(pairs)
    assert both.unique(subset=["state_before", "tactic"]).height == both.height
    assert out.stats.duplicate_pairs == 2 and out.stats.empty_pairs == 1
    assert "copy" not in set(both["theorem"])  # the first occurrence wins


def test_token_filter_uses_the_prompt_format() -> None:
    pairs = make_pairs(30)
    long_state = "x : Nat\n" + "h : x = x\n" * 200 + "⊢ x = x"
    pairs.append(TacticPair(theorem="long", state_before=long_state, tactic="rfl", state_after="", depth=0))
    seen: list[str] = []

    def counter(text: str) -> int:
        seen.append(text)
        return len(text)

    limit = max(len("".join(format_example(p.state_before, p.tactic))) for p in pairs[:-1])
    out = prepare_pairs(pairs, 0.2, 0, max_tokens=limit, count_tokens=counter)
    assert out.stats.too_long_pairs == 1
    assert "long" not in set(out.train["theorem"]) | set(out.val["theorem"])
    assert seen[0] == "".join(format_example(pairs[0].state_before, pairs[0].tactic))
    assert char_token_estimate("abcdef") == 3


def test_hf_token_counter(tmp_path: Path) -> None:
    """A real BPE tokenizer saved as a HF tokenizer dir (no model needed)."""
    from transformers import AutoTokenizer

    from burnqed_core.training.tokenizer import train_tokenizer
    from tests.fixtures_models import LEAN_TEXTS

    train_tokenizer(LEAN_TEXTS * 4, 512, seed=0).save_pretrained(tmp_path / "tok")
    count = hf_token_counter(tmp_path / "tok")
    tok = AutoTokenizer.from_pretrained(tmp_path / "tok")
    text = "".join(format_example("n : Nat\n⊢ n + 0 = n", "simp"))
    n = len(tok(text, add_special_tokens=False)["input_ids"])
    assert count(text) == n + 1 and 5 < n < len(text)
    with pytest.raises(DataError, match="cannot load a tokenizer"):
        hf_token_counter(tmp_path / "missing")


def test_nothing_left_is_an_error() -> None:
    with pytest.raises(DataError, match="no tactic pairs left"):
        prepare_pairs(make_pairs(5), 0.1, 0, max_tokens=3)
    with pytest.raises(DataError, match="no tactic pairs to prepare"):
        prepare_pairs([], 0.1, 0, 100)


def test_depth_stats() -> None:
    pairs = make_pairs(40)
    out = prepare_pairs(pairs, 0.2, 0, 10_000)
    expected: dict[int, int] = {}
    for p in pairs:
        expected[p.depth] = expected.get(p.depth, 0) + 1
    assert out.stats.depth_histogram == dict(sorted(expected.items()))
    lengths = proof_lengths(pl.concat([out.train, out.val]))
    assert sum(out.stats.proof_length_histogram.values()) == 40
    assert max(lengths.values()) == out.stats.max_depth + 1


def test_write_and_load(tmp_path: Path) -> None:
    pairs = make_pairs(50)
    write_parquet(pairs[:100], tmp_path / "a.parquet")
    write_jsonl(pairs[100:], tmp_path / "b.jsonl")
    df = load_pairs([tmp_path / "a.parquet", tmp_path / "b.jsonl"])
    assert df.height == len(pairs)
    out = prepare_pairs(df, 0.2, 0, 10_000)
    paths = write_prepared(out, tmp_path / "prep", extra={"iteration": 0})
    train = read_records(paths["train"], TacticPair)
    val = read_records(paths["val"], TacticPair)
    assert len(train) == out.train.height and len(val) == out.val.height
    assert {p.theorem for p in train}.isdisjoint({p.theorem for p in val})
    assert sorted(train + val, key=lambda p: (p.theorem, p.depth)) == sorted(pairs, key=lambda p: (p.theorem, p.depth))
    stats = json.loads(paths["stats"].read_text())
    assert stats["train_pairs"] == len(train) and stats["iteration"] == 0
    assert stats["depth_histogram"] == {str(k): v for k, v in out.stats.depth_histogram.items()}


def test_split_drawn_once_and_reused(tmp_path: Path) -> None:
    """`split_theorems` draws the split the loop saves before pre-training; `prepare_pairs` given its validation
    theorems puts exactly those on the validation side, whatever the hash rule would say."""
    pairs = make_pairs(60)
    names = sorted({p.theorem for p in pairs})
    split = split_theorems(names, seed=3, val_fraction=0.2)
    assert sorted(split.train + split.val) == names and not set(split.train) & set(split.val)
    assert split == split_theorems(reversed(names), seed=3, val_fraction=0.2)  # independent of order
    assert split.val == sorted(assign_split(names, 3, 0.2))  # the same rule as an unsaved preparation
    assert split_theorems(names, seed=4, val_fraction=0.2).val != split.val
    path = write_split(split, tmp_path / "split.json")
    again = read_split(path)
    assert again == split and all(again.is_val(n) for n in split.val) and not any(map(again.is_val, split.train))
    # an unknown theorem follows the hash rule with the split's seed and fraction
    # a theorem the split does not know (a pool theorem's found proof) is trained on, never validation
    assert not any(again.is_val(f"pool_theorem_{i}") for i in range(200))
    # reused: a different val set than the hash would draw, honoured exactly
    chosen = names[:7]
    prepared = prepare_pairs(pairs, val_fraction=0.2, seed=3, max_tokens=10_000, val_theorems=chosen)
    assert set(prepared.val["theorem"]) == set(chosen)
    assert not set(prepared.train["theorem"]) & set(chosen)
    assert set(prepared.train["theorem"]) == set(names) - set(chosen)
    with pytest.raises(DataError, match="no theorem split"):
        read_split(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DataError, match="not a theorem split"):
        read_split(tmp_path / "bad.json")


def test_withheld_theorems_are_neither_trained_nor_validated(tmp_path: Path) -> None:
    """``withhold_fraction`` of the candidates is withheld: never on the train or validation side, drawn by
    name (independent of order), kept through ``split.json``; a split file of an older run has none."""
    pairs = make_pairs(80)
    names = sorted({p.theorem for p in pairs})
    candidates = names[:40]
    split = split_theorems(names, seed=3, val_fraction=0.2, withhold_from=candidates, withhold_fraction=0.5)
    withheld = set(split.withheld)
    assert withheld and withheld < set(candidates) - set(split.val)
    assert 10 <= len(withheld) <= 30  # about half of the 40 minus validation
    assert sorted(split.train + split.val + split.withheld) == names
    assert not withheld & (set(split.train) | set(split.val))
    assert split.val == split_theorems(names, seed=3, val_fraction=0.2).val  # the validation side is unchanged
    assert split == split_theorems(reversed(names), seed=3, val_fraction=0.2, withhold_from=reversed(candidates),
                                   withhold_fraction=0.5)
    assert all(split.is_withheld(n) and not split.is_val(n) for n in withheld)  # search proofs of them train
    kept = split.trainable(pairs)
    assert {p.theorem for p in kept} == set(names) - withheld and len(kept) < len(pairs)
    again = read_split(write_split(split, tmp_path / "split.json"))
    assert again == split and again.trainable(pairs) == kept
    old = json.loads((tmp_path / "split.json").read_text(encoding="utf-8"))
    del old["withheld"], old["withhold_fraction"]
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    assert read_split(tmp_path / "old.json").withheld == [] and read_split(tmp_path / "old.json").trainable(pairs) \
        == list(pairs)
    assert split_theorems(names, seed=3, val_fraction=0.2, withhold_from=candidates).withheld == []
    with pytest.raises(ValueError, match="withheld theorem is also"):
        type(split)(seed=3, val_fraction=0.2, train=names[:2], val=[], withheld=names[1:3])


def test_named_theorems_are_withheld_whatever_the_fraction() -> None:
    """``withhold`` (whole families of exercises) withholds every named theorem outside validation, with no
    fraction; the validation side does not move and names not among the pairs are ignored."""
    pairs = make_pairs(60)
    names = sorted({p.theorem for p in pairs})
    plain = split_theorems(names, seed=4, val_fraction=0.2)
    family = names[10:30]
    split = split_theorems(names, seed=4, val_fraction=0.2, withhold=[*family, "not_a_theorem"])
    assert set(split.withheld) == set(family) - set(plain.val)
    assert split.val == plain.val and set(split.train) == set(plain.train) - set(family)
    assert {p.theorem for p in split.trainable(pairs)}.isdisjoint(split.withheld)
