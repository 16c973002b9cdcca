"""Issue 65: a found step that names a library premise of a held-out module family (core:dev, core:test) is never
trained on: the tactic_pairs stage leaves it out and counts it (real Parquet trajectories, no Lean)."""

from __future__ import annotations

import json
from pathlib import Path

from burnqed_core.config import load_profile
from burnqed_core.data.pairs.prepare import TheoremSplit
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.install import lean_identity
from burnqed_core.loop.stages.tactic_pairs import Settings, held_out_names, names_any, tactic_pairs
from burnqed_core.premises.library import LIBRARY_RULES, LibraryBuild, write_library
from burnqed_core.premises.records import Premise
from burnqed_core.record_io import read_records
from burnqed_core.records import TacticPair, TrajectoryRecord
from burnqed_core.search.engine import SearchOutcome
from burnqed_core.search.trajectories import TrajectoryWriter
from burnqed_core.trajectory_io import SearchResult


def proof(theorem: str, tactic: str) -> SearchOutcome:
    recs = [TrajectoryRecord(theorem=theorem, iteration=0, node_id=0, parent_id=-1, state="⊢ goal", goal="⊢ goal",
                             tactic="", depth=0, logprob=0.0, cum_logprob=0.0, label="positive", proved=True),
            TrajectoryRecord(theorem=theorem, iteration=0, node_id=1, parent_id=0, state="", goal="⊢ goal",
                             tactic=tactic, depth=1, logprob=-1.0, cum_logprob=-1.0, label="positive",
                             terminal=True, proved=True, source="premise")]
    return SearchOutcome(result=SearchResult(theorem=theorem, proved=True, stop="proved", nodes=2,
                                             proof=[tactic], proof_sources=["premise"]), records=recs)


def test_steps_naming_a_held_out_premise_are_left_out(tmp_path: Path) -> None:
    prof = load_profile("core", environ={})
    test_thm = load_theorems("core:test")[0]
    pool = load_theorems("core:pool")[:2]
    premises = [Premise(name="List.fine_lemma", type="[] = []", module="Init.Data.List.Basic"),
                Premise(name="Held.out_lemma", type="1 = 1", module=test_thm.module)]
    folder = write_library(tmp_path / "premise_index", premises, {p.module: [] for p in premises},
                           LibraryBuild(key="k", lean=lean_identity(), rules=LIBRARY_RULES.model_dump(mode="json"),
                                        premises=2, modules=2, modules_read=2))
    held = held_out_names(Settings.of(prof), folder)
    assert held == frozenset({"Held.out_lemma"})
    assert names_any("rw [Held.out_lemma] at h", held) and not names_any("rw [List.fine_lemma]", held)
    w = TrajectoryWriter(tmp_path / "iter0" / "search.traj", 10)
    w.add(proof(pool[0].name, "rw [List.fine_lemma]"))
    w.add(proof(pool[1].name, "simp only [Held.out_lemma]"))
    w.close()
    base = [TacticPair(theorem=f"c{i}", state_before=f"⊢ s{i}", tactic="rfl", state_after="", depth=0)
            for i in range(6)]
    split = TheoremSplit(seed=0, val_fraction=0.2, train=[f"c{i}" for i in range(5)], val=["c5"])
    out = tmp_path / "iter1"
    tactic_pairs(Settings.of(prof), 1, base, [tmp_path / "iter0" / "search.traj"], out, split=split, held_out=held)
    train = read_records(out / "train.parquet", TacticPair)
    tactics = {p.tactic for p in train}
    assert "rw [List.fine_lemma]" in tactics and not any("Held.out_lemma" in t for t in tactics)
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["held_out_steps_excluded"] == 1
