"""Canonical numerals in the policy's prompt (``training.numerals: canonical``).

A witness such as ``refine ⟨20 :: List.replicate (5 - 1) 0, ?_, ?_⟩`` for ``⊢ ∃ xs, xs.length = 5 ∧
xs.sum = 20`` copies numbers from its goal. A small model learns the *shape* of such a step from a handful
of pairs but not the copying: measured on the tiny profile (issue 21), the policy wrote ``[4]`` where the
goal needed ``[24]`` and ``3 :: List.replicate (3 - 1) 0`` for ``length = 2 ∧ sum = 33``, even on a
theorem it was trained on. With canonical numerals the prompt shows the goal's numerals as placeholders in
order of first appearance (``⊢ ∃ xs, xs.length = k1 ∧ xs.sum = k2``), a training pair's tactic gets the
same placeholders wherever it uses one of the goal's numerals (``refine ⟨k2 :: List.replicate (k1 - 1)
0, ?_, ?_⟩``), and a generated tactic is mapped back to the goal's numerals before Lean sees it. The policy
then learns *which* number of the goal to use, by position, instead of *how to spell* it: the same idea as
`burnqed_core.data.pairs.local_names` for hypothesis names.

What counts as a numeral: a run of ASCII digits standing alone (not inside an identifier such as ``h2`` or
``aff_0_2``, not a projection ``p.1``, not part of ``2.5`` or ``0x1F``), whose value is at least
`MIN_VALUE`: ``0`` and ``1`` are structure (``n + 1``, ``0 < x``, the base case), not data. Placeholders are
``k1``, ``k2``, ... skipping every identifier that already occurs in the texts, so the mapping is a
bijection and mapping back never touches a name of the goal; a numeral the goal does not contain stays as
written in the tactic. Pure text functions: no model, no Lean.
"""

from __future__ import annotations

import re
from typing import Literal

from burnqed_core.data.pairs.local_names import fresh_names

Numerals = Literal["as_printed", "canonical"]
PREFIX = "k"
#: numerals below this stay as printed (0 and 1 are the structure of a goal, not its data)
MIN_VALUE = 2
_NUMERAL = re.compile(r"(?<![\w'!?.✝])[0-9]+(?![\w'!?✝]|\.[0-9])")


def numerals(text: str) -> list[str]:
    """The numerals of a text that canonicalisation replaces, in order of first appearance."""
    out: list[str] = []
    for m in _NUMERAL.finditer(text):
        lit = m.group(0)
        if int(lit) >= MIN_VALUE and lit not in out:
            out.append(lit)
    return out


def _mapping(state: str, *others: str) -> dict[str, str]:
    """numeral -> placeholder for the numerals of ``state`` (placeholders fresh in ``state`` and ``others``)."""
    fresh = fresh_names((state, *others), PREFIX)
    return {lit: next(fresh) for lit in numerals(state)}


def _replace(text: str, forward: dict[str, str]) -> str:
    return _NUMERAL.sub(lambda m: forward.get(m.group(0), m.group(0)), text)


def canonicalize_numerals(state: str) -> tuple[str, dict[str, str]]:
    """(the state with placeholders for its numerals, placeholder -> numeral: the mapping back, applied to
    a tactic by `burnqed_core.data.pairs.local_names.restore` as a whole-identifier renaming)."""
    forward = _mapping(state)
    if not forward:
        return state, {}
    return _replace(state, forward), {v: k for k, v in forward.items()}


def canonicalize_numerals_pair(state: str, tactic: str) -> tuple[str, str]:
    """A training pair with the state's numerals made placeholders in both texts."""
    forward = _mapping(state, tactic)
    if not forward:
        return state, tactic
    return _replace(state, forward), _replace(tactic, forward)

