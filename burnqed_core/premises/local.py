"""The premises a theorem's own file states before it: the definitions and lemmas of its preamble.

A theorem of a user's file (the bundled sets, a ``.lean`` file) is posed after its preamble: every command of
the file before it that is not a theorem (`burnqed_core.data.theorems.lean_file`), and the earlier lemmas when the file
is read with them. What the preamble declares is what a proof may cite besides the library, and nothing stated
after the theorem can be in it.
"""

from __future__ import annotations

from burnqed_core.data.theorems.lean_file import parse_lean_file
from burnqed_core.lean.definitions import user_definitions
from burnqed_core.premises.records import Premise


def file_premises(preamble: str) -> list[Premise]:
    """The preamble's definitions (``def``/``abbrev``, by full name) and lemmas (``theorem``/``lemma``, by full
    name, with their statements), in the order the file states them."""
    if not preamble.strip():
        return []
    out: list[Premise] = []
    seen: set[str] = set()
    for name in user_definitions(preamble):
        if name not in seen:
            seen.add(name)
            out.append(Premise(name=name, kind="definition", position=len(out)))
    parsed = parse_lean_file(preamble, include_theorems=True)
    for entry in parsed.entries:
        if entry.keyword == "example" or entry.theorem.name in seen:
            continue
        seen.add(entry.theorem.name)
        out.append(Premise(name=entry.theorem.name, type=" ".join(entry.theorem.statement.split()),
                           kind="theorem", position=len(out)))
    return out
