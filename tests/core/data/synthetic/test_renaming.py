"""Per-instance renaming of the generated theorem sets (no Lean here: Lean
checks the pools in test_renaming_lean.py and every bundled proof through
``burnqed lean trace``)."""

from __future__ import annotations

import random
import re
from collections import defaultdict

import pytest

from burnqed_core.data.synthetic import generate_sets as gs
from burnqed_core.data.synthetic.catalogue import ALL_FAMILIES
from burnqed_core.data.synthetic.families import FAMILIES, Instance
from burnqed_core.data.synthetic.renaming import (
    CONSTRUCTORS,
    FUNCTIONS,
    TYPES,
    VARIABLES,
    declared,
    identifiers,
    rename_instance,
    rename_text,
)
from burnqed_core.records import Theorem

# What a proof may name besides its own preamble and statement: tactics and
# their keywords, core Lean lemmas and the binders a proof introduces itself.
TACTIC_WORDS = {
    "all_goals", "apply", "assumption", "at", "by", "cases", "constructor", "contradiction", "exact",
    "generalizing", "grind", "have", "induction", "intro", "obtain", "omega", "only", "rcases", "refine", "rfl",
    "right", "rw", "simp", "simp_all", "split", "subst", "using", "with", "inl", "inr", "induct", "_",
    "fun_induction",
}
CORE_NAMES = {"Nat", "List", "Bool", "Or", "add_assoc", "add_mul", "mul_add", "mul_succ", "and_comm",
              "length_filter_le", "mp", "mpr", "symm", "replicate", "replicate_succ", "add_comm"}
PROOF_BINDERS = {"as", "bs", "j", "h", "f", "p", "hp", "hq", "hr", "hx", "hnq", "hpq"}


@pytest.fixture(scope="module")
def built_renamed() -> gs.Generated:
    return gs.build()


@pytest.fixture(scope="module")
def built_fixed() -> gs.Generated:
    return gs.build(rename=False)


@pytest.fixture(scope="module")
def renamed(built_renamed: gs.Generated) -> dict[str, list[Theorem]]:
    return built_renamed.sets


@pytest.fixture(scope="module")
def fixed(built_fixed: gs.Generated) -> dict[str, list[Theorem]]:
    return built_fixed.sets


def _by_family(sets: dict[str, list[Theorem]]) -> dict[str, list[Theorem]]:
    out: dict[str, list[Theorem]] = defaultdict(list)
    for ts in sets.values():
        for t in ts:
            out[t.family].append(t)
    return out


def _defined(t: Theorem) -> tuple[str, ...]:
    d = declared(t.preamble, t.statement)
    return (*d.types, *d.constructors, *d.functions)


def test_rename_text_follows_dotted_names() -> None:
    m = {"add": "plus", "Day": "Hue", "next": "turn", "d": "u", "size": "bulk", "addZero": "prune", "h₁": "hx"}
    assert rename_text("simp [Nat.add_assoc, Nat.mul_add]", m) == "simp [Nat.add_assoc, Nat.mul_add]"
    assert rename_text(".add (.add a b) c", m) == ".plus (.plus a b) c"
    assert rename_text("def Day.next : Day → Day", m) == "def Hue.turn : Hue → Hue"
    assert rename_text("(d : Day) : d.next.next ≠ d", m) == "(u : Hue) : u.turn.turn ≠ u"
    assert rename_text("(xs.map f).size = size t ∧ xs.length = 0", m) == "(xs.map f).bulk = bulk t ∧ xs.length = 0"
    assert rename_text("induction e using addZero.induct", m) == "induction e using prune.induct"
    assert rename_text("(h₁ : d ≤ 3) (h₁' : add_d = d)", m) == "(hx : u ≤ 3) (h₁' : add_d = u)"


def test_declared_names_and_sorts() -> None:
    pre = ("namespace BqX\ninductive Tree where\n  | leaf : Tree\n  | node : Tree → Nat → Tree → Tree\n\n"
           "inductive Day where\n  | mon | tue\n\ndef size : Tree → Nat\n  | .leaf => 0\n  | .node l _ r => 1\n\n"
           "def Day.next : Day → Day\n  | .mon => .tue | .tue => .mon\nend BqX\nopen BqX")
    st = ("(α : Type) (P : α → Prop) (f : Nat → Nat) (t : Tree) (xs : List Nat) (a b : Bool) (p : Prop) "
          "(n : Int) (h : size t = 3 * (n.toNat)) (hp : p) : ∃ k : Nat, ∀ x, P x ∧ f k = n.toNat")
    d = declared(pre, st)
    assert d.namespaces == ("BqX",)
    assert d.types == ("Tree", "Day") and d.constructors == ("leaf", "node", "mon", "tue")
    assert d.functions == ("size", "next")
    assert dict(d.variables) == {"α": "typevar", "P": "pred", "f": "fun", "t": "value", "xs": "list", "a": "bool",
                                 "b": "bool", "p": "prop", "n": "scalar", "h": "hyp", "hp": "hyp", "k": "scalar",
                                 "x": "elem"}


def test_generation_is_deterministic_and_seeded(renamed: dict[str, list[Theorem]]) -> None:
    a = gs.generate()
    assert a == renamed  # two generations in one process (the fixture's is the first)
    other = {t.name: t for t in gs.generate(seed=gs.SEED + 7)["train"]}
    # the same template under another seed gets other names
    dbl = next(t for t in a["train"] if t.name == "dbl_double_eq")
    assert "dbl_double_eq" in other and other["dbl_double_eq"].statement != dbl.statement


def test_renaming_round_trips_to_the_fixed_names(fixed: dict[str, list[Theorem]], built_fixed: gs.Generated,
                                                 built_renamed: gs.Generated) -> None:
    """Renaming is injective and captures nothing: applying the inverse map to a
    renamed instance gives back the family's own text exactly."""
    checked = 0
    for family in ALL_FAMILIES:
        rng = random.Random(f"{gs.SEED}:{family.name}")
        for inst in family.generate(rng):
            new, mapping = rename_instance(inst, family.name, family.split, gs.SEED)
            assert len(set(mapping.values())) == len(mapping), inst.key
            inverse = {v: k for k, v in mapping.items()}
            back = Instance(new.key, rename_text(new.statement, inverse),
                            tuple(rename_text(s, inverse) for s in new.proof), rename_text(new.preamble, inverse))
            assert back == inst, (family.name, inst.key)
            if inst.preamble:
                assert new.preamble != inst.preamble
            checked += 1
    # every instance: the sets' theorems, the benchmark theorems dropped as corpus twins and the corpus theorems
    # dropped as twins of hand-written ones (the same ones with fixed names: twins are twins up to renaming)
    built, renamed = built_fixed, built_renamed
    dropped = {tw.theorem for tw in built.dropped}
    assert dropped == {tw.theorem for tw in renamed.dropped}
    left = {tw.theorem for tw in built.dropped_corpus}
    assert left == {tw.theorem for tw in renamed.dropped_corpus}
    assert checked == sum(len(ts) for ts in fixed.values()) + len(dropped) + len(left)


def test_every_instance_names_things_its_own_way(renamed: dict[str, list[Theorem]]) -> None:
    for fam, ts in _by_family(renamed).items():
        if ts[0].preamble:
            tuples = [_defined(t) for t in ts]
            big = [names for names in tuples if len(names) >= 3]
            assert len(set(big)) == len(big), fam            # no two instances share their names
            first = {names[0] for names in tuples}
            assert len(first) >= len(ts) // 2, fam           # and the names vary, not a few reused
            assert len({t.preamble.splitlines()[0] for t in ts}) == len(ts), fam  # one namespace each
        binders = {m.group(1) for t in ts if (m := re.match(r"\((\S+)", t.statement))}
        if sum(t.statement.startswith("(") for t in ts) >= 6:
            assert len(binders) >= 3, fam                    # variables are renamed too


def test_fixed_names_are_gone(renamed: dict[str, list[Theorem]], fixed: dict[str, list[Theorem]]) -> None:
    """No renamed theorem keeps its family's definition names (``simp [double]``
    cannot be memorised), while ``rename=False`` still has them."""
    fixed_by_name = {t.name: t for ts in fixed.values() for t in ts}
    for ts in renamed.values():
        for t in ts:
            old = fixed_by_name[t.name]
            assert len(t.proof) == len(old.proof) and t.family == old.family
            gone = set(_defined(old)) & set(identifiers(t.preamble + "\n" + t.statement + "\n".join(t.proof)))
            assert not gone, (t.name, gone)
    assert any("simp [double]" in t.proof for t in fixed["train"])


def test_proofs_name_only_their_own_definitions(renamed: dict[str, list[Theorem]]) -> None:
    """A name a proof uses that could be a definition, type or constructor (a name of the pools) is one its own
    theorem declares, or a constructor of core ``List`` (``| nil``, ``| cons x xs ih``)."""
    pool_names = {n for pools in (FUNCTIONS, TYPES, CONSTRUCTORS) for pool in pools.values() for n in pool}
    allowed = TACTIC_WORDS | CORE_NAMES | PROOF_BINDERS
    assert not allowed & pool_names  # so any definition a proof names must be its own
    core_list = {"nil", "cons"}
    for ts in renamed.values():
        for t in ts:
            own = set(identifiers(t.preamble + "\n" + t.statement))
            stray = (set(identifiers("\n".join(t.proof))) - own - allowed - core_list) & pool_names
            assert not stray, (t.name, stray)
    # the first families' proofs use nothing but the words above and their own names
    first = {f.name for f in FAMILIES}
    for ts in renamed.values():
        for t in ts:
            if t.family in first:
                own = set(identifiers(t.preamble + "\n" + t.statement))
                assert not set(identifiers("\n".join(t.proof))) - own - allowed, t.name


def test_corpus_and_benchmark_pools_are_disjoint(renamed: dict[str, list[Theorem]]) -> None:
    for pools in (FUNCTIONS, TYPES, CONSTRUCTORS):
        assert not set(pools["train"]) & set(pools["benchmark"])
        for pool in pools.values():
            assert len(set(pool)) == len(pool)
    for pool in VARIABLES.values():
        assert len(set(pool)) == len(pool)
    names = {split: {n for t in ts for n in _defined(t)} for split, ts in renamed.items()}
    assert not names["train"] & names["benchmark"]
    assert names["train"] <= {n for p in (FUNCTIONS, TYPES, CONSTRUCTORS) for n in p["train"]}


def test_no_rename_is_the_families_own_text(tmp_path: object, fixed: dict[str, list[Theorem]]) -> None:
    dbl = next(t for t in fixed["train"] if t.name == "dbl_double_eq")
    assert dbl.statement == "(n : Nat) : double n = 2 * n" and dbl.preamble.startswith("namespace BqDouble\n")
    assert gs.main(["--no-rename", "--out", str(tmp_path)]) == 0
    assert gs.stale_files(tmp_path, rename=False) == [] and gs.stale_files(tmp_path) != []
