"""Hindsight positives (``ebm.hindsight``): the known proof of a searched theorem the search did not prove.

Real `TacticPair`s and `TrajectoryRecord`s, real Parquet and split files for the stage's inputs, a real head
trained on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import Profile, load_profile
from burnqed_core.data.pairs.prepare import SPLIT_FILE, TheoremSplit, write_split
from burnqed_core.ebm.data import build_data
from burnqed_core.ebm.embeddings import CacheMeta
from burnqed_core.ebm.hindsight import known_paths, path_texts
from burnqed_core.ebm.train import train_ebm
from burnqed_core.errors import DataError
from burnqed_core.loop import corpus
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.spec import StageContext
from burnqed_core.loop.stages.ebm import EBM
from burnqed_core.loop.stages.shared import known_proof_states
from burnqed_core.record_io import write_parquet
from burnqed_core.records import TacticPair, TrajectoryRecord
from tests.core.ebm_toy import separable_embeddings, toy_records
from tests.core.ebm_toy import toy_config as cfg

META = CacheMeta(fingerprint="test", pooling="last_l2")


def proof(theorem: str, states: list[str], tactics: list[str] | None = None) -> list[TacticPair]:
    """The pairs of a proof through ``states`` (root first) that ends in no goals."""
    after = [*states[1:], ""]
    tactics = tactics or [f"t{k}" for k in range(len(states))]
    return [TacticPair(theorem=theorem, state_before=b, tactic=tac, state_after=a, depth=k)
            for k, (b, tac, a) in enumerate(zip(states, tactics, after, strict=True))]


def toy_known(n_theorems: int, depth: int = 3) -> dict[str, list[str]]:
    """The known proofs of `toy_records`' theorems: root, then its 'good' states."""
    pairs = [p for t in range(n_theorems)
             for p in proof(f"thm_{t}", [f"n{t} : Nat\n⊢ goal {t}", *(f"⊢ good {t} {d}" for d in range(1, depth))])]
    return known_paths(pairs, {f"thm_{t}" for t in range(n_theorems)})


def test_known_paths_keep_whole_chained_proofs_of_allowed_theorems() -> None:
    good = proof("a", ["⊢ A", "⊢ A1", "⊢ A2"])
    broken = proof("b", ["⊢ B", "⊢ B1"])
    broken[0] = broken[0].model_copy(update={"state_after": "⊢ elsewhere"})
    gap = [p for p in proof("c", ["⊢ C", "⊢ C1", "⊢ C2"]) if p.depth != 1]
    unfinished = proof("d", ["⊢ D", "⊢ D1"])
    unfinished[-1] = unfinished[-1].model_copy(update={"state_after": "⊢ D2"})
    other = proof("e", ["⊢ E", "⊢ E1"])
    shuffled = list(reversed(good))
    paths = known_paths([*shuffled, *broken, *gap, *unfinished, *other], {"a", "b", "c", "d"})
    assert paths == {"a": ["⊢ A", "⊢ A1", "⊢ A2"]}
    assert path_texts({"a": ["⊢ A", "⊢ A1"], "x": ["⊢ A1", "⊢ X"]}, ["a", "x", "missing"]) == ["⊢ A", "⊢ A1", "⊢ X"]


def test_unproved_searches_gain_their_known_proofs_as_positives() -> None:
    records = toy_records(n_theorems=6, depth=3, siblings=2)        # thm_2 and thm_5 unproved
    plain = build_data(records)
    data = build_data(records, toy_known(6))
    assert plain.hindsight == 0 and {p.theorem for p in plain.positives} == {"thm_0", "thm_1", "thm_3", "thm_4"}
    extra = [p for p in data.positives if p.theorem in ("thm_2", "thm_5")]
    assert data.hindsight == len(extra) == 4                        # depths 1 and 2 of each
    assert len(data.positives) == len(plain.positives) + 4          # proved searches: unchanged
    for p in extra:
        assert data.texts[p.state] == f"⊢ good {p.theorem[4:]} {p.depth}"
        # the failed siblings: the search's children of the known-path state before it, off the path
        assert sorted(data.texts[i] for i in p.siblings) == [f"⊢ bad {p.theorem[4:]} {p.depth} {s}" for s in (0, 1)]
        assert p.off_path and all("bad" in data.texts[i] for i in p.off_path)
        assert not set(p.siblings) & set(p.off_path)
        assert p.state in data.positive_rows and p.state not in data.negatives
    assert all(i in data.negatives for p in extra for i in p.siblings)


def test_a_known_proof_leaving_the_search_tree_and_a_foreign_root() -> None:
    root = "x : Nat\n⊢ P x"

    def node(nid: int, parent: int, state: str, depth: int) -> TrajectoryRecord:
        return TrajectoryRecord(theorem="t", iteration=0, node_id=nid, parent_id=parent, state=state, goal=root,
                                tactic="" if parent < 0 else "tac", depth=depth, logprob=-1.0, cum_logprob=-1.0)

    search = [node(0, -1, root, 0), node(1, 0, "⊢ wrong 1", 1), node(2, 0, "⊢ known 1", 1),
              node(3, 1, "⊢ wrong 2", 2)]
    known = {"t": [root, "⊢ known 1", "⊢ known 2"]}
    data = build_data(search, known)
    by_depth = {p.depth: p for p in data.positives}
    assert data.hindsight == 2 and set(by_depth) == {1, 2}
    assert [data.texts[i] for i in by_depth[1].siblings] == ["⊢ wrong 1"]
    assert [data.texts[i] for i in by_depth[1].off_path] == ["⊢ wrong 2"]
    # the search reached "known 1" but never expanded it: no siblings at depth 2, the search's states off-path
    assert by_depth[2].siblings == () and sorted(data.texts[i] for i in by_depth[2].off_path) == ["⊢ wrong 1",
                                                                                                   "⊢ wrong 2"]
    # a known-path state the search labelled a dead end is a positive all the same
    dead = [r.model_copy(update={"label": "negative"}) if r.node_id == 2 else r for r in search]
    again = build_data(dead, known)
    assert again.hindsight == 2 and again.texts.index("⊢ known 1") in again.positive_rows
    assert again.texts.index("⊢ known 1") not in again.negatives
    # a known proof of another statement (the root differs) adds nothing
    assert build_data(search, {"t": ["x : Nat\n⊢ Q x", "⊢ known 1"]}).hindsight == 0
    # a search with no state besides the root has nothing to contrast a positive with
    assert build_data(search[:1], known).hindsight == 0


def test_a_head_trains_on_hindsight_positives_alone(tmp_path: Path) -> None:
    # every search failed: without known proofs there is nothing to train on
    records = [r.model_copy(update={"proved": False, "label": "negative" if "bad" in r.state else "unknown"})
               for r in toy_records(n_theorems=40) if r.state]
    with pytest.raises(DataError):
        train_ebm(separable_embeddings(build_data(records)), build_data(records), cfg(), tmp_path / "none", META)
    data = build_data(records, toy_known(40))
    rep = train_ebm(separable_embeddings(data), data, cfg(), tmp_path / "ebm", META)
    assert rep.hindsight_positives == data.hindsight == 80 == rep.train_positives + rep.val_positives
    assert "from known proofs" in rep.summary()
    assert rep.val is not None and rep.val.rank1.rank1 is not None and rep.val.rank1.rank1 > 0.9


def test_the_stage_reads_known_proofs_of_the_training_side_only(tmp_path: Path) -> None:
    traced, model = tmp_path / "traced", tmp_path / "model"
    traced.mkdir()
    model.mkdir()
    pairs = [*proof("train_a", ["⊢ A", "⊢ A1"]), *proof("val_b", ["⊢ B", "⊢ B1"]),
             *proof("exercise_c", ["⊢ C", "⊢ C1"])]
    write_parquet(pairs, traced / corpus.PAIRS_FILE)
    write_split(TheoremSplit(seed=0, val_fraction=0.3, train=["train_a"], val=["val_b"], withheld=["exercise_c"],
                             withhold_fraction=0.3), model / SPLIT_FILE)
    profile = load_profile("ebm")

    def ctx(p: Profile) -> StageContext:
        return StageContext(spec=EBM, settings=EBM.settings.of(p), n=1, layout=BaseLayout(root=tmp_path / "work"),
                            inputs={"base_tactic_pairs": traced, "base_model": model}, previous=None, earlier=[],
                            out=tmp_path / "out")

    assert profile.ebm.hindsight is False and known_proof_states(ctx(profile), profile.ebm.hindsight) is None
    on = profile.model_copy(update={"ebm": profile.ebm.model_copy(update={"hindsight": True})})
    assert known_proof_states(ctx(on), on.ebm.hindsight) == {"train_a": ["⊢ A", "⊢ A1"]}


def test_stages_and_cli_encode_and_train_on_known_proofs(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Unproved searches only: no EBM without known proofs (test_scorer); with them, the embeddings stage encodes
    the known-path states and the ebm stage trains on them, as `burnqed ebm encode/train --known` do."""
    import asyncio

    from typer.testing import CliRunner

    from burnqed_core.cli import app
    from burnqed_core.ebm.embeddings import EmbeddingCache, cache_dir_for, state_key
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.loop.stages import ebm as ebm_stage
    from burnqed_core.loop.stages import embeddings as embeddings_stage
    from burnqed_core.policy.local import LocalPolicy

    unproved = [r for r in toy_records(n_theorems=12) if not r.proved]        # thm_2, thm_5, thm_8, thm_11
    traj = write_parquet(unproved, tmp_path / "traj.parquet", TrajectoryRecord)
    pairs = [p for t in range(12)
             for p in proof(f"thm_{t}", [f"n{t} : Nat\n⊢ goal {t}", f"⊢ good {t} 1",
                                         f"⊢ good {t} 2"])]
    pairs_file = write_parquet(pairs, tmp_path / "pairs.parquet", TacticPair)
    known = known_paths(pairs, {p.theorem for p in pairs})
    profile = load_profile("tiny", overrides={"ebm.steps": 20, "ebm.hidden_dims": [32, 16], "ebm.batch_size": 8,
                                              "ebm.eval_every": 10, "ebm.save_every": 10})
    emb = asyncio.run(embeddings_stage.embeddings(profile, 1, LocalPolicy(tiny_model_dir), [traj], tmp_path / "emb",
                                        progress=False, known=known))
    keys = EmbeddingCache.load(cache_dir_for(tmp_path / "emb")).keys()
    assert state_key("⊢ good 2 1") in keys and state_key("⊢ good 0 1") not in keys   # thm_0 was never searched
    assert emb.metrics["separation"]["positives"] == 8
    res = ebm_stage.ebm(profile, 1, tmp_path / "emb", [traj], tmp_path / "ebm", progress=False, known=known)
    assert res.metrics["trained"] and res.metrics["hindsight_positives"] == 8 and has_ebm(tmp_path / "ebm")

    r = CliRunner()
    base = ["-t", str(traj), "-e", str(tmp_path / "emb2"), "--no-progress"]
    out = r.invoke(app, ["ebm", "encode", "-t", str(traj), "-o", str(tmp_path / "emb2"), "-m", str(tiny_model_dir),
                         "--known", str(pairs_file), "--no-progress"])
    assert out.exit_code == 0, out.output
    out = r.invoke(app, ["ebm", "train", *base, "-o", str(tmp_path / "cli_ebm"), "--steps", "20", "--known",
                         str(pairs_file)])
    assert out.exit_code == 0, out.output
    assert "(8 of all positives from known proofs)" in out.output
    # the training side of a split only: no theorem of it was searched, so nothing to learn from
    write_split(TheoremSplit(seed=0, val_fraction=0.5, train=["thm_0", "thm_1"], val=["thm_2", "thm_5", "thm_8",
                                                                                          "thm_11"]),
                tmp_path / "split.json")
    out = r.invoke(app, ["ebm", "train", *base, "-o", str(tmp_path / "none"), "--known", str(pairs_file),
                         "--split", str(tmp_path / "split.json")])
    assert out.exit_code != 0 and "no positive" in str(out.exception)
    out = r.invoke(app, ["ebm", "train", *base, "-o", str(tmp_path / "none"), "--split", str(tmp_path / "split.json")])
    assert out.exit_code != 0 and "--split only restricts --known" in str(out.exception)


def test_hindsight_that_finds_nothing_to_read_says_so(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Hindsight on, but every failed search was of a theorem without a known proof here (an exercise): the EBM
    trains on the proved searches and the stage says why hindsight added nothing."""
    import asyncio

    from burnqed_core.loop.stages import ebm as ebm_stage
    from burnqed_core.loop.stages import embeddings as embeddings_stage
    from burnqed_core.policy.local import LocalPolicy

    traj = write_parquet(toy_records(n_theorems=9), tmp_path / "traj.parquet", TrajectoryRecord)
    profile = load_profile("tiny", overrides={"ebm.steps": 10, "ebm.hidden_dims": [16], "ebm.batch_size": 8,
                                              "ebm.eval_every": 5, "ebm.save_every": 5, "ebm.hindsight": True})
    asyncio.run(embeddings_stage.embeddings(profile, 1, LocalPolicy(tiny_model_dir), [traj], tmp_path / "emb",
                                            progress=False, known={}))
    res = ebm_stage.ebm(profile, 1, tmp_path / "emb", [traj], tmp_path / "ebm", progress=False, known={})
    assert res.metrics["trained"] and res.metrics["hindsight_positives"] == 0
    assert "data.search_exercises" in res.summary and res.metrics["warnings"]
    plain = load_profile("tiny", overrides={"ebm.steps": 10, "ebm.hidden_dims": [16], "ebm.batch_size": 8,
                                            "ebm.eval_every": 5, "ebm.save_every": 5})
    again = ebm_stage.ebm(plain, 1, tmp_path / "emb", [traj], tmp_path / "ebm2", progress=False)
    assert again.metrics["trained"] and "warnings" not in again.metrics
