"""The Pantograph backend: a client for Pantograph's REPL executable (prod: native Lean + Mathlib), one module per
concept:

* `burnqed_core.lean.pantograph.dialect`: what a version takes and answers (``frontend.process``'s required
  fields, ``invocations`` included where it is a required Bool, 0.2.x-0.3.1; ``goal.print`` with goals; error
  objects);
* `burnqed_core.lean.pantograph.rendering`: goals rendered as Lean's ``plainGoal`` prints them, Lean messages in
  both wire forms, ``goal.tactic`` answers of every version;
* `burnqed_core.lean.pantograph.sources`: the texts sent to ``frontend.process`` (a theorem's start, an
  elaboration with ``#print axioms``) and what is read back from their units;
* `burnqed_core.lean.pantograph.process`: `PantographBackend`, one REPL process (start, requests, goal states,
  replay, the `LeanBackend` methods).

The names below stay importable from ``burnqed_core.lean.pantograph``. The wire shapes of each version and where
they come from are listed in ``tests/fake_pantograph.py``.
"""

from burnqed_core.lean.pantograph.dialect import (
    PROTOCOL_ERRORS,
    BackendTimeout,
    Dialect,
    PantographProtocolError,
    ReplError,
    goals_of_print,
    parse_version,
)
from burnqed_core.lean.pantograph.process import PantographBackend
from burnqed_core.lean.pantograph.rendering import (
    interpret_tactic_result,
    parse_message,
    render_goal,
    render_goals,
)
from burnqed_core.lean.pantograph.sources import (
    START_DECL,
    parse_print_axioms,
    start_source,
    statement_binder_names,
    strip_imports,
    user_declarations,
)

__all__ = (
    "PROTOCOL_ERRORS",
    "START_DECL",
    "BackendTimeout",
    "Dialect",
    "PantographBackend",
    "PantographProtocolError",
    "ReplError",
    "goals_of_print",
    "interpret_tactic_result",
    "parse_message",
    "parse_print_axioms",
    "parse_version",
    "render_goal",
    "render_goals",
    "start_source",
    "statement_binder_names",
    "strip_imports",
    "user_declarations",
)
