"""The library's names learned from their statements: (type -> name) pairs for pre-training.

For a library lemma ``p : T`` the pair is the goal ``⊢ T`` and the step ``exact p``: a step Lean accepts
wherever ``p`` may be used, and the natural way for a small policy to learn which name says what (its tokenizer
learns the names' pieces from the same text). Only lemmas of the pool's module families are used: never one of
a held-out family (``core:dev``, ``core:test``, an eval set), and never a theorem of the search pool itself (the
policy would learn to recall the very theorem it must prove, which the premise rule refuses). The smallest
statements come first, so a cap keeps the ones a small model's context holds best.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from burnqed_core.data.theorems.core_pool import module_family
from burnqed_core.premises.records import Premise
from burnqed_core.premises.steps import premise_name
from burnqed_core.records import TacticPair

SOURCE = "library:type-name"


def choose_library_premises(premises: Sequence[Premise], n: int, *, held_out_families: Collection[str],
                            exclude_names: Collection[str]) -> list[Premise]:
    """Up to ``n`` of ``premises``, the shortest types first (then by name); a premise of a held-out family, one
    named in ``exclude_names`` or one whose name cannot be written is left out."""
    if n <= 0:
        return []
    held, excluded = set(held_out_families), set(exclude_names)
    ok = [p for p in premises
          if p.module and p.type and module_family(p.module) not in held and p.name not in excluded
          and premise_name(p.name) is not None]
    ok.sort(key=lambda p: (len(p.type), p.name))
    return ok[:n]


def type_name_pairs(chosen: Sequence[Premise]) -> list[TacticPair]:
    """The (``⊢ T``, ``exact p``) pair of each premise."""
    return [TacticPair(theorem=p.name, state_before="⊢ " + " ".join(p.type.split()),
                       tactic=f"exact {premise_name(p.name)}", state_after="", depth=0, source=SOURCE)
            for p in chosen]


def library_pairs(premises: Sequence[Premise], n: int, *, held_out_families: Collection[str],
                  exclude_names: Collection[str]) -> list[TacticPair]:
    """Up to ``n`` (``⊢ T``, ``exact p``) pairs of ``premises`` (`choose_library_premises`)."""
    return type_name_pairs(choose_library_premises(premises, n, held_out_families=held_out_families,
                                                   exclude_names=exclude_names))
