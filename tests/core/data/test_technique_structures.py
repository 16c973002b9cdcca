"""The structure/class/Iff/funext technique families (`burnqed_core.data.technique_structures`)."""

from __future__ import annotations

import logging
import random

import pytest

from burnqed_core.data.canonical import canonical_form, proof_skeleton
from burnqed_core.data.families import FAMILIES, Family, Instance
from burnqed_core.data.generate_sets import SEED, SOURCE
from burnqed_core.data.renaming import declared, identifiers, rename_instance, rename_text
from burnqed_core.data.technique_families import TECHNIQUE_FAMILIES
from burnqed_core.data.technique_structures import STRUCTURE_FAMILIES
from burnqed_core.records import Theorem

logger = logging.getLogger(__name__)

FAMILY_IDS = [f.name for f in STRUCTURE_FAMILIES]


def _instances(family: Family, seed: int = SEED) -> list[Instance]:
    return family.generate(random.Random(f"{seed}:{family.name}"))


def _theorem(family: Family, inst: Instance) -> Theorem:
    return Theorem(name=f"{family.name}_{inst.key}", statement=inst.statement, preamble=inst.preamble,
                   split=family.split, source=SOURCE, family=family.name, proof=list(inst.proof))


def test_families_are_train_with_their_technique() -> None:
    assert FAMILY_IDS == ["tstruct", "tclass", "tiff", "tfun"]
    assert not set(FAMILY_IDS) & {f.name for f in [*FAMILIES, *TECHNIQUE_FAMILIES]}
    assert all(f.split == "train" and f.hard and f.description for f in STRUCTURE_FAMILIES)
    assert [f.technique for f in STRUCTURE_FAMILIES] == ["structures", "structures", "iff_funext", "iff_funext"]


@pytest.mark.parametrize("family", STRUCTURE_FAMILIES, ids=FAMILY_IDS)
def test_generation_is_deterministic_and_distinct(family: Family) -> None:
    first = _instances(family)
    assert first == _instances(family)
    assert 8 <= len(first) <= 16
    assert len({i.key for i in first}) == len(first)
    assert len({(i.preamble, i.statement) for i in first}) == len(first)
    assert len({i.preamble for i in first}) >= 3   # several surface forms
    for inst in first:
        assert 1 <= len(inst.proof) <= 8
        assert all(step.strip() for step in inst.proof)
        assert inst.preamble.startswith("namespace Bq")
    other = _instances(family, SEED + 1)
    assert [i.statement for i in other] != [i.statement for i in first]  # parameters vary with the seed


def test_each_family_teaches_its_technique() -> None:
    by_name = {f.name: _instances(f) for f in STRUCTURE_FAMILIES}
    assert all("\nstructure " in i.preamble for i in by_name["tstruct"])
    assert any("::\n" in i.preamble for i in by_name["tstruct"])        # a named constructor
    assert all("\nclass " in i.preamble and "\ninstance " in i.preamble for i in by_name["tclass"])
    assert all(" ↔ " in i.statement for i in by_name["tiff"])
    assert all(i.proof[0].startswith("funext ") for i in by_name["tfun"])
    steps = {f: " ".join(s for i in insts for s in i.proof) for f, insts in by_name.items()}
    for word in ("obtain ⟨", "rcases ", "cases ", "show ", "congr 1"):
        assert word in steps["tstruct"], word
    for word in ("show ", "congrArg", "unfold ", "induction "):
        assert word in steps["tclass"], word
    for word in ("constructor", "Iff.intro", "intro h", "fun h =>", "induction "):
        assert word in steps["tiff"], word
    for word in ("cases ", "induction ", "show ", "rfl"):
        assert word in steps["tfun"], word


@pytest.mark.parametrize("family", STRUCTURE_FAMILIES, ids=FAMILY_IDS)
def test_every_instance_survives_renaming(family: Family) -> None:
    for inst in _instances(family):
        renamed, mapping = rename_instance(inst, family.name, family.split, SEED)
        before = declared(inst.preamble, inst.statement)
        after = declared(renamed.preamble, renamed.statement)
        assert before.types and before.functions   # a structure or class is a type even without an inductive
        assert after.namespaces == (f"Bq_{family.name}_{inst.key}",)
        for old, new in ((before.types, after.types), (before.constructors, after.constructors),
                         (before.functions, after.functions)):
            assert tuple(mapping[n] for n in old) == new
            assert all(mapping[n] != n for n in old)
        assert tuple((mapping[n], s) for n, s in before.variables) == after.variables
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


@pytest.mark.parametrize("family", STRUCTURE_FAMILIES, ids=FAMILY_IDS)
def test_two_renamings_have_one_canonical_form(family: Family) -> None:
    """`canonical.canonical_form` sees through the renaming of structures, fields, classes, methods and
    instances: two renamings of one instance are twins (and so are the family's own names)."""
    for inst in _instances(family):
        a, _ = rename_instance(inst, family.name, family.split, SEED)
        b, _ = rename_instance(inst, family.name, family.split, SEED + 1)
        assert a.preamble != b.preamble
        ta, tb, fixed = _theorem(family, a), _theorem(family, b), _theorem(family, inst)
        assert canonical_form(ta) == canonical_form(tb) == canonical_form(fixed), inst.key
        assert proof_skeleton(ta) == proof_skeleton(tb) == proof_skeleton(fixed), inst.key
