"""The second family of the technique "generalizing" (`burnqed_core.data.synthetic.techniques.generalizing`: ``tgen``):
deterministic, distinct instances of several templates over several preambles, every proof generalising an
accumulator or an argument before (or inside) its induction, and proofs that name nothing their state hides (checked
statically here; Lean checks the proofs, `burnqed_core.data.pairs.visibility` the traced states)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from burnqed_core.data.synthetic.catalogue import ALL_FAMILIES, BY_NAME
from burnqed_core.data.synthetic.families import Instance
from burnqed_core.data.synthetic.generate_sets import SEED, SETS_DIR, SOURCE, family_theorems
from burnqed_core.data.twins.canonical import proof_skeleton
from burnqed_core.records import Theorem
from tests.core.data.synthetic.family_cases import REASONING as REASONING_FAMILIES
from tests.core.data.synthetic.family_cases import (
    check_generation,
    check_state_visible,
    hidden_names,
    instances,
    template,
)

TGEN = BY_NAME["tgen"]

# How a proof generalises: ``induction x generalizing acc``; a ``∀ acc`` statement with ``intro`` after the
# induction; or a ``have`` of a ``∀ u acc`` lemma whose induction intros the accumulator per case.
_GENERALIZING = re.compile(r"^induction \w+ generalizing \w+")
_HAVE_FORALL = re.compile(r"^have \S+ : ∀ \w+ \w+, .* := by\n(?:.|\n)*\binduction \w+(?:.|\n)*\bintro \w+")


def _how(inst: Instance) -> str | None:
    """Which of the three forms the instance's proof takes (None: none of them)."""
    if any(_GENERALIZING.match(s) for s in inst.proof):
        return "generalizing"
    if re.match(r"^\(\w+ : \w+\) : ∀ \w+ : [\w ]+, ", inst.statement) and inst.proof[0].startswith("induction ") \
            and sum(s.startswith("intro ") or "intro " in s for s in inst.proof[1:]) >= 2:
        return "forall"
    if _HAVE_FORALL.match(inst.proof[0]):
        return "have"
    return None


def test_family_is_train_hard_generalizing_in_the_catalogue() -> None:
    assert TGEN.name == "tgen" and TGEN.technique == "generalizing"
    assert TGEN.split == "train" and TGEN.hard and TGEN.description
    assert TGEN in ALL_FAMILIES
    assert [f.name for f in ALL_FAMILIES].count("tgen") == 1
    # the technique's other families stay: tgen adds surface forms, it replaces none
    assert {f.name for f in ALL_FAMILIES if f.technique == "generalizing"} == {"pair", "tacc", "twf", "tgen"}


def test_generation_is_deterministic_and_distinct() -> None:
    check_generation(TGEN, size=(14, 18), steps=(2, 8))


def test_several_templates_and_surface_forms() -> None:
    insts = instances(TGEN)
    templates = {template(i.key) for i in insts}
    assert len(templates) >= 8, templates
    assert len(templates) < len(insts)   # some template has several instances
    assert len({i.preamble for i in insts}) >= 4
    theorems = [Theorem(name=f"tgen_{i.key}", statement=i.statement, preamble=i.preamble, split="train",
                        source=SOURCE, family="tgen", proof=list(i.proof)) for i in insts]
    assert len({proof_skeleton(t) for t in theorems}) >= 8
    # a user tree, Nat loops and List accumulators: not tacc's definitions
    assert any("\ninductive " in i.preamble for i in insts)
    assert any("List Nat → Nat → Nat" in i.preamble for i in insts)
    assert any("Nat → Nat → Nat" in i.preamble and "List" not in i.preamble for i in insts)
    theirs = {i.preamble for f in REASONING_FAMILIES for i in instances(f)}
    assert not theirs & {i.preamble for i in insts}


def test_every_proof_generalises_in_one_of_three_forms() -> None:
    for seed in (SEED, SEED + 1, SEED + 2):
        hows = {}
        for inst in instances(TGEN, seed):
            hows[inst.key] = _how(inst)
            assert hows[inst.key], inst.key
        assert set(hows.values()) == {"generalizing", "forall", "have"}, hows
    # the have forms use their lemma at the literal accumulator of the goal
    for inst in instances(TGEN):
        if _how(inst) == "have":
            assert re.search(r"\bh (?:\w+ )?(?:0|1)\b", " ".join(inst.proof[1:])), inst.key


def test_the_form_check_bites() -> None:
    """`_how` is not true of any proof: an induction that generalises nothing, or a ``have`` that is not
    ``∀``-generalised, is no form."""
    gen = next(i for i in instances(TGEN) if i.key == "twig_tot_gen")
    assert _how(gen) == "generalizing"
    plain = Instance(gen.key, gen.statement, ("induction t", *gen.proof[1:]), gen.preamble)
    assert _how(plain) is None
    lit = next(i for i in instances(TGEN) if i.key == "twig_tot_zero")
    assert _how(lit) == "have"
    weak = Instance(lit.key, lit.statement, ("have h : totA t 0 = 0 + tot t := by\n  simp", *lit.proof[1:]),
                    lit.preamble)
    assert _how(weak) is None


def test_proofs_name_nothing_the_state_hides() -> None:
    check_state_visible(TGEN)
    tree = next(i for i in instances(TGEN) if i.key == "twig_flat_length")
    for bad in ("induction t generalizing acc with\n| bud => rfl\n| knot l x r ihl ihr => simp", "exact .bud",
                "simp only [topA]"):
        assert hidden_names(Instance(tree.key, tree.statement, (bad,), tree.preamble)), bad


def test_no_single_automation_tactic_closes_them() -> None:
    """The measured automation map (`burnqed lean baseline`) has every theorem of the family, each closed by none
    of the seven tactics."""
    automation = json.loads(Path(SETS_DIR, "automation.json").read_text(encoding="utf-8"))
    for t in family_theorems(TGEN):
        assert t.name in automation, t.name
        assert automation[t.name] is None, (t.name, automation[t.name])
