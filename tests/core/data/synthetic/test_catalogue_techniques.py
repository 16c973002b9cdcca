"""The technique families of the corpus, all groups together: the predicate families
(inductive predicates by rule induction, inversion and constructors), the structure/class/Iff/funext families and
the reasoning families (helper lemmas, case splits on propositions, accumulators, polymorphic containers,
well-founded and mutual recursion), in the groups they were first written in (`tests.core.data.synthetic.family_cases`;
the modules of `burnqed_core.data.synthetic.techniques` hold one technique each).

Every group is train, hard and in the catalogue under names of its own; every family generates deterministic,
distinct instances that survive renaming; then what only one group promises (the structure families teach their
technique and have one canonical form under renaming; the reasoning families generate for many seeds)."""

from __future__ import annotations

import logging

import pytest

from burnqed_core.data.synthetic.catalogue import ALL_FAMILIES
from burnqed_core.data.synthetic.families import FAMILIES, TECHNIQUES, Family, Instance
from burnqed_core.data.synthetic.generate_sets import SEED, SOURCE, family_theorems
from burnqed_core.data.synthetic.renaming import declared, identifiers, rename_instance, rename_text
from burnqed_core.data.twins.canonical import canonical_form, proof_skeleton
from burnqed_core.records import Theorem
from tests.core.data.synthetic.family_cases import (
    GENERALIZING,
    LEMMAS,
    PREDICATES,
    REASONING,
    RELATIONS,
    STRUCTURES,
    instances,
)

logger = logging.getLogger(__name__)

# The technique modules' families, by group; together they are every family of the catalogue not in `FAMILIES`.
GROUPS: dict[str, tuple[Family, ...]] = {
    "predicates": PREDICATES,
    "structures": STRUCTURES,
    "reasoning": REASONING,
    "relations": RELATIONS,
    "lemmas": LEMMAS,
    "generalizing": GENERALIZING,
}
CASES = [pytest.param(group, family, id=family.name) for group, families in GROUPS.items() for family in families]

# The constructors the reasoning preambles declare; anything else renaming calls a constructor is a `|` line of a
# `match` taken for one.
REASONING_CONSTRUCTORS = {"dim", "mid", "bright", "blaze", "nothing", "just", "mk", "leaf", "node", "bag"}
# The constructors the lemma preambles (``tlem``, ``tsplit``) declare.
LEMMA_CONSTRUCTORS = {"tip", "fork", "stop", "put", "hole", "full"}
# The constructors the generalizing preambles (``tgen``) declare.
GENERALIZING_CONSTRUCTORS = {"bud", "knot"}



def _theorem(family: Family, inst: Instance) -> Theorem:
    return Theorem(name=f"{family.name}_{inst.key}", statement=inst.statement, preamble=inst.preamble,
                   split=family.split, source=SOURCE, family=family.name, proof=list(inst.proof))


def test_the_groups_are_every_technique_family() -> None:
    grouped = [f.name for families in GROUPS.values() for f in families]
    assert sorted(grouped) == sorted(f.name for f in ALL_FAMILIES if f not in FAMILIES)


@pytest.mark.parametrize("group", GROUPS)
def test_families_are_train_hard_and_in_the_catalogue(group: str) -> None:
    families = GROUPS[group]
    names = [f.name for f in families]
    assert all(f in ALL_FAMILIES for f in families)
    assert (4 <= len(families) <= 6 or (group == "relations" and names == ["tsub", "tle"])
            or (group == "predicates" and names == ["tred", "tocc"])  # tmul, tsort, treach, telem retired
            or (group == "lemmas" and names == ["tlem", "tsplit"]) or (group == "generalizing" and names == ["tgen"]))
    assert len(set(names)) == len(names)
    others = {f.name for f in FAMILIES} | {f.name for g, fs in GROUPS.items() if g != group for f in fs}
    assert not set(names) & others
    assert all(f.split == "train" and f.hard and f.description for f in families)
    assert all(f.technique in TECHNIQUES for f in families)
    if group == "structures":
        assert names == ["tstruct", "tclass", "tiff", "tfun"]
        assert [f.technique for f in families] == ["structures", "structures", "iff_funext", "iff_funext"]


@pytest.mark.parametrize(("group", "family"), CASES)
def test_generation_is_deterministic_and_distinct(group: str, family: Family) -> None:
    first = instances(family)
    assert first == instances(family)
    assert len(first) >= 8
    assert len({i.key for i in first}) == len(first)
    assert len({(i.preamble, i.statement) for i in first}) == len(first)
    for inst in first:
        assert 1 <= len(inst.proof) <= 8
        assert all(step.strip() for step in inst.proof)
        assert inst.preamble.startswith("namespace Bq")
    if group == "predicates":
        assert all("Prop where" in i.preamble for i in first)   # each declares an inductive predicate
    elif group == "structures":
        assert len(first) <= 16
        assert len({i.preamble for i in first}) >= 3   # several surface forms
    else:
        assert len(first) <= 20
        for inst in first:
            assert all(len(step) <= 180 for step in inst.proof), inst.key
    other = instances(family, SEED + 1)
    assert [i.statement for i in other] != [i.statement for i in first]  # parameters vary with the seed


@pytest.mark.parametrize(("group", "family"), CASES)
def test_every_instance_survives_renaming(group: str, family: Family) -> None:
    for inst in instances(family):
        renamed, mapping = rename_instance(inst, family.name, family.split, SEED)
        before = declared(inst.preamble, inst.statement)
        after = declared(renamed.preamble, renamed.statement)
        if group in ("predicates", "relations"):
            assert before.types and before.constructors
        elif group == "structures":
            assert before.types and before.functions   # a structure or class is a type even without an inductive
        elif group in ("lemmas", "generalizing"):
            assert before.functions and before.variables
            known = LEMMA_CONSTRUCTORS if group == "lemmas" else GENERALIZING_CONSTRUCTORS
            assert set(before.constructors) <= known, before.constructors
        else:
            assert before.functions and before.variables
            assert set(before.constructors) <= REASONING_CONSTRUCTORS, before.constructors
        # every declared name got a new name, and the renamed instance declares exactly the images
        assert after.namespaces == (f"Bq_{family.name}_{inst.key}",)
        for old, new in ((before.types, after.types), (before.constructors, after.constructors),
                         (before.functions, after.functions)):
            assert tuple(mapping[n] for n in old) == new
            assert all(mapping[n] != n for n in old)
        assert tuple((mapping[n], s) for n, s in before.variables) == after.variables
        # names changed consistently: no old type/constructor/definition is left anywhere
        gone = set(before.types) | set(before.constructors) | set(before.functions)
        for old_text, new_text in zip((inst.preamble, inst.statement, *inst.proof),
                                      (renamed.preamble, renamed.statement, *renamed.proof), strict=True):
            assert not gone & set(identifiers(new_text)), new_text
            assert len(identifiers(old_text)) == len(identifiers(new_text))
        # injective and capture-free: the inverse map gives back the family's own text
        inverse = {v: k for k, v in mapping.items()}
        assert len(inverse) == len(mapping)
        back = Instance(renamed.key, rename_text(renamed.statement, inverse),
                        tuple(rename_text(s, inverse) for s in renamed.proof), rename_text(renamed.preamble, inverse))
        assert back == inst
        assert renamed == rename_instance(inst, family.name, family.split, SEED)[0]


def test_each_structure_family_teaches_its_technique() -> None:
    by_name = {f.name: instances(f) for f in STRUCTURES}
    assert all("\nstructure " in i.preamble for i in by_name["tstruct"])
    assert any("::\n" in i.preamble for i in by_name["tstruct"])        # a named constructor
    assert all("\nclass " in i.preamble and "\ninstance " in i.preamble for i in by_name["tclass"])
    assert all(" ↔ " in i.statement for i in by_name["tiff"])
    assert all(i.proof[0].startswith("funext ") for i in by_name["tfun"])
    steps = {f: " ".join(s for i in insts for s in i.proof) for f, insts in by_name.items()}
    for word in ("obtain ⟨", "rcases ", "cases ", "show ", "congr 1"):
        assert word in steps["tstruct"], word
    for word in ("simp only [", "congrArg", "induction "):
        assert word in steps["tclass"], word
    # the methods are unfolded by name (`simp only [Weigh.weight]`), never by restating the goal in terms of the
    # instance's definition, which the state does not print (`burnqed_core.data.pairs.visibility`)
    assert "show " not in steps["tclass"] and "unfold " not in steps["tclass"]
    for word in ("constructor", "Iff.intro", "intro h", "fun h =>", "induction "):
        assert word in steps["tiff"], word
    for word in ("cases ", "induction ", "show ", "rfl"):
        assert word in steps["tfun"], word


@pytest.mark.parametrize("family", STRUCTURES, ids=[f.name for f in STRUCTURES])
def test_two_renamings_have_one_canonical_form(family: Family) -> None:
    """`canonical.canonical_form` sees through the renaming of structures, fields, classes, methods and
    instances: two renamings of one instance are twins (and so are the family's own names)."""
    for inst in instances(family):
        a, _ = rename_instance(inst, family.name, family.split, SEED)
        b, _ = rename_instance(inst, family.name, family.split, SEED + 1)
        assert a.preamble != b.preamble
        ta, tb, fixed = _theorem(family, a), _theorem(family, b), _theorem(family, inst)
        assert canonical_form(ta) == canonical_form(tb) == canonical_form(fixed), inst.key
        assert proof_skeleton(ta) == proof_skeleton(tb) == proof_skeleton(fixed), inst.key


def test_renamed_reasoning_sets_generate_for_many_seeds() -> None:
    """Renaming never runs out of names (a statement with many type variables draws from a small pool)."""
    for seed in range(30):
        for family in REASONING:
            assert len(family_theorems(family, seed)) >= 8
