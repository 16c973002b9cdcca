"""The texts the Pantograph client sends to ``frontend.process`` and what it reads from the answers.

A theorem is started by elaborating ``<preamble> theorem ... := sorry`` (`start_source`); ``import`` lines of a
preamble are blanked out (`strip_imports`): the process was started with its modules
(``lean.pantograph.modules``) and Pantograph does not import in the middle of a session. After 0.3.7, the
statement's binders are introduced by name (`statement_binder_names`).

`PantographBackend.elaborate` processes a whole text followed by one ``#print axioms <name>`` per name asked and
a sentinel command (`elaboration_source`): declarations are the units' ``newConstants`` without Lean's auxiliary
constants (`user_declarations`), axioms the answers of Lean's ``#print axioms`` (`parse_print_axioms`; Pantograph
has no command of its own for them, ``env.inspect`` only lists direct dependencies), and the text was processed to
its end iff the units of the appended commands are there (`read_elaboration`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from burnqed_core.lean.lexer import plain_name
from burnqed_core.lean.pantograph.rendering import parse_message
from burnqed_core.lean.types import Diagnostic, Elaboration
from burnqed_core.records import Theorem

START_DECL = "burnqed_goal"
_IMPORT = re.compile(r"^import\s")
# `#print axioms` answers (Lean's Elab/Print.lean), one per asked name
_AXIOMS = re.compile(r"^'(?P<name>.+)' depends on axioms: \[(?P<axioms>.*)\]\s*$", re.S)
_NO_AXIOMS = re.compile(r"^'(?P<name>.+)' does not depend on any axioms\s*$", re.S)
DECL_NAME = re.compile(r"^(?:[A-Za-z_\u0370-\u03ff\u1f00-\u1fff\u2100-\u214f][\w'!?\u0370-\u03ff]*|«[^«»\n]+»)"
                       r"(?:\.(?:[A-Za-z_\u0370-\u03ff][\w'!?\u0370-\u03ff]*|«[^«»\n]+»|\d+))*$")
SENTINEL = "#check Nat"
# a module name of `lean.pantograph.modules` (the checker's header imports them)
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_']*(?:\.[A-Za-z_][A-Za-z0-9_']*)*$")
# auxiliary constants Lean adds beside a declaration (not declarations of the source)
_AUX_LAST = re.compile(r"^(?:(?:proof|match|eq|lambda|spec|sunfold|unfold|_proof)_\d+|eq_def|induct|mutual_induct|"
                       r"brecOn|binductionOn|below|ibelow|rec|recOn|casesOn|noConfusion|noConfusionType|ctorIdx|"
                       r"sizeOf_spec|inj|injEq|_sizeOf_\d+|_sizeOf_inst|fun_cases)$")


def user_declarations(names: Sequence[str]) -> list[str]:
    """``newConstants`` without Lean's internal and auxiliary constants
    (``_private``/``_aux`` names, ``x.proof_1``, ``x.match_1``, recursors ...):
    the declarations the source itself states."""
    out = []
    for name in names:
        parts = name.split(".")
        if any(p.startswith("_") and not p.startswith("«") for p in parts):
            continue
        if len(parts) > 1 and _AUX_LAST.match(parts[-1]):
            continue
        out.append(name)
    return out


def parse_print_axioms(text: str) -> tuple[str, list[str]] | None:
    """(name, axioms) of a ``#print axioms`` answer; None if it is not one."""
    text = text.strip()
    m = _AXIOMS.match(text)
    if m:
        axioms = [a.strip() for a in m["axioms"].replace("\n", " ").split(",") if a.strip()]
        return plain_name(m["name"]), [plain_name(a) for a in axioms]
    m = _NO_AXIOMS.match(text)
    if m:
        return plain_name(m["name"]), []
    return None


def statement_binder_names(statement: str) -> list[str] | None:
    """Names of the binders before the statement's top-level ``:`` (``(a b :
    T) {c : U} [inst : C] [D]``); ``_`` for an anonymous instance binder.
    None when the statement does not start with binder groups we can read."""
    close = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "{{": "}}"}
    names: list[str] = []
    i, n = 0, len(statement)
    while True:
        while i < n and statement[i].isspace():
            i += 1
        if i >= n:
            return None
        if statement[i] == ":":
            return names
        opener = "{{" if statement.startswith("{{", i) else statement[i]
        if opener not in close:
            return None
        depth, j = 0, i
        while j < n:  # to the matching closer, nested brackets of any kind counted
            c = statement[j]
            if c in "([{⦃":
                depth += 1
            elif c in ")]}⦄":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= n:
            return None
        inner = statement[i + len(opener): j - (len(close[opener]) - 1)]
        head, colon, _ = inner.partition(":")
        if not colon:
            if opener != "[":
                return None
            names.append("_")
        else:
            group = head.split()
            if not group or not all(re.fullmatch(r"[^\s()\[\]{}:]+", g) for g in group):
                return None
            names.extend(group)
        i = j + 1



def strip_imports(text: str) -> str:
    """``import`` lines blanked (line numbers are kept): the REPL imported its
    modules at start and cannot import in the middle of a session."""
    return "\n".join("" if _IMPORT.match(line) else line for line in text.split("\n"))


def start_source(theorem: Theorem) -> str:
    """The file whose ``sorry`` becomes the theorem's initial goal state."""
    pre = strip_imports(theorem.preamble).strip("\n")
    return (pre + "\n\n" if pre.strip() else "") + f"theorem {START_DECL} {theorem.statement.strip()} := sorry\n"



def elaboration_source(body: str, axioms_of: Sequence[str]) -> tuple[str, list[int]]:
    """``body`` (ending in a newline) followed by one ``#print axioms <name>`` per name and the `SENTINEL`, and
    the byte offset at which each appended command starts (the sentinel's last). Raises ValueError for a name
    that is not a declaration name (it would be Lean source)."""
    for name in axioms_of:
        if not DECL_NAME.match(name):
            raise ValueError(f"not a declaration name: {name!r}")
    parts = [body]
    offsets: list[int] = []
    pos = len(body.encode("utf-8"))
    for cmd in [*(f"#print axioms {name}" for name in axioms_of), SENTINEL]:
        chunk = "\n" + cmd + "\n"
        offsets.append(pos + 1)
        parts.append(chunk)
        pos += len(chunk.encode("utf-8"))
    return "".join(parts), offsets


def read_elaboration(units: Sequence[dict[str, Any]], body: str, axioms_of: Sequence[str],
                     offsets: Sequence[int]) -> Elaboration:
    """What the ``frontend.process`` units of `elaboration_source` say: the body's diagnostics, declarations
    (None if this Pantograph reports no ``newConstants``) and command lines, each name's axioms, and whether
    the sentinel was reached."""
    raw = body.encode("utf-8")
    body_end = len(raw)
    by_start: dict[int, dict[str, Any]] = {}
    diags: list[Diagnostic] = []
    constants: list[str] = []
    decl_lines: list[tuple[int, int]] = []
    commands: list[tuple[int, int]] = []
    reported = False
    for u in units:
        bounds = u.get("boundary") or [0, 0]
        start = int(bounds[0])
        if start >= body_end:
            by_start[start] = u
            continue
        end = max(start, int(bounds[1]) - 1)
        lines = (raw[:start].count(b"\n"), raw[:end].count(b"\n"))
        commands.append(lines)
        diags.extend(parse_message(m, unprefixed=3) for m in u.get("messages") or [])
        if u.get("newConstants") is not None:
            reported = True
            mine = user_declarations(sorted(str(c) for c in u["newConstants"]))
            constants.extend(mine)
            decl_lines.extend([lines] * len(mine))
    axioms = {name: got for name, off in zip(axioms_of, offsets, strict=False)
              if (got := _axioms_answer(by_start.get(off), name)) is not None}
    return Elaboration(diagnostics=diags, declarations=constants if reported else None,
                       declaration_lines=decl_lines if reported else None, command_lines=commands,
                       axioms=axioms, complete=offsets[-1] in by_start)


def _axioms_answer(unit: dict[str, Any] | None, name: str) -> list[str] | None:
    """The axioms that the unit of ``#print axioms <name>`` names; None if it gives no such answer."""
    for m in (unit or {}).get("messages") or []:
        d = parse_message(m, unprefixed=3)
        got = parse_print_axioms(d.message) if d.severity == 3 else None
        if got is not None and got[0] == plain_name(name):
            return got[1]
    return None
