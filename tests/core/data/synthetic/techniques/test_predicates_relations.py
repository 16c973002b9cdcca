"""The relation families (`burnqed_core.data.synthetic.techniques.predicates`: ``tsub``, ``tle``): deterministic,
distinct
instances of several templates that survive renaming, and proofs that name no constructor, inductive type or
definition of the preamble the goal does not show (checked statically here; Lean checks the proofs)."""

from __future__ import annotations

import re

import pytest

from burnqed_core.data.synthetic.families import FAMILIES, TECHNIQUES, Family, Instance
from burnqed_core.data.synthetic.generate_sets import SEED, SOURCE
from burnqed_core.data.synthetic.renaming import declared, identifiers, rename_instance
from burnqed_core.data.twins.canonical import proof_skeleton
from burnqed_core.records import Theorem
from tests.core.data.synthetic.family_cases import PREDICATES as TECHNIQUE_FAMILIES
from tests.core.data.synthetic.family_cases import RELATIONS as RELATION_FAMILIES
from tests.core.data.synthetic.family_cases import check_generation, instances, template

CASES = [pytest.param(f, id=f.name) for f in RELATION_FAMILIES]




def _hidden_names(inst: Instance) -> set[str]:
    """Preamble names the proof uses although the prover cannot see them: every constructor or inductive type
    named anywhere in the proof (a construction goes by ``constructor``, an induction or inversion without
    ``with`` alternatives, so none is ever needed), and every definition the statement does not mention."""
    decl = declared(inst.preamble, inst.statement)
    used = {name for step in inst.proof for name in identifiers(step)}
    hidden = used & (set(decl.constructors) | set(decl.types))
    hidden |= (used & set(decl.functions)) - set(identifiers(inst.statement))
    for step in inst.proof:   # ``R.up``, ``.up``: a constructor reference, whatever its name
        hidden |= {m.group(1) for t in decl.types for m in re.finditer(rf"\b{re.escape(t)}\.(\w+)", step)}
        hidden |= {m.group(1) for m in re.finditer(r"(?<![\w.])\.(\w+)", step) if m.group(1) in decl.constructors}
    return hidden


def test_families_are_train_hard_predicates_with_names_of_their_own() -> None:
    names = [f.name for f in RELATION_FAMILIES]
    assert names == ["tsub", "tle"]
    assert all(f.split == "train" and f.hard and f.description and f.technique == "predicates"
               for f in RELATION_FAMILIES)
    assert "predicates" in TECHNIQUES
    assert not set(names) & {f.name for f in (*FAMILIES, *TECHNIQUE_FAMILIES)}


@pytest.mark.parametrize("family", CASES)
def test_generation_is_deterministic_and_distinct(family: Family) -> None:
    for inst in check_generation(family, size=(12, 18), steps=(1, 8)):
        assert "Prop where" in inst.preamble   # each declares an inductive predicate


@pytest.mark.parametrize("family", CASES)
def test_several_templates(family: Family) -> None:
    insts = instances(family)
    templates = {template(i.key) for i in insts}
    assert len(templates) >= 6, templates
    assert len(templates) < len(insts)   # some template has several instances
    theorems = [Theorem(name=f"{family.name}_{i.key}", statement=i.statement, preamble=i.preamble,
                        split=family.split, source=SOURCE, family=family.name, proof=list(i.proof)) for i in insts]
    assert len({proof_skeleton(t) for t in theorems}) >= 6
    # the three techniques: rule induction / inversion on a hypothesis, construction by constructor
    steps = " ".join(s for i in insts for s in i.proof)
    for word in ("induction h", "cases h", "constructor"):
        assert word in steps, word


@pytest.mark.parametrize("family", CASES)
def test_proofs_name_nothing_the_goal_hides(family: Family) -> None:
    for seed in (SEED, SEED + 1, SEED + 2):
        for inst in instances(family, seed):
            assert not _hidden_names(inst), (inst.key, _hidden_names(inst))
            # and under the theorem's own names (renaming itself is checked for every family in
            # test_catalogue_techniques.py)
            renamed = rename_instance(inst, family.name, family.split, seed)[0]
            assert not _hidden_names(renamed), (inst.key, _hidden_names(renamed))
            types = declared(inst.preamble, inst.statement).types
            for step in inst.proof:
                assert not any(f"{t}." in step for t in types), step
                assert not re.search(r"\binduction\b[^\n]*\bwith\b|\bcases\b[^\n]*\bwith\b", step), step


def test_the_style_check_catches_a_named_constructor() -> None:
    inst = next(i for i in instances(RELATION_FAMILIES[1]) if i.key.startswith("lit_"))
    assert not _hidden_names(inst)
    for bad in ("apply Lq.up", "exact .same _", "exact same _", "induction h with\n| same => rfl"):
        assert _hidden_names(Instance(inst.key, inst.statement, (bad,), inst.preamble)), bad
    # a definition the statement mentions may be unfolded; one it does not mention may not
    sub = next(i for i in instances(RELATION_FAMILIES[0]) if i.key.startswith("wsum_"))
    assert not _hidden_names(sub)
    assert _hidden_names(Instance(sub.key, sub.statement, ("simp only [keepGe]",), sub.preamble)) == {"keepGe"}
