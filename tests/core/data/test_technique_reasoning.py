"""The reasoning families (`burnqed_core.data.technique_reasoning`): helper lemmas, case splits on propositions,
accumulators, polymorphic containers, well-founded and mutual recursion."""

from __future__ import annotations

import logging
import random

import pytest

from burnqed_core.data.catalogue import ALL_FAMILIES
from burnqed_core.data.families import FAMILIES, TECHNIQUES, Family
from burnqed_core.data.generate_sets import SEED, family_theorems
from burnqed_core.data.renaming import declared, identifiers, rename_instance
from burnqed_core.data.technique_families import TECHNIQUE_FAMILIES
from burnqed_core.data.technique_reasoning import REASONING_FAMILIES

logger = logging.getLogger(__name__)

FAMILY_IDS = [f.name for f in REASONING_FAMILIES]

# The constructors the preambles declare; anything else renaming calls a constructor is a `|` line of a
# `match` taken for one.
CONSTRUCTORS = {"dim", "mid", "bright", "blaze", "nothing", "just", "mk", "leaf", "node", "bag"}


def test_families_are_train_hard_and_in_the_catalogue() -> None:
    assert all(f in ALL_FAMILIES for f in REASONING_FAMILIES)
    assert 4 <= len(REASONING_FAMILIES) <= 6
    assert len(set(FAMILY_IDS)) == len(FAMILY_IDS)
    assert not set(FAMILY_IDS) & {f.name for f in (*FAMILIES, *TECHNIQUE_FAMILIES)}
    assert all(f.split == "train" and f.hard and f.description for f in REASONING_FAMILIES)
    assert all(f.technique in TECHNIQUES for f in REASONING_FAMILIES)


@pytest.mark.parametrize("family", REASONING_FAMILIES, ids=FAMILY_IDS)
def test_generation_is_deterministic_and_distinct(family: Family) -> None:
    first = family.generate(random.Random(f"{SEED}:{family.name}"))
    again = family.generate(random.Random(f"{SEED}:{family.name}"))
    assert first == again
    assert 8 <= len(first) <= 20
    assert len({i.key for i in first}) == len(first)
    assert len({(i.preamble, i.statement) for i in first}) == len(first)
    for inst in first:
        assert 1 <= len(inst.proof) <= 8
        assert all(step.strip() for step in inst.proof)
        assert all(len(step) <= 180 for step in inst.proof), inst.key
        assert inst.preamble.startswith("namespace ")
    other = family.generate(random.Random(f"{SEED + 1}:{family.name}"))
    assert [i.statement for i in other] != [i.statement for i in first]  # parameters vary with the seed


@pytest.mark.parametrize("family", REASONING_FAMILIES, ids=FAMILY_IDS)
def test_every_instance_survives_renaming(family: Family) -> None:
    for inst in family.generate(random.Random(f"{SEED}:{family.name}")):
        renamed, mapping = rename_instance(inst, family.name, family.split, SEED)
        before = declared(inst.preamble, inst.statement)
        after = declared(renamed.preamble, renamed.statement)
        assert before.functions and before.variables
        assert set(before.constructors) <= CONSTRUCTORS, before.constructors
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
        assert renamed == rename_instance(inst, family.name, family.split, SEED)[0]


def test_renamed_sets_generate_for_many_seeds() -> None:
    """Renaming never runs out of names (a statement with many type variables draws from a small pool)."""
    for seed in range(30):
        for family in REASONING_FAMILIES:
            assert len(family_theorems(family, seed)) >= 8
