"""Lean source text built from a theorem and a tactic path: the one place
that decides how a proof becomes a document (used by the embedded backend's
batches and by the whole-proof checker, so that neither imports the other).

Model text is normalised first (`burnqed_core.lean.sandbox` rejects every
line terminator but ``\\n`` and every control character), so splitting on
``\\n`` here is exactly how Lean splits lines.
"""

from __future__ import annotations

from collections.abc import Sequence

# Unknown names in a statement are errors, not silently bound as implicit
# variables (Lean's default): `n = undefinedConst` must not start a proof.
STRICT_PREFIX = "set_option autoImplicit false in "
# The same as a command of its own line, for documents whose declarations
# must show in Lean's document symbols (a `set_option ... in` command is not
# a declaration there, so the declaration after `in` would be invisible).
STRICT_LINE = "set_option autoImplicit false\n"
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
