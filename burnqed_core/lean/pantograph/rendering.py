"""Pantograph's answers as burnqed reads them: goals rendered the way Lean's ``plainGoal`` prints them (so that
data and prompts are identical with the embedded backend), Lean messages in both wire forms, and ``goal.tactic``
answers in every version's shape.

* ``goal.tactic`` success: ``{"nextStateId", "goals": [...]}`` (+ ``messages``, ``hasSorry``, ``hasUnsafe`` from
  0.3.1);
* tactic failure: ``{"tacticErrors": [str]}`` (0.2.x, 0.3.0), ``{"messages": [str]}`` without ``goals``
  (0.3.1-0.3.3), ``{"messages": [SerialMessage]}`` (0.3.4+); parse failure: ``{"parseError": str}``;
* a goal: ``{"name", "userName"?, "isConversion" (0.2.x) | "fragment" (0.3.3+), "target": {"pp"}, "vars":
  [{"userName", "isInaccessible", "type": {"pp"}, "value"?: {"pp"}}]}``;
* ``frontend.process`` units: ``{"boundary", "messages": [str | SerialMessage], "goalStateId"?, "goals"?}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from burnqed_core.lean.types import Diagnostic, Status

SEVERITY = MappingProxyType({"error": 1, "warning": 2, "information": 3, "info": 3})
# `<file>:<line>:<col>: error: text` (Lean's Message.toString, 0.2.x-0.3.3 messages)
_MSG_PREFIX = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): (?:(?P<sev>error|warning|info): )?")


def _pp(expr: Any) -> str | None:
    """An ``Expression`` object (``{"pp": ...}``) or, defensively, a bare string."""
    if isinstance(expr, dict):
        pp = expr.get("pp")
        return pp if isinstance(pp, str) else None
    return expr if isinstance(expr, str) else None


def _user_name(name: str) -> str:
    """Lean prints a hygienic name ``h._@.M._hyg.12`` as ``h✝``."""
    if "._@." in name:
        return name.split("._@.")[0] + "✝"
    return name


def _nest(text: str, indent: str = "  ") -> str:
    """Continuation lines of a multi-line expression, indented like Lean's
    ``Format.nest 2`` in ``ppGoal``."""
    return text.replace("\n", "\n" + indent)


def render_goal(goal: dict[str, Any]) -> str:
    """One goal as Lean's ``plainGoal`` prints it: a ``case <tag>`` line when
    the goal is named, hypotheses with consecutive ones of the same type
    grouped (``a b : Nat``), let-values as ``x : T := v``, then ``⊢ target``
    (``| target`` in conv mode)."""
    lines: list[str] = []
    tag = goal.get("userName")
    if tag:
        lines.append(f"case {_user_name(tag)}")
    group: list[str] = []
    group_type: str | None = None

    def flush() -> None:
        nonlocal group, group_type
        if group:
            lines.append(f"{' '.join(group)} : {_nest(group_type or '')}")
        group, group_type = [], None

    for var in goal.get("vars") or []:
        name = _user_name(str(var.get("userName") or "_"))
        vtype = _pp(var.get("type"))
        value = _pp(var.get("value"))
        if vtype is None:  # `noRepeat` answers: name only
            flush()
            lines.append(name)
        elif value is not None:
            flush()
            lines.append(f"{name} : {_nest(vtype)} := {_nest(value)}")
        elif group and vtype == group_type:
            group.append(name)
        else:
            flush()
            group, group_type = [name], vtype
    flush()
    conv = goal.get("fragment") == "conv" or goal.get("isConversion") is True
    lines.append(f"{'|' if conv else '⊢'} {_nest(_pp(goal.get('target')) or '')}")
    return "\n".join(lines)


def render_goals(goals: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(render_goal(g) for g in goals)


# --- messages and tactic answers ----------------------------------------------------------------------------------

def parse_message(msg: Any, unprefixed: int = 1) -> Diagnostic:
    """A Lean message in either wire form: a ``SerialMessage`` object (0.3.4+:
    ``severity``, 1-based ``pos.line``, ``data``) or a string formatted by
    ``Message.toString`` (0.2.x-0.3.3: ``<file>:<line>:<col>: error: ...``).
    Lines become 0-based. Lean writes information messages without any
    position prefix, and so are exception texts in tactic failures: the
    caller says which an unprefixed string is (``unprefixed`` severity). A
    position without a severity word is a parser error."""
    if isinstance(msg, dict):
        pos = msg.get("pos") or {}
        end = msg.get("endPos") or pos
        line = max(int(pos.get("line", 1)) - 1, 0)
        return Diagnostic(severity=SEVERITY.get(str(msg.get("severity", "error")), 1), line=line,
                          end_line=max(int(end.get("line", line + 1)) - 1, line), message=str(msg.get("data", "")))
    text = str(msg)
    m = _MSG_PREFIX.match(text)
    if not m:
        return Diagnostic(severity=unprefixed, line=0, end_line=0, message=text.strip())
    line = max(int(m["line"]) - 1, 0)
    return Diagnostic(severity=SEVERITY.get(m["sev"] or "error", 1), line=line, end_line=line,
                      message=text[m.end():].strip())


def first_error(diags: Sequence[Diagnostic]) -> str:
    errors = [d for d in diags if d.is_error]
    return (errors or list(diags) or [Diagnostic(severity=1, line=0, end_line=0, message="unknown failure")])[0].message


def interpret_tactic_result(payload: dict[str, Any]) -> tuple[Status, tuple[str, ...], str, int | None]:
    """(status, rendered goals, message, nextStateId) of a ``goal.tactic``
    answer in any version's shape. An error object is not handled here."""
    if "parseError" in payload:
        return Status.PARSE_ERROR, (), str(payload["parseError"]).strip(), None
    if "tacticErrors" in payload:  # 0.2.x, 0.3.0
        diags = [parse_message(m) for m in payload["tacticErrors"] or []]
        return Status.TACTIC_ERROR, (), first_error(diags), None
    goals = payload.get("goals")
    if goals is None or payload.get("nextStateId") is None:  # 0.3.1+: failure = no goals, read messages
        diags = [parse_message(m) for m in payload.get("messages") or []]
        return Status.TACTIC_ERROR, (), first_error(diags), None
    state_id = int(payload["nextStateId"])
    if payload.get("hasSorry"):
        return Status.TACTIC_ERROR, (), "the tactic uses `sorry`", state_id
    if payload.get("hasUnsafe"):
        return Status.TACTIC_ERROR, (), "the tactic uses unsafe code", state_id
    return Status.OK, render_goals(goals), "", state_id

