"""The helper-lemma and case-split families (``tlem`` in `burnqed_core.data.synthetic.techniques.have`, ``tsplit`` in
`burnqed_core.data.synthetic.techniques.prop_cases`):
deterministic, distinct instances of several templates, every proof teaching its technique, and proofs that name
no constructor, inductive type or definition of the preamble the state does not show (checked statically here by
following the unfoldings; Lean checks the proofs, `burnqed_core.data.pairs.visibility` the traced states)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from burnqed_core.data.synthetic.catalogue import ALL_FAMILIES
from burnqed_core.data.synthetic.families import FAMILIES, Family, Instance
from burnqed_core.data.synthetic.generate_sets import SEED, SETS_DIR, SOURCE, family_theorems
from burnqed_core.data.twins.canonical import proof_skeleton
from burnqed_core.records import Theorem
from tests.core.data.synthetic.family_cases import LEMMAS as LEMMA_FAMILIES
from tests.core.data.synthetic.family_cases import REASONING as REASONING_FAMILIES
from tests.core.data.synthetic.family_cases import (
    check_generation,
    check_state_visible,
    hidden_names,
    instances,
    template,
)

CASES = [pytest.param(f, id=f.name) for f in LEMMA_FAMILIES]
TLEM, TSPLIT = LEMMA_FAMILIES

def test_families_are_train_hard_with_names_of_their_own() -> None:
    assert [f.name for f in LEMMA_FAMILIES] == ["tlem", "tsplit"]
    assert [f.technique for f in LEMMA_FAMILIES] == ["have", "prop_cases"]
    assert all(f.split == "train" and f.hard and f.description for f in LEMMA_FAMILIES)
    assert all(f in ALL_FAMILIES for f in LEMMA_FAMILIES)
    others = {f.name for f in ALL_FAMILIES if f not in LEMMA_FAMILIES}
    assert not {f.name for f in LEMMA_FAMILIES} & (others | {f.name for f in FAMILIES})


@pytest.mark.parametrize("family", CASES)
def test_generation_is_deterministic_and_distinct(family: Family) -> None:
    check_generation(family, size=(14, 18), steps=(2, 8))


@pytest.mark.parametrize("family", CASES)
def test_several_templates_and_surface_forms(family: Family) -> None:
    insts = instances(family)
    templates = {template(i.key) for i in insts}
    assert len(templates) >= 8, templates
    assert len(templates) < len(insts)   # some template has several instances
    assert len({i.preamble for i in insts}) >= 4
    theorems = [Theorem(name=f"{family.name}_{i.key}", statement=i.statement, preamble=i.preamble,
                        split=family.split, source=SOURCE, family=family.name, proof=list(i.proof)) for i in insts]
    assert len({proof_skeleton(t) for t in theorems}) >= 8
    # not thave's/tcase's definitions: no preamble of theirs repeats here
    theirs = {i.preamble for f in REASONING_FAMILIES for i in instances(f)}
    assert not theirs & {i.preamble for i in insts}


def test_every_tlem_proof_states_a_lemma_and_uses_it() -> None:
    for seed in (SEED, SEED + 1):
        for inst in instances(TLEM, seed):
            haves = [(i, m.group(1)) for i, s in enumerate(inst.proof)
                     for m in [re.match(r"have (\S+) : ∀ .* := by\n", s)] if m]
            assert haves, inst.key
            for i, name in haves:   # each lemma is used by a later step
                assert any(re.search(rf"(?<![\w']){re.escape(name)}(?![\w'₀-₉])", s)
                           for s in inst.proof[i + 1:]), (inst.key, name)
    steps = " ".join(s for i in instances(TLEM) for s in i.proof)
    for word in ("rw [h, h]", "simp only [h]", "have h₁ := h", "induction u", "cases u", "∀ k u", "∀ m v"):
        assert word in steps, word


def test_every_tsplit_proof_splits_on_a_proposition() -> None:
    split = re.compile(r"by_cases |rcases Nat\.lt_or_ge |rcases Classical\.em |\bsplit\b")
    for seed in (SEED, SEED + 1):
        for inst in instances(TSPLIT, seed):
            assert any(split.search(s) for s in inst.proof), inst.key
            assert len(inst.proof) >= 3, inst.key
    insts = instances(TSPLIT)
    steps = " ".join(s for i in insts for s in i.proof)
    for word in ("by_cases h", "rcases Nat.lt_or_ge", "rcases Classical.em", "split", "if_pos h", "if_neg h",
                 "dif_pos h", "dif_neg h", "induction "):
        assert word in steps, word
    assert any("\nstructure " in i.preamble for i in insts)
    assert any("Decidable (" in i.preamble and "\ninstance " in i.preamble for i in insts)
    assert any("if hb :" in i.preamble for i in insts)


@pytest.mark.parametrize("family", CASES)
def test_proofs_name_nothing_the_state_hides(family: Family) -> None:
    check_state_visible(family)


def test_the_style_check_catches_hidden_names() -> None:
    """The static check bites: a named constructor, a ``with`` alternative, a lemma stated before the goal shows
    its function, and a definition no step unfolded."""
    it = next(i for i in instances(TLEM) if i.key.startswith("slot_iter_"))
    assert not hidden_names(it)
    early = (it.proof[4], *it.proof[:4], *it.proof[5:])   # the bumpS lemma before `simp only [bumpN]`
    assert hidden_names(Instance(it.key, it.statement, early, it.preamble)) == {"bumpS"}
    turn = next(i for i in instances(TLEM) if i.key == "bin_turn")
    for bad in ("induction t with\n| tip => rfl\n| fork l x r ihl ihr => simp", "exact .tip", "simp only [addK]",
                "cases t\n· simp only [forks]"):
        assert hidden_names(Instance(turn.key, turn.statement, (bad,), turn.preamble)), bad
    keep = next(i for i in instances(TSPLIT) if i.key.startswith("keep_sum_"))
    assert not hidden_names(keep)
    assert hidden_names(Instance(keep.key, keep.statement, ("simp only [lcnt]",), keep.preamble)) == {"lcnt"}
    heavy = next(i for i in instances(TSPLIT) if i.key.startswith("heavy_le_"))
    assert not hidden_names(heavy)
    assert hidden_names(Instance(heavy.key, heavy.statement, heavy.proof[1:], heavy.preamble)) == {"Heavy"}


def test_no_single_automation_tactic_closes_them() -> None:
    """The measured automation map (`burnqed lean baseline`) has every theorem of both families, each closed by
    none of the seven tactics."""
    automation = json.loads(Path(SETS_DIR, "automation.json").read_text(encoding="utf-8"))
    for family in LEMMA_FAMILIES:
        for t in family_theorems(family):
            assert t.name in automation, t.name
            assert automation[t.name] is None, (t.name, automation[t.name])
