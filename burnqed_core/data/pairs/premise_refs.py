"""Premises referred to by their place in the prompt (``training.premise_names: canonical``, issue 65).

A model whose prompt shows retrieved premises (``name : type`` lines, `PromptFormat.premises`) should use one
of them in its step: ``rw [List.map_append]``. Measured on the synthetic copy benchmark
(`benchmarks/premise_copy.py`), the tiny policy never learns to spell a name it is shown: it writes names from
the pieces it saw most. With canonical premise names each shown line gets a short reference in front of it
(``p1 List.map_append : ∀ ...``), a training pair's tactic uses the reference wherever it names a shown premise
(``rw [p1]``), and a generated tactic is mapped back to the premise's name before Lean sees it. The policy then
learns *which* premise to use, by its type and its place, instead of *how to spell* it: the pointer of a copy
mechanism, and the same idea as `burnqed_core.data.pairs.local_names` for hypothesis names. A reference can
only stand for a shown premise, so the premise rule that chose the lines still holds for every step.

References are ``p1``, ``p2``, ... skipping every identifier that already occurs in the texts, so the mapping is
a bijection and mapping back never touches a name of the goal; a name is replaced as a whole identifier
(``p1.symm`` maps back to ``List.map_append.symm``; ``Foo.List.map_append`` is another name and stays). Pure
text functions: no model, no Lean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from burnqed_core.data.pairs.alpha_rename import rename
from burnqed_core.data.pairs.local_names import fresh_names

PremiseNames = Literal["as_printed", "canonical"]
PREFIX = "p"


def premise_name(line: str) -> str:
    """The declaration name of a premise line ``name : type`` (the whole line when it has no type)."""
    return line.split(" : ", 1)[0].strip()


def _mapping(lines: Sequence[str], *texts: str) -> dict[str, str]:
    """premise name -> reference for the shown ``lines`` (references fresh in ``texts`` and the lines)."""
    fresh = fresh_names((*texts, *lines), PREFIX)
    out: dict[str, str] = {}
    for line in lines:
        name = premise_name(line)
        if name and name not in out:
            out[name] = next(fresh)
    return out


def _show(lines: Sequence[str], forward: dict[str, str]) -> list[str]:
    return [f"{forward[premise_name(line)]} {line}" if premise_name(line) in forward else line for line in lines]


def reference_premises(state: str, lines: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(the lines with their references in front, reference -> name: the mapping back for a generated
    tactic, applied by `burnqed_core.data.pairs.local_names.restore` as a whole-identifier renaming)."""
    forward = _mapping(lines, state)
    return _show(lines, forward), {v: k for k, v in forward.items()}


def reference_premises_pair(state: str, tactic: str, lines: Sequence[str]) -> tuple[list[str], str]:
    """A training example's lines with references, and its tactic naming the shown premises by them."""
    forward = _mapping(lines, state, tactic)
    return _show(lines, forward), rename([tactic], forward)[0] if forward else tactic
