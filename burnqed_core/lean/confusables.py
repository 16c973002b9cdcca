"""Identifiers of a text that look like a library name: `Νat` (Greek capital
Nu), `Nаt` (Cyrillic a), `𝐍𝐚𝐭` (mathematical bold), `ℕ` (no constant of core
Lean, but the usual notation for `Nat`).

The skeleton of an identifier part is its NFKC form (which folds mathematical
alphanumerics and most letter-like symbols) with every remaining character
that Unicode's confusables data (UTS #39 `confusables.txt`, through the
`confusable-homoglyphs` package) lists as a homoglyph of a Latin letter or
digit replaced by it. A part whose skeleton differs from it is sent to the
trusted checker (`judge.lean`, `hiddenWalk`), which flags a file constant of
that name when the skeleton, or one of its suffixes, is a constant of the
library; the usual notations (`NOTATIONS`) are flagged whatever the library
holds.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from types import MappingProxyType

from confusable_homoglyphs import confusables

from burnqed_core.lean.lexer import LexError, TokKind, tokenize

# The notations mathematicians write for library types (Mathlib's and core's): a file constant spelled so is
# read as the library's type.
NOTATIONS = MappingProxyType({"ℕ": "Nat", "ℤ": "Int", "ℚ": "Rat", "ℝ": "Real", "ℂ": "Complex"})


@cache
def _latin(ch: str) -> str:
    """``ch``'s ASCII homoglyph, or ``ch``."""
    if ch.isascii():
        return ch
    found = confusables.is_confusable(ch, greedy=True, preferred_aliases=["latin", "common"]) or []
    for entry in found:
        for h in entry.get("homoglyphs", []):
            c = h.get("c", "")
            if len(c) == 1 and c.isascii() and (c.isalnum() or c == "_"):
                return c
    return ch


def skeleton(part: str) -> str:
    """The skeleton of one identifier part (see the module's docstring)."""
    if part in NOTATIONS:
        return NOTATIONS[part]
    return "".join(_latin(c) for c in unicodedata.normalize("NFKC", part))


def lookalikes(*texts: str) -> list[tuple[str, str, bool]]:
    """(identifier, skeleton, always flag) for each identifier of ``texts``
    with a part outside ASCII whose skeleton differs from it: names as dotted
    parts; ``always`` for a part that is one of the usual notations."""
    out: dict[str, tuple[str, str, bool]] = {}
    for text in texts:
        try:
            toks = tokenize(text, strict=False)
        except LexError:
            continue
        for t in toks:
            if t.kind is not TokKind.IDENT or t.text.isascii() or t.text in out:
                continue
            parts = list(t.components)
            skel = [skeleton(p) for p in parts]
            if skel != parts:
                out[t.text] = (".".join(parts), ".".join(skel), any(p in NOTATIONS for p in parts))
    return list(out.values())
