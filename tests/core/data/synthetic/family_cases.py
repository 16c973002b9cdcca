"""Helpers shared by the technique families' tests: a family's instances at a seed, an instance's template, and the
static check of the state-visible style (`hidden_names`)."""

from __future__ import annotations

import random
import re

from burnqed_core.data.synthetic.catalogue import BY_NAME
from burnqed_core.data.synthetic.families import Family, Instance
from burnqed_core.data.synthetic.generate_sets import SEED, family_theorems
from burnqed_core.data.synthetic.renaming import declared, identifiers, rename_instance


def families(*names: str) -> tuple[Family, ...]:
    """The families of these names (the tests group them as they were first written, before the technique modules
    were cut one per technique)."""
    return tuple(BY_NAME[n] for n in names)


# The groups the technique families were first written in (their tests keep them).
PREDICATES = families("tred", "tocc")
STRUCTURES = families("tstruct", "tclass", "tiff", "tfun")
REASONING = families("thave", "tcase", "tacc", "tpoly", "twf")
RELATIONS = families("tsub", "tle")
LEMMAS = families("tlem", "tsplit")
GENERALIZING = families("tgen")


def instances(family: Family, seed: int = SEED) -> list[Instance]:
    """The family's instances as `generate_sets` draws them (its parameters from ``Random(f"{seed}:{name}")``)."""
    return family.generate(random.Random(f"{seed}:{family.name}"))


def template(key: str) -> str:
    """The template of an instance: its key up to the first numeric part (``lit_3_1_0_101`` -> ``lit``)."""
    parts = []
    for part in key.split("_"):
        if part[:1].isdigit():
            break
        parts.append(part)
    return "_".join(parts)


def check_generation(family: Family, size: tuple[int, int], steps: tuple[int, int]) -> list[Instance]:
    """A family's draw is deterministic and distinct (keys, statements over preambles), of ``size`` instances at
    every seed, each proof of ``steps`` non-empty steps of at most 180 characters in a ``Bq`` namespace, and its
    parameters vary with the seed. Returns the instances at `SEED`."""
    first = instances(family)
    assert first == instances(family)
    assert size[0] <= len(first) <= size[1]
    assert len({i.key for i in first}) == len(first)
    assert len({(i.preamble, i.statement) for i in first}) == len(first)
    for inst in first:
        assert steps[0] <= len(inst.proof) <= steps[1]
        assert all(step.strip() and len(step) <= 180 for step in inst.proof), inst.key
        assert inst.preamble.startswith("namespace Bq")
    assert [i.statement for i in instances(family, SEED + 1)] != [i.statement for i in first]
    for seed in range(20):   # never too few or too many, whatever the draw
        assert size[0] <= len(family_theorems(family, seed)) <= size[1]
    return first


# The steps that unfold a definition into the goal (``simp only [f]``, ``rw [f, if_pos h]``, ``unfold f``).
_UNFOLD = re.compile(r"\b(?:simp only|dsimp only|rw|unfold)\b\s*\[?([^\]\n]*)")


def _bodies(preamble: str) -> dict[str, set[str]]:
    """Each ``def`` of the preamble: the identifiers of its body (what unfolding it brings into the goal)."""
    out: dict[str, set[str]] = {}
    for block in preamble.split("\n\n"):
        for i, line in enumerate(block.splitlines()):
            m = re.match(r"def (\S+)", line)
            if m:
                out[m.group(1)] = set(identifiers("\n".join(block.splitlines()[i:])))
                break
    return out


def hidden_names(inst: Instance) -> set[str]:
    """Preamble names a step uses although its state cannot show them, step by step: constructors are never
    shown before a split (inductions and cases go without ``with`` alternatives), types only where the statement
    names them (a binder ``(p : Item)``), definitions where the statement names them or an earlier step unfolded a
    definition whose body does (``bumpS`` after ``simp only [bumpN]``)."""
    decl = declared(inst.preamble, inst.statement)
    bodies = _bodies(inst.preamble)
    visible = set(identifiers(inst.statement))
    hidden: set[str] = set()
    for step in inst.proof:
        used = set(identifiers(step))
        hidden |= used & set(decl.constructors)
        hidden |= {m.group(1) for m in re.finditer(r"(?<![\w.])\.(\w+)", step) if m.group(1) in decl.constructors}
        hidden |= (used & (set(decl.types) | set(decl.functions))) - visible
        for m in _UNFOLD.finditer(step):
            for name in identifiers(m.group(1)):
                if name in visible and name in bodies:
                    visible |= bodies[name]
    return hidden


def check_state_visible(family: Family, seeds: tuple[int, ...] = (SEED, SEED + 1, SEED + 2)) -> None:
    """No proof of the family names what its state hides (`hidden_names`), before or after renaming, and no
    induction or case split has ``with`` alternatives (they name constructors)."""
    for seed in seeds:
        for inst in instances(family, seed):
            assert not hidden_names(inst), (inst.key, hidden_names(inst))
            renamed = rename_instance(inst, family.name, family.split, seed)[0]
            assert not hidden_names(renamed), (inst.key, hidden_names(renamed))
            for step in inst.proof:
                assert not re.search(r"\binduction\b[^\n]*\bwith\b|\bcases\b[^\n]*\bwith\b", step), step
