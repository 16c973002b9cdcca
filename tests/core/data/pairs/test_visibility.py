"""What a proof step names that its state does not show (`burnqed_core.data.pairs.visibility`)."""

from __future__ import annotations

import random

import polars as pl
import pytest

from burnqed_core.data.pairs.visibility import declared_names, family_rows, format_rows, main, unseen_names
from burnqed_core.data.synthetic.catalogue import BY_NAME
from burnqed_core.data.synthetic.generate_sets import SEED, family_theorems
from burnqed_core.data.synthetic.renaming import declared, identifiers
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.tracing import trace_theorems
from burnqed_core.records import TacticPair, Theorem

PREAMBLE = """\
namespace BqT
inductive Ord3 : List Nat → Prop where
  | none : Ord3 []
  | one : (x : Nat) → Ord3 [x]
  | link : (x y : Nat) → (ys : List Nat) → x ≤ y → Ord3 (y :: ys) → Ord3 (x :: y :: ys)

structure Box where
  mk ::
  lo : Nat
  hi : Nat

class Sz (α : Type) where
  sz : α → Nat

instance instSzBox : Sz Box where
  sz b := b.lo + b.hi

def bump (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (x + k) :: bump k xs
end BqT
open BqT"""


def test_declared_names_are_declarations_not_pattern_variables() -> None:
    names = declared_names(PREAMBLE)
    assert {"Ord3", "none", "one", "link", "Box", "mk", "lo", "hi", "Sz", "sz", "instSzBox", "bump"} <= names
    assert not names & {"x", "xs", "ys", "k", "b", "where", "BqT", "Nat", "List"}


@pytest.mark.parametrize(("state", "tactic", "unseen"), [
    ("xs : List Nat\nh : Ord3 xs\n⊢ Ord3 (bump 1 xs)", "cases h with\n| none => exact Ord3.none", ["none"]),
    ("h : Ord3 [1, 2]\n⊢ Ord3 [2]", "exact Ord3.link _ _ _ (by omega) h", ["link"]),
    # after `induction h` the state prints the case tags: copying one is learnable
    ("case link\nx y : Nat\n⊢ Ord3 (bump 1 (x :: y :: ys))", "exact Ord3.link _ _ _ (by omega) ih", []),
    ("⊢ Ord3 [1, 2]", "constructor", []),
    ("h : 1 ≤ 2\n⊢ 1 ≤ 2", "exact Nat.le_refl _", []),        # Lean's own names are not counted
    ("xs : List Nat\n⊢ bump 0 xs = xs", "simp only [bump]", []),  # printed in the goal
    ("b : Box\n⊢ Sz.sz b = b.lo + b.hi", "simp only [instSzBox]", ["instSzBox"]),
])
def test_unseen_names(state: str, tactic: str, unseen: list[str]) -> None:
    assert unseen_names(PREAMBLE, state, tactic) == unseen


def _thm(name: str, family: str) -> Theorem:
    return Theorem(name=name, statement="(xs : List Nat) (h : Ord3 xs) : Ord3 (bump 1 xs)", preamble=PREAMBLE,
                   split="train", family=family, proof=["sorry"])


def test_family_rows_count_each_step_once_and_skip_other_theorems(tmp_path) -> None:
    thms = [_thm("a_1", "fa"), _thm("b_1", "fb")]
    named = {"theorem": "a_1", "state_before": "h : Ord3 xs\n⊢ Ord3 (bump 1 xs)", "tactic": "exact Ord3.one _"}
    free = TacticPair(theorem="a_1", state_before="⊢ Ord3 [1]", tactic="constructor", state_after="", depth=0)
    pairs = [named, named, free, {**named, "theorem": "b_1", "tactic": "omega"}, {**named, "theorem": "zz_9"}]
    rows = {r.family: r for r in family_rows(pairs, thms)}
    assert set(rows) == {"fa", "fb"}
    assert (rows["fa"].steps, rows["fa"].unseen_steps, rows["fa"].examples) == (2, 1, ("one",))
    assert (rows["fb"].steps, rows["fb"].unseen_steps) == (1, 0)
    table = format_rows(list(rows.values()))
    assert "| `fa` | 2 | 1 (50%) | `one` |" in table and table.splitlines()[-1] == "| all | 3 | 1 (33%) | |"
    assert "`fb`" not in format_rows(list(rows.values()), only_unseen=True)
    # the command reads a real Parquet file of pairs and a theorem file
    path, thm_file = tmp_path / "pairs.parquet", tmp_path / "t.jsonl"
    pl.DataFrame([p if isinstance(p, dict) else p.model_dump() for p in pairs[:3]]).select(
        "theorem", "state_before", "tactic").write_parquet(path)
    thm_file.write_text("".join(t.model_dump_json() + "\n" for t in thms), encoding="utf-8")
    assert main([str(path), "-t", str(thm_file)]) == 0


@pytest.mark.lean
async def test_predicate_proofs_name_only_what_lean_prints(lean_pool: LeanPool) -> None:
    """On Lean's own states: a traced `tsort` proof names no constructor its state does not show, and
    the check does flag the older style (`cases h with | ctor`) on the same theorem."""
    thm = next(t for t in family_theorems(BY_NAME["tsort"]) if t.name == "tsort_tail")
    old = thm.model_copy(update={"name": "tsort_tail_old", "proof": [
        "intro h", f"cases h with\n| {_ctor(thm, 1)} => exact {_pred(thm)}.{_ctor(thm, 0)}\n"
                   f"| {_ctor(thm, 2)} _ _ _ _ h' => exact h'"]})
    pairs, report = await trace_theorems(lean_pool, [thm, old])
    assert report.failures == [] and {p.theorem for p in pairs} == {thm.name, old.name}
    rows = {r.family: r for r in family_rows([p for p in pairs if p.theorem == thm.name], [thm])}
    assert rows["tsort"].unseen_steps == 0 and rows["tsort"].steps == len(thm.proof)
    old_rows = family_rows([p for p in pairs if p.theorem == old.name], [old])
    assert old_rows[0].unseen_steps == 1 and set(old_rows[0].examples) == {_ctor(thm, 0), _ctor(thm, 1), _ctor(thm, 2)}


def _pred(t: Theorem) -> str:
    return t.preamble.split("inductive ", 1)[1].split()[0]


def _ctor(t: Theorem, i: int) -> str:
    block = t.preamble.split("inductive ", 1)[1]
    return [ln.split("|", 1)[1].split(":")[0].strip() for ln in block.splitlines() if ln.strip().startswith("|")][i]


# The constructors a rewritten family's proofs may still name, each one printed by the state it is named in
# (a `case` tag after `induction h`, `Bag.bag` in the goal after `cases b`, `Pt.mk` in `show Move _ (Pt.mk 2 3)`
# that states a `north` move's target) or one `constructor` cannot choose (a right branch `goR` of a tree literal):
# what `burnqed lean trace` + `unseen_names` measured on 2026-11-27.
NAMED: dict[str, set[str]] = {"tsort": {"empty", "single", "link"}, "treach": {"mk"}, "tocc": {"goL", "goR"},
                              "tpoly": {"bag"}}


@pytest.mark.parametrize("family", ["tmul", "tsort", "treach", "tred", "tocc", "telem", "tsub", "tle", "tclass",
                                    "tpoly", "tfun", "tiff", "tstruct", "twf"])
def test_rewritten_families_name_no_other_constructor(family: str) -> None:
    """A static guard for the state-visible style (the Lean check above is per theorem and slow): the proofs of
    the families rewritten on 2026-11-27 name no constructor of their own types beyond `NAMED`."""
    insts = BY_NAME[family].generate(random.Random(f"{SEED}:{family}"))
    named = {n for i in insts for s in i.proof for n in identifiers(s)
             if n in declared(i.preamble, i.statement).constructors}
    assert named <= NAMED.get(family, set()), named
    # and the guard bites: the style the families had before names constructors
    if family == "tmul":
        old = insts[0].__class__(insts[0].key, insts[0].statement, ("intro h", "induction h with\n| base => rfl\n"
                                                                     "| step m _ ih => omega"), insts[0].preamble)
        assert {n for s in old.proof for n in identifiers(s)} & set(declared(old.preamble, old.statement).constructors)
