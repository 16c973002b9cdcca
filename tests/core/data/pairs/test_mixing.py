"""Iteration mixing: positive trajectory steps, subsample and upsample ratios."""

from __future__ import annotations

import polars as pl
import pytest

from burnqed_core.data.pairs.mixing import mix_iteration, positive_steps, upsampled_rows
from burnqed_core.data.pairs.prepare import TheoremSplit, is_val_theorem, prepare_pairs
from burnqed_core.records import TrajectoryRecord
from tests.core.data.pairs.test_prepare import make_pairs


def node(theorem: str, node_id: int, parent: int, state: str, tactic: str, depth: int, label: str = "unknown",
         iteration: int = 0) -> TrajectoryRecord:
    return TrajectoryRecord(
        theorem=theorem, iteration=iteration, node_id=node_id, parent_id=parent, state=state,
        goal="⊢ root", tactic=tactic, depth=depth, logprob=-0.5, cum_logprob=-0.5 * depth, label=label,  # type: ignore[arg-type]
        terminal=state == "", proved=True,
    )


def search_tree(theorem: str, iteration: int = 0) -> list[TrajectoryRecord]:
    """root -(intro)-> a -(simp)-> proved, plus a failed sibling b."""
    return [
        node(theorem, 0, -1, f"⊢ {theorem} root", "", 0, "positive", iteration),
        node(theorem, 1, 0, f"h : P\n⊢ {theorem} a", "intro h", 1, "positive", iteration),
        node(theorem, 2, 0, f"⊢ {theorem} b", "constructor", 1, "negative", iteration),
        node(theorem, 3, 1, "", "simp [h]", 2, "positive", iteration),
    ]


def test_positive_steps() -> None:
    recs = search_tree("t1") + search_tree("t2")
    steps = positive_steps(recs)
    assert [(s.theorem, s.state_before, s.tactic, s.state_after, s.depth) for s in steps] == [
        ("t1", "⊢ t1 root", "intro h", "h : P\n⊢ t1 a", 0),
        ("t1", "h : P\n⊢ t1 a", "simp [h]", "", 1),
        ("t2", "⊢ t2 root", "intro h", "h : P\n⊢ t2 a", 0),
        ("t2", "h : P\n⊢ t2 a", "simp [h]", "", 1),
    ]
    assert steps[0].source == "trajectory:iter_0"
    # two runs over the same theorem concatenated (normal then noisy search): each step keeps its own parent
    noisy = [r.model_copy(update={"state": r.state.replace("t2", "t2 noisy")}) for r in search_tree("t2")]
    steps = positive_steps(search_tree("t1") + search_tree("t2") + noisy)
    assert [s.state_before for s in steps][-2:] == ["⊢ t2 noisy root", "h : P\n⊢ t2 noisy a"]
    assert [s.state_before for s in steps][2:4] == ["⊢ t2 root", "h : P\n⊢ t2 a"]
    # an unsafe tactic or a missing parent drops the step
    recs = search_tree("t3")
    recs[3] = recs[3].model_copy(update={"tactic": "sorry"})
    recs.append(node("t3", 9, 77, "⊢ x", "rfl", 3, "positive"))
    assert [s.tactic for s in positive_steps(recs)] == ["intro h"]


def test_mix_ratios() -> None:
    base = prepare_pairs(make_pairs(400), val_fraction=0.1, seed=0, max_tokens=10_000)
    theorems = [f"searched_{i}" for i in range(60)]
    steps = [s for t in theorems for s in positive_steps(search_tree(t))]
    steps += steps[:5]  # repeated steps count once
    mix = mix_iteration(base, steps, base_subsample=300, trajectory_upsample=10, seed=3)
    st = mix.stats
    val_thms = {t for t in theorems if is_val_theorem(t, base.stats.seed, base.stats.val_fraction)}
    assert 0 < len(val_thms) < len(theorems)
    assert st.trajectory_steps == 120
    assert st.trajectory_steps_val == 2 * len(val_thms)
    assert st.trajectory_steps_train == 120 - 2 * len(val_thms)
    assert st.base_train_used == 300 and st.base_train_available == base.train.height
    assert st.trajectory_rows_train == 10 * st.trajectory_steps_train
    assert mix.train.height == 300 + st.trajectory_rows_train == st.train_rows
    assert st.trajectory_fraction == pytest.approx(st.trajectory_rows_train / mix.train.height)
    # each training step appears exactly `upsample` times; validation steps once and never in train
    traj = mix.train.filter(pl.col("source").str.starts_with("trajectory"))
    counts = traj.group_by(["state_before", "tactic"]).len()["len"].unique().to_list()
    assert counts == [10]
    assert not set(traj["theorem"]) & val_thms
    val_traj = mix.val.filter(pl.col("source").str.starts_with("trajectory"))
    assert set(val_traj["theorem"]) == val_thms and val_traj.height == 2 * len(val_thms)
    assert mix.val.height == base.val.height + val_traj.height
    # the base part is a subsample of base.train; seeded
    base_part = mix.train.filter(~pl.col("source").str.starts_with("trajectory"))
    assert base_part.join(base.train, on=list(base.train.columns), how="anti").height == 0
    again = mix_iteration(base, steps, 300, 10, seed=3)
    assert again.train.equals(mix.train)
    other = mix_iteration(base, steps, 300, 10, seed=4)
    assert not other.train.equals(mix.train)


def test_mix_small_base_and_no_steps() -> None:
    base = prepare_pairs(make_pairs(30), 0.1, 0, 10_000)
    mix = mix_iteration(base, [], base_subsample=10_000, trajectory_upsample=10, seed=0)
    assert mix.stats.base_train_used == base.train.height == mix.train.height
    assert mix.stats.trajectory_fraction == 0.0
    with pytest.raises(ValueError):
        mix_iteration(base, [], base_subsample=-1, trajectory_upsample=1, seed=0)


def test_share_cap_keeps_the_base_data() -> None:
    """Many found proofs x10 would outweigh the base set: the cap lowers the upsample factor (fractional:
    every step floor(f) times, a seeded subset once more) so trajectory rows are at most the share."""
    base = prepare_pairs(make_pairs(200), val_fraction=0.1, seed=0, max_tokens=10_000)
    theorems = [f"searched_{i}" for i in range(80)]
    steps = [s for t in theorems for s in positive_steps(search_tree(t))]
    uncapped = mix_iteration(base, steps, base_subsample=10_000, trajectory_upsample=10, seed=1)
    assert uncapped.stats.trajectory_fraction > 0.5  # what the cap is for: search steps drown the base data
    mix = mix_iteration(base, steps, base_subsample=10_000, trajectory_upsample=10, seed=1, max_share=0.25)
    st = mix.stats
    base_rows, n = st.base_train_used, st.trajectory_steps_train
    assert base_rows == base.train.height  # every base pair kept
    assert st.share_capped and st.trajectory_max_share == 0.25
    assert st.trajectory_rows_train == base_rows // 3  # 0.25 / 0.75 of the base rows, rounded down
    assert st.trajectory_fraction <= 0.25 and st.trajectory_fraction == pytest.approx(0.25, abs=0.01)
    assert st.effective_upsample == pytest.approx(st.trajectory_rows_train / n)
    assert 1 < st.effective_upsample < 10
    traj = mix.train.filter(pl.col("source").str.starts_with("trajectory"))
    counts = traj.group_by(["state_before", "tactic"]).len()["len"].to_list()
    full = st.trajectory_rows_train // n
    assert sorted(set(counts)) == [full, full + 1] and len(counts) == n  # every step, as evenly as possible
    assert counts.count(full + 1) == st.trajectory_rows_train - full * n
    again = mix_iteration(base, steps, 10_000, 10, seed=1, max_share=0.25)
    assert again.train.equals(mix.train)  # deterministic
    # under the cap nothing changes: the full factor
    few = steps[:6]
    small = mix_iteration(base, few, 10_000, 10, seed=1, max_share=0.25)
    assert not small.stats.share_capped and small.stats.effective_upsample == 10


def test_share_cap_never_drops_a_found_step() -> None:
    base = prepare_pairs(make_pairs(12), val_fraction=0.1, seed=0, max_tokens=10_000)
    steps = [s for t in (f"searched_{i}" for i in range(40)) for s in positive_steps(search_tree(t))]
    mix = mix_iteration(base, steps, base_subsample=10_000, trajectory_upsample=10, seed=0, max_share=0.1)
    st = mix.stats
    assert st.trajectory_rows_train == st.trajectory_steps_train  # each step once, though that passes the cap
    assert st.effective_upsample == 1.0 and st.trajectory_fraction > 0.1
    assert upsampled_rows(steps=10, base_rows=90, upsample=10, max_share=0.1) == 10
    assert upsampled_rows(steps=10, base_rows=900, upsample=10, max_share=0.1) == 100
    assert upsampled_rows(steps=10, base_rows=900, upsample=10, max_share=1.0) == 100
    assert upsampled_rows(steps=10, base_rows=0, upsample=0, max_share=0.5) == 0
    with pytest.raises(ValueError):
        upsampled_rows(10, 10, 10, 0.0)


def test_steps_follow_the_saved_split() -> None:
    """A theorem's steps go where the split drawn before pre-training put it, whatever its hash says."""
    base = prepare_pairs(make_pairs(40), val_fraction=0.1, seed=0, max_tokens=10_000)
    names = [f"searched_{i}" for i in range(20)]
    by_hash = {n for n in names if is_val_theorem(n, 0, 0.1)}
    chosen_val = sorted(set(names[:5]) - by_hash)  # val in the split, train by the hash rule
    split = TheoremSplit(seed=0, val_fraction=0.1, train=[n for n in names if n not in chosen_val], val=chosen_val)
    steps = [s for t in names for s in positive_steps(search_tree(t))]
    mix = mix_iteration(base, steps, 10_000, 3, seed=0, split=split)
    val_traj = mix.val.filter(pl.col("source").str.starts_with("trajectory"))
    assert set(val_traj["theorem"]) == set(chosen_val)
    assert not set(mix.train["theorem"]) & set(chosen_val)


def test_a_premise_step_found_on_a_pool_theorem_is_trained_on_never_validation() -> None:
    """Issue 65: a step the search found with a retrieved premise, on a library theorem the base split never saw,
    is in the next iteration's training data (the automation-only steps left out, the premise step kept) and
    never in validation, whatever its name hashes to."""
    pairs = make_pairs(40)
    split = TheoremSplit(seed=0, val_fraction=0.5, train=sorted({p.theorem for p in pairs})[:20],
                         val=sorted({p.theorem for p in pairs})[20:])
    base = prepare_pairs(pairs, val_fraction=0.5, seed=0, max_tokens=10_000)
    steps = []
    for i in range(30):
        tree = search_tree(f"Pool.lemma_{i}", iteration=0)
        tree[1] = tree[1].model_copy(update={"tactic": "rw [List.map_append]", "source": "premise"})
        tree[3] = tree[3].model_copy(update={"tactic": "simp_all", "source": "automation"})
        steps += positive_steps(tree, source="trajectory", exclude_sources={"automation"})
    assert len(steps) == 30 and all(s.tactic == "rw [List.map_append]" for s in steps)
    mix = mix_iteration(base, steps, base_subsample=10_000, trajectory_upsample=2, seed=0, split=split)
    trained = set(mix.train.filter(pl.col("tactic") == "rw [List.map_append]")["theorem"])
    assert trained == {f"Pool.lemma_{i}" for i in range(30)}
    assert mix.val.filter(pl.col("theorem").str.starts_with("Pool.")).height == 0
    assert mix.stats.trajectory_steps_val == 0
