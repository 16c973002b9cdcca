"""Lean source text built from a theorem and a tactic path: the one place
that decides how a proof becomes a document (used by the embedded backend's
batches and by the whole-proof checker, so that neither imports the other).

Model text is normalised first (`burnqed_core.lean.sandbox` rejects every
line terminator but ``\\n`` and every control character), so splitting on
``\\n`` here is exactly how Lean splits lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Unknown names in a statement are errors, not silently bound as implicit
# variables (Lean's default): `n = undefinedConst` must not start a proof.
STRICT_PREFIX = "set_option autoImplicit false in "
# The same as a command of its own line, for documents whose declarations
# must show in Lean's document symbols (a `set_option ... in` command is not
# a declaration there, so the declaration after `in` would be invisible).
STRICT_LINE = "set_option autoImplicit false\n"
# A preamble that sets auto-bound implicits itself (`set_option autoImplicit true` at the top of a user's file)
# keeps its setting: the theorem's document reads as Lean reads the file (`strict_line`).
_SETS_AUTO_IMPLICIT = re.compile(r"^[ \t]*set_option[ \t]+(?:relaxedAutoImplicit|autoImplicit)[ \t]+\S+[ \t]*$",
                                 re.MULTILINE)
_COMMENT = re.compile(r"/-.*?-/|--[^\n]*", re.DOTALL)
INDENT = "  "  # of a tactic line in a ``by`` block


def indent_tactic(tactic: str, indent: str = INDENT) -> str:
    """A tactic as lines of a ``by`` block: every line gets ``indent``, so a
    multi-line tactic keeps its inner layout (``induction ... with`` arms,
    bullets, ``calc`` steps) relative to its first line. Lines are split on
    ``\\n`` only (Python's ``splitlines`` also splits on U+2028, U+0085, ...,
    which Lean does not treat as line breaks)."""
    lines = tactic.strip("\n").split("\n") or [""]
    return "".join(f"{indent}{line.rstrip()}\n" if line.strip() else "\n" for line in lines)


def proof_text(name: str | None, statement: str, tactics: Sequence[str], strict: bool = True) -> str:
    """``theorem <name> <statement> := by`` + tactic lines (no trailing skip),
    with auto-bound implicits off when ``strict`` (same line: line numbers
    do not move). ``name`` None: an anonymous ``example`` (unreachable by
    name and by library search)."""
    prefix = STRICT_PREFIX if strict else ""
    head = f"theorem {name}" if name is not None else "example"
    return f"{prefix}{head} {statement.strip()} := by\n" + "".join(indent_tactic(t) for t in tactics)


def preamble_text(preamble: str) -> str:
    return preamble.strip("\n") + "\n\n" if preamble.strip() else ""


def sets_auto_implicit(preamble: str) -> bool:
    """Whether the preamble sets ``autoImplicit`` (or ``relaxedAutoImplicit``) by a command of its own (not a
    ``set_option ... in`` prefix of one declaration): a file that does decides how its statements bind
    unknown names."""
    return bool(_SETS_AUTO_IMPLICIT.search(_COMMENT.sub(" ", preamble)))


def strict_line(preamble: str) -> str:
    """`STRICT_LINE` after a preamble, unless the preamble sets auto-bound implicits itself (a theorem file
    with ``set_option autoImplicit true`` at its top: its statements elaborate as Lean reads the file, where
    `STRICT_LINE` would make every auto-bound name an unknown identifier). Either way an unknown name never
    makes a statement weaker: an auto-bound one is universally quantified."""
    return "" if sets_auto_implicit(preamble) else STRICT_LINE
