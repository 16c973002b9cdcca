"""What a Pantograph version takes and answers: its version, the fields its ``frontend.process`` requires,
and its error objects.

Lean's derived ``FromJson`` treats every non-``Option`` field of a request structure as required (a default value
does not make it optional) and ignores keys it does not know. ``frontend.process`` (Protocol.lean
``FrontendProcess``) therefore always gets ``file``, ``readHeader``, ``inheritEnv`` (false: a fresh environment of
the process's modules), ``sorrys``, ``typeErrorsAsGoals`` and ``newConstants``, plus ``invocations: false`` where it
is a required Bool (0.2.x-0.3.1, 0.3.0 included; from 0.3.2 it is an optional file name and must be absent). The
dialect is chosen from ``repl --version`` and corrected by the first answer: ``{"error": "command", "desc": "Unable
to parse json: ...invocations..."}`` flips the ``invocations`` field once (`Dialect.corrected_by`). Any other
``command``/``arguments`` error object is a protocol failure of the client, i.e. an infrastructure failure
(`PantographProtocolError`, a `BackendDied`), never a verdict on a statement or a proof.

``goal.print`` answers a state's goals when asked (``{"stateId", "goals": true}``, Protocol.lean ``GoalPrint``,
v0.2.23 and later); an older Pantograph answers it without ``goals`` (`goals_of_print` says None).
"""

from __future__ import annotations

import re
from typing import Any

from burnqed_core.lean.types import BackendDied


class BackendTimeout(BackendDied):
    """A request got no answer in time; the process group was killed."""


class PantographProtocolError(BackendDied):
    """Pantograph refused a request itself (``command``/``arguments`` error
    object: a malformed or version-mismatched request, or an answer without
    the fields the protocol promises). An infrastructure failure, never a
    verdict on a statement or a proof."""


PROTOCOL_ERRORS = frozenset({"command", "arguments"})
VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """``0.3.4`` / ``0.3.7/v4.21.0`` / ``0.2.19`` (Pantograph's ``--version``) as a tuple."""
    m = VERSION_RE.search(text or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


class Dialect:
    """What this Pantograph's ``frontend.process`` takes and answers."""

    def __init__(self, version: str | None) -> None:
        v = parse_version(version)
        # `invocations: Bool` (required) up to 0.3.1; `invocations?: Option String` (a file) from 0.3.2
        self.invocations_bool = v is not None and v < (0, 3, 2)
        # `sorrys` and the goal fields of units exist up to 0.3.7 (unknown: try, the first answer tells)
        self.sorrys = v is None or v <= (0, 3, 7)

    def process_request(self, text: str, *, sorrys: bool, new_constants: bool,
                        read_header: bool = False) -> dict[str, Any]:
        """Every field that Lean's derived decoding of ``FrontendProcess``
        requires in any version (unknown keys are ignored by all of them)."""
        payload: dict[str, Any] = {"file": text, "readHeader": read_header, "inheritEnv": False,
                                   "sorrys": sorrys, "typeErrorsAsGoals": False, "newConstants": new_constants}
        if self.invocations_bool:
            payload["invocations"] = False
        return payload

    def corrected_by(self, error: ReplError) -> bool:
        """Whether a ``command`` error object to ``frontend.process`` says that this dialect's ``invocations``
        field is wrong (``property not found: invocations`` or ``invocations?: String expected``); if it does,
        the field is flipped (the caller sends the request once more)."""
        if error.kind != "command" or "invocations" not in error.desc:
            return False
        self.invocations_bool = not self.invocations_bool
        return True


def goals_of_print(answer: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The goals of a ``goal.print {"goals": true}`` answer; None where this Pantograph's ``goal.print`` has no
    ``goals`` field (before v0.2.23: only ``root``/``parent``)."""
    goals = answer.get("goals")
    return goals if isinstance(goals, list) else None


class ReplError(RuntimeError):
    """The REPL answered ``{"error": kind, "desc": text}``."""

    def __init__(self, kind: str, desc: str) -> None:
        super().__init__(f"Pantograph {kind} error: {desc}")
        self.kind = kind
        self.desc = desc

    @property
    def is_interrupt(self) -> bool:
        """Pantograph's own ``timeout`` option fired (0.3.0+)."""
        return self.kind == "internal" and "interrupt" in self.desc

