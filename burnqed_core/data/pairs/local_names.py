"""Canonical local names in the policy's prompt (``training.local_names: canonical``).

A step such as ``induction xs`` names a variable of its goal, and the name carries no meaning outside that
goal. A small model trained on few pairs does not learn to copy names from the hypotheses: it samples
``induction`` with whatever variable names it saw most (measured on the tiny profile: 8 samples of the
iteration-1 policy for ``s : Color ⊢ graft (tips s) = graft s`` name ``t``, ``l₂``, ``e``, ``p`` ...).
With canonical names the prompt shows the goal's hypotheses renamed in order of appearance
(``v1 : Color ⊢ graft (tips v1) = graft v1``), training pairs get the same renaming in their tactic
(``induction v1``), and a generated tactic is mapped back to the goal's own names before Lean sees it.
The policy then learns *which* hypothesis to use, by position and type, instead of *how to spell* it, and
theorems written by others with other variable names look the same to it.

Only names bound by hypothesis lines are renamed (`burnqed_core.data.pairs.alpha_rename.hypothesis_names`), as
whole identifiers; inaccessible names (``a✝``) stay. Canonical names are ``v1``, ``v2``, ... skipping any
identifier that already occurs in the texts, so the renaming is a bijection and mapping back never
touches a name of the goal. Pure text functions: no model, no Lean.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Literal

from burnqed_core.data.pairs.alpha_rename import hypothesis_names, rename

LocalNames = Literal["as_printed", "canonical"]
PREFIX = "v"
_WORD = re.compile(r"[^\W\d][\w'!?]*")


def fresh_names(texts: tuple[str, ...], prefix: str = PREFIX) -> Iterator[str]:
    """``prefix1``, ``prefix2``, ... skipping every identifier that occurs in ``texts``."""
    used = {w for t in texts for w in _WORD.findall(t)}
    i = 1
    while True:
        name = f"{prefix}{i}"
        if name not in used:
            yield name
        i += 1


def canonical_mapping(state: str, *others: str) -> dict[str, str]:
    """original -> canonical for the hypothesis names of ``state`` (``others``: more texts whose
    identifiers a canonical name must not collide with, e.g. the tactic of a training pair)."""
    names = hypothesis_names(state)
    fresh = fresh_names((state, *others))
    return {n: next(fresh) for n in names}


def canonicalize(state: str) -> tuple[str, dict[str, str]]:
    """(the state with canonical names, canonical -> original: the mapping back for its tactics)."""
    forward = canonical_mapping(state)
    if not forward:
        return state, {}
    return rename([state], forward)[0], {v: k for k, v in forward.items()}


def canonicalize_pair(state: str, tactic: str) -> tuple[str, str]:
    """A training pair with the state's hypothesis names made canonical in both texts."""
    forward = canonical_mapping(state, tactic)
    if not forward:
        return state, tactic
    s, t = rename([state, tactic], forward)
    return s, t


def restore(tactic: str, back: Mapping[str, str]) -> str:
    """A tactic generated for a canonicalised state, in the goal's own names."""
    return rename([tactic], dict(back))[0] if back else tactic
