"""Alpha-renamed training copies: consistent, whole-identifier, deterministic, training side only."""

from __future__ import annotations

import random

import polars as pl

from burnqed_core.data.pairs.alpha_rename import augment_frame, hypothesis_names, rename, renamed_copy
from burnqed_core.data.pairs.prepare import prepare_pairs
from burnqed_core.records import TacticPair


def test_hypothesis_names_skip_goal_case_and_inaccessible_names() -> None:
    state = "case succ\nxs ys : List Nat\nh : xs.length = 2\na✝ : Nat\n⊢ ∀ (z : Nat), f xs = z"
    assert hypothesis_names(state) == ["xs", "ys", "h"]


def test_rename_whole_identifiers_only() -> None:
    out = rename(["xs xs' xs.length List.xs axs xs₁ (xs)"], {"xs": "q"})
    assert out == ["q xs' q.length List.xs axs xs₁ (q)"]


def test_copy_renames_state_tactic_and_result_consistently() -> None:
    sb, tac, sa = "n : Nat\nh : n > 0\n⊢ double n = n + n", "induction n", "case zero\nh : 0 > 0\n⊢ double 0 = 0"
    c = renamed_copy(sb, tac, sa, random.Random(1))
    assert c is not None
    new_sb, new_tac, new_sa = c
    new_n = new_tac.split()[1]
    assert new_n != "n" and new_n in hypothesis_names(new_sb)
    assert new_sb.count(new_n) >= 3 and "double" in new_sb  # definitions keep their names
    assert "h" not in hypothesis_names(new_sb)
    assert new_sa.startswith("case zero")
    # a fresh name never collides with a name already in the texts
    assert new_n not in {"double", "Nat", "case", "zero"}


def test_no_hypotheses_no_copy_and_determinism() -> None:
    assert renamed_copy("⊢ 1 + 1 = 2", "decide", "", random.Random(0)) is None
    df = pl.DataFrame([{"theorem": "t", "state_before": "a b : Nat\n⊢ a + b = b + a", "tactic": "omega",
                        "state_after": "", "depth": 0, "source": "traced"}])
    one, two = augment_frame(df, 3, seed=7), augment_frame(df, 3, seed=7)
    assert one.equals(two) and one.height == 4
    assert one["source"].to_list()[1:] == ["traced+alpha"] * 3
    assert augment_frame(df, 3, seed=8)["state_before"].to_list() != one["state_before"].to_list()


def test_prepare_pairs_renames_the_training_side_only() -> None:
    pairs = [TacticPair(theorem=f"t{i}", state_before=f"x{i} : Nat\n⊢ f x{i} = x{i}", tactic=f"induction x{i}",
                        state_after="", depth=0, source="traced") for i in range(10)]
    plain = prepare_pairs(pairs, 0.2, 0, 512, val_theorems={"t0", "t1"})
    aug = prepare_pairs(pairs, 0.2, 0, 512, val_theorems={"t0", "t1"}, alpha_copies=2)
    assert aug.val.equals(plain.val)
    assert aug.stats.alpha_renamed_pairs == 16 and aug.train.height == plain.train.height + 16
    assert set(aug.train["theorem"]) == set(plain.train["theorem"])
    for sb, tac in zip(aug.train["state_before"], aug.train["tactic"], strict=True):
        assert tac.split()[1] == hypothesis_names(sb)[0]  # the step still names the goal's variable
