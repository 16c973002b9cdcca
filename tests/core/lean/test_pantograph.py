"""Contract tests of the Pantograph client against a fake REPL process
(tests/fake_pantograph.py) that answers with the real message shapes of
Pantograph 0.2.x, 0.3.1-0.3.3 and 0.3.4+; plus the goal renderer and the
message parser on canned payloads. No native Lean is installed here."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import psutil
import pytest

from burnqed_core.config import LeanConfig, PantographConfig
from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.pantograph import (
    BackendTimeout,
    Dialect,
    PantographBackend,
    PantographProtocolError,
    ReplError,
    interpret_tactic_result,
    parse_message,
    parse_print_axioms,
    parse_version,
    render_goal,
    start_source,
    statement_binder_names,
    strip_imports,
    user_declarations,
)
from burnqed_core.lean.types import BackendDied, GoalState, Status
from burnqed_core.records import Theorem
from tests import fake_pantograph

FAKE = Path(__file__).resolve().parents[3] / "tests" / "fake_pantograph.py"
PROTOS = ["0.2", "0.3.1", "0.3.4", "newest"]

OR = Theorem(name="or_swap", statement="(p q : Prop) : p ∨ q → q ∨ p")
ADD = Theorem(name="add_comm", statement="(n m : Nat) :\n    n + m = m + n")
LET = Theorem(name="let_k", statement="(n : Nat) : let k := n + 1; k = n + 1")
DOUBLE = Theorem(name="double", statement="(n : Nat) : double n = n + n",
                 preamble="import Mathlib\nopen Nat\n\ndef double (n : Nat) : Nat := n + n")

Factory = Callable[..., Awaitable[PantographBackend]]


@pytest.fixture
def fake_exe(tmp_path: Path) -> str:
    """The fake REPL behind an executable path, as a user's `repl` would be."""
    exe = tmp_path / "repl"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    return str(exe)


@pytest.fixture
async def make(fake_exe: str) -> AsyncIterator[Factory]:
    """Start backends on the fake; every one is closed after the test."""
    started: list[PantographBackend] = []

    async def factory(*flags: str, proto: str = "0.3.4", start: bool = True, tactic_timeout_s: float = 5.0,
                      ready_timeout_s: float = 20.0, memory_limit_mb: int | None = None,
                      grace_s: float = 2.0, trusted: bool = False) -> PantographBackend:
        # trusted=False: the `#print axioms` route, whose wire shapes the table-driven fake answers;
        # the trusted checker's route needs a real Lean (tests below).
        pg = PantographConfig(executable=fake_exe, modules=["Init", f"--proto={proto}", *flags],
                              ready_timeout_s=ready_timeout_s, memory_limit_mb=memory_limit_mb,
                              trusted_checker=trusted)
        backend = PantographBackend(LeanConfig(backend="pantograph", tactic_timeout_s=tactic_timeout_s, pantograph=pg))
        backend.request_grace_s = grace_s
        started.append(backend)
        if start:
            await backend.start()
        return backend

    yield factory
    for b in started:
        await b.close()


async def _wait_gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        await asyncio.sleep(0.05)
    return False


# --- the protocol, every version -------------------------------------------------------------------------------

@pytest.mark.parametrize("proto", PROTOS)
async def test_proof_steps_every_version(make: Factory, proto: str) -> None:
    b = await make(proto=proto)
    assert b.version == "0.3.4-fake"  # `repl --version`
    start = await b.start_proof(OR)
    assert start.ok, start.message
    root = start.state
    assert root is not None and root.handle is not None
    assert root.goals == ("p q : Prop\n⊢ p ∨ q → q ∨ p",)

    [r1] = await b.apply_many([(root, "intro h")])
    assert r1.ok and r1.state is not None
    assert r1.state.text == "p q : Prop\nh : p ∨ q\n⊢ q ∨ p"
    assert r1.state.tactics == ("intro h",)

    results = await b.apply_many([
        (r1.state, "cases h"),
        (r1.state, "assumption"),
        (r1.state, "exact (Or.inr"),
        (r1.state, "exact Or.comm.mp h"),
    ])
    cases, fail, parse, done = results
    assert cases.ok and cases.state is not None
    assert cases.state.goals == (
        "case inl\np q : Prop\nh✝ : p\n⊢ q ∨ p",
        "case inr\np q : Prop\nh✝ : q\n⊢ q ∨ p",
    )
    assert cases.state.text == "\n\n".join(cases.state.goals)
    assert fail.status is Status.TACTIC_ERROR and "assumption" in fail.message and fail.state is None
    assert parse.status is Status.PARSE_ERROR and "expected ')'" in parse.message
    assert done.ok and done.state is not None and done.state.is_proved

    [deeper] = await b.apply_many([(cases.state, "apply Or.inr")])
    assert deeper.ok and deeper.state is not None
    assert deeper.state.goals[0] == "case inl.h\np q : Prop\nh✝ : p\n⊢ p"
    assert deeper.state.tactics == ("intro h", "cases h", "apply Or.inr")


@pytest.mark.parametrize("proto", PROTOS)
async def test_sorry_is_a_failure_where_the_version_says_so(make: Factory, proto: str) -> None:
    b = await make(proto=proto)
    root = (await b.start_proof(OR)).state
    assert root is not None
    [r] = await b.apply_many([(root, "sorry")])
    if proto == "0.2":
        # 0.2.x has no hasSorry: the step looks like a proof; only the whole-proof re-check can refuse it.
        assert r.ok and r.state is not None and r.state.is_proved
    else:
        assert r.status is Status.TACTIC_ERROR and "sorry" in r.message
        assert await b.stat() == 1  # the sorry state was deleted again: only the root is held


@pytest.mark.parametrize("proto", PROTOS)
async def test_preamble_definitions_and_start_errors(make: Factory, proto: str) -> None:
    b = await make(proto=proto)
    start = await b.start_proof(DOUBLE)
    assert start.ok and start.state is not None, start.message
    assert start.state.goals == ("n : Nat\n⊢ double n = n + n",)
    [r] = await b.apply_many([(start.state, "unfold double; omega")])
    assert r.ok and r.state is not None and r.state.is_proved

    missing = await b.start_proof(Theorem(name="d", statement=DOUBLE.statement))
    assert missing.status is Status.START_ERROR and "unknown identifier 'double'" in missing.message
    unknown = await b.start_proof(Theorem(name="x", statement="(n : Nat) : n = n + 0"))
    assert unknown.status is Status.START_ERROR and unknown.state is None


async def test_let_values_and_multiline_statement(make: Factory) -> None:
    b = await make()
    root = (await b.start_proof(LET)).state
    assert root is not None
    assert root.goals == ("n : Nat\n⊢ let k := n + 1;\n    k = n + 1",)
    [r] = await b.apply_many([(root, "intro k")])
    assert r.state is not None and r.state.goals == ("n : Nat\nk : Nat := n + 1\n⊢ k = n + 1",)
    add = await b.start_proof(ADD)
    assert add.state is not None and add.state.goals == ("n m : Nat\n⊢ n + m = m + n",)


def test_start_source_blanks_imports() -> None:
    src = start_source(DOUBLE)
    assert "import" not in src and "def double" in src
    assert src.endswith("theorem burnqed_goal (n : Nat) : double n = n + n := sorry\n")
    lines = strip_imports("import Mathlib\nimport Aesop\nopen Nat\n#eval 1").split("\n")
    assert lines == ["", "", "open Nat", "#eval 1"]


@pytest.mark.parametrize("proto", PROTOS)
async def test_check_source_messages(make: Factory, proto: str) -> None:
    b = await make(proto=proto)
    text = ("import Mathlib\n"
            "theorem a (n m : Nat) : n + m = m + n := by\n  omega\n"
            "theorem b (p q : Prop) : p ∨ q → q ∨ p := by\n  assumption\n"
            "theorem c (n m : Nat) : n + m = m + n := by\n  sorry\n"
            "#eval 1 + 1\n")
    diags = await b.check_source(text)
    errors = [d for d in diags if d.is_error]
    assert [(d.line, d.message) for d in errors] == [(4, "tactic 'assumption' failed")]
    warnings = [d for d in diags if d.severity == 2]
    assert len(warnings) == 1 and "sorry" in warnings[0].message and warnings[0].line == 5
    assert [d.message for d in diags if d.severity == 3] == ["2"]
    clean = await b.check_source("theorem a (n m : Nat) : n + m = m + n := by\n  omega\n")
    assert clean == []


async def test_goal_start_and_error_objects(make: Factory) -> None:
    b = await make()
    r = await b.start_expr("∀ n : Nat, n + 0 = n")
    # Lean's pretty-printed goal, not the raw input
    assert r.ok and r.state is not None and r.state.goals == ("⊢ ∀ (n : Nat), n + 0 = n",)
    bad = await b.start_expr("undefined = 1")
    assert bad.status is Status.START_ERROR and "unknown identifier" in bad.message
    with pytest.raises(ReplError) as e:
        await b._call("no.such.command", {})
    assert e.value.kind == "command" and "Unknown command" in e.value.desc
    assert b.alive()  # an error object is an answer: the process stays


@pytest.mark.parametrize("proto", PROTOS)
async def test_goal_start_reads_its_goals_with_goal_print(make: Factory, proto: str) -> None:
    """`start_expr` reads the goals of a fresh `goal.start` state with `goal.print {"goals": true}`
    (v0.2.23+), no tactic run on it; a Pantograph whose `goal.print` has no goals (before v0.2.23) is read
    through `skip`. Either way the state is Lean's goal, and the only state the REPL keeps."""
    b = await make(proto=proto)
    before = b.requests
    r = await b.start_expr("∀ n : Nat, n + 0 = n")
    assert r.ok and r.state is not None and r.state.goals == ("⊢ ∀ (n : Nat), n + 0 = n",)
    # goal.start + goal.print; before v0.2.23 also a `skip` and the goal.delete of the root
    assert b.requests - before == (4 if proto == "0.2" else 2)
    assert await b.stat() == 1
    nxt = (await b.apply_many([(r.state, "intro n")]))[0]
    assert nxt.status is not Status.CRASHED


async def test_stat_free_reset_and_replay(make: Factory) -> None:
    b = await make()
    root = (await b.start_proof(OR)).state
    assert root is not None
    [r1] = await b.apply_many([(root, "intro h")])
    assert r1.state is not None
    assert await b.stat() == 2
    other = GoalState(theorem=ADD, handle=root.handle)  # same id, not this state: another process's handle
    await b.free([other])
    assert await b.stat() == 2
    await b.free([r1.state])
    assert await b.stat() == 1
    # a freed (or reset) handle is not reused: the path is replayed to a new state
    [again] = await b.apply_many([(r1.state, "cases h")])
    assert again.ok and again.state is not None and again.state.goals[0].startswith("case inl")
    await b.reset()
    assert await b.stat() == 0
    [after_reset] = await b.apply_many([(again.state, "apply Or.inr")])
    assert after_reset.ok and after_reset.state is not None
    assert after_reset.state.goals[0].startswith("case inl.h")


async def test_state_survives_a_new_process(make: Factory) -> None:
    """A state from a dead process is rebuilt on another one by its tactic path."""
    a = await make()
    root = (await a.start_proof(OR)).state
    assert root is not None
    [r1] = await a.apply_many([(root, "intro h")])
    assert r1.state is not None
    await a.close()
    b = await make()
    foreign = GoalState(theorem=OR, tactics=r1.state.tactics, goals=r1.state.goals, handle=r1.state.handle)
    [r2] = await b.apply_many([(foreign, "exact Or.comm.mp h")])
    assert r2.ok and r2.state is not None and r2.state.is_proved


async def test_pantograph_own_timeout_keeps_the_process(make: Factory) -> None:
    b = await make(proto="0.3.4")
    root = (await b.start_proof(OR)).state
    assert root is not None
    [r] = await b.apply_many([(root, "slow")])
    assert r.status is Status.TIMEOUT and r.status.is_infra
    assert b.alive()
    [ok] = await b.apply_many([(root, "intro h")])
    assert ok.ok


async def test_requests_are_serialised(make: Factory) -> None:
    """Concurrent callers on one process: each gets its own answer (one
    request at a time on the wire, answers read in order)."""
    b = await make()
    root = (await b.start_proof(OR)).state
    add = (await b.start_proof(ADD)).state
    assert root is not None and add is not None
    jobs = [b.apply_many([(root, "intro h")]), b.apply_many([(add, "omega")]), b.stat(),
            b.apply_many([(root, "assumption")]), b.check_source("theorem a (n m : Nat) : n + m = m + n := by simp")]
    r_or, r_add, n, r_fail, diags = await asyncio.gather(*jobs)
    assert r_or[0].state is not None and r_or[0].state.goals == ("p q : Prop\nh : p ∨ q\n⊢ q ∨ p",)
    assert r_add[0].state is not None and r_add[0].state.is_proved
    assert isinstance(n, int) and n >= 2
    assert r_fail[0].status is Status.TACTIC_ERROR
    assert diags == []


@pytest.mark.parametrize("proto", ["0.2", "0.3.4"])
async def test_whole_proof_check_through_the_checker(make: Factory, proto: str) -> None:
    b = await make(proto=proto)
    good = await b.check_proof(OR, ["intro h", "exact Or.comm.mp h"])
    assert good.ok, good.errors
    failing = await b.check_proof(OR, ["intro h", "assumption"])
    assert not failing.ok and any("assumption" in e for e in failing.errors)
    cheat = await b.check_proof(OR, ["sorry"])  # refused by the static rules before Lean
    assert not cheat.ok and any("sorry" in e for e in cheat.errors)
    with_def = await b.check_proof(DOUBLE, ["unfold double; omega"])
    assert with_def.ok, with_def.errors


# --- process faults -----------------------------------------------------------------------------------------------

async def test_crash_mid_request_raises_backend_died(make: Factory) -> None:
    b = await make()
    root = (await b.start_proof(OR)).state
    assert root is not None
    with pytest.raises(BackendDied):
        await b.apply_many([(root, "crash")])
    assert not b.alive()
    with pytest.raises(BackendDied):
        await b.apply_many([(root, "intro h")])


async def test_hang_times_out_and_kills_the_process_group(make: Factory) -> None:
    b = await make(tactic_timeout_s=0.5, grace_s=0.5)
    root = (await b.start_proof(OR)).state
    assert root is not None and b.pid is not None
    pid = b.pid
    t0 = time.monotonic()
    with pytest.raises(BackendTimeout):
        await b.apply_many([(root, "spawn-and-hang")])
    assert time.monotonic() - t0 < 5
    child = None
    for _ in range(60):  # stderr is drained concurrently: the line may land a moment later
        child = next((int(m.group(1)) for line in b.stderr_tail if (m := re.match(r"child (\d+)", line))), None)
        if child is not None:
            break
        await asyncio.sleep(0.05)
    assert child is not None, list(b.stderr_tail)
    assert await _wait_gone(pid), "the REPL survived"
    assert await _wait_gone(child), "a process the REPL spawned survived the kill of its group"
    assert not b.alive()


async def test_alive_is_false_once_the_process_exited_even_before_it_is_reaped(make: Factory) -> None:
    """The cause of a flaky `not b.alive()` under load: asyncio sets
    ``returncode`` only when its loop runs the child watcher's callback.
    Here the loop gets no turn between the kill and the check."""
    b = await make()
    assert b.alive() and b.pid is not None
    os.killpg(b.pid, 9)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # synchronous: the event loop cannot run the watcher's callback
        try:
            if psutil.Process(b.pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.01)
    assert b.proc is not None and b.proc.returncode is None  # not reaped as far as asyncio knows
    assert not b.alive()


async def test_cancelled_start_leaves_no_process(make: Factory) -> None:
    b = await make("--ready-delay=30", start=False, ready_timeout_s=60)
    task = asyncio.create_task(b.start())
    for _ in range(200):
        await asyncio.sleep(0.05)
        if b.proc is not None:
            break
    assert b.proc is not None
    pid = b.proc.pid
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_gone(pid), "a cancelled start left the REPL running"
    assert not b.alive()


async def test_garbage_answer_is_a_desync(make: Factory) -> None:
    b = await make()
    root = (await b.start_proof(OR)).state
    assert root is not None
    with pytest.raises(BackendDied, match="non-JSON"):
        await b.apply_many([(root, "garbage")])
    assert b.pid is not None and await _wait_gone(b.pid)


async def test_cancelled_request_kills_the_process(make: Factory) -> None:
    """An answer that arrives after the caller gave up would be read as the
    next request's: the process must not be reused."""
    b = await make()
    root = (await b.start_proof(OR)).state
    assert root is not None and b.pid is not None
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(b.apply_many([(root, "hang")]), 0.5)
    assert await _wait_gone(b.pid)
    with pytest.raises(BackendDied):
        await b.stat()


async def test_ready_line_timeout(make: Factory) -> None:
    b = await make("--no-ready", start=False, ready_timeout_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(LeanSetupError, match=r"no `ready\.` line"):
        await b.start()
    assert time.monotonic() - t0 < 5
    assert b.pid is not None and await _wait_gone(b.pid)


async def test_slow_ready_within_timeout(make: Factory) -> None:
    b = await make("--ready-delay=0.5", ready_timeout_s=10.0)
    assert b.alive() and b.startup_s >= 0.5


async def test_start_failure_and_missing_executable(make: Factory) -> None:
    b = await make("--fail-start", start=False)
    with pytest.raises(LeanSetupError, match="unknown package 'Mathlib'"):
        await b.start()
    missing = PantographBackend(LeanConfig(pantograph=PantographConfig(executable="/nonexistent/repl")))
    with pytest.raises(LeanSetupError, match="not found"):
        await missing.start()


async def test_stderr_is_drained(make: Factory) -> None:
    """1 MB on stderr before `ready.`: an undrained pipe (64 KB) would block the REPL."""
    b = await make("--stderr-flood=1000000", ready_timeout_s=10.0)
    assert b.alive() and await b.stat() == 0


async def test_rlimit_as_applied(make: Factory) -> None:
    b = await make(memory_limit_mb=3000)
    limits = Path(f"/proc/{b.pid}/limits").read_text()
    line = next(ln for ln in limits.splitlines() if ln.startswith("Max address space"))
    assert line.split()[3:5] == [str(3000 * 1024 * 1024)] * 2
    assert os.getpgid(b.pid or 0) == b.pid  # its own process group (start_new_session)
    assert b.rss_mb() > 0


async def test_rlimit_as_too_small_fails_start_cleanly(make: Factory) -> None:
    """The cap is real: a REPL that cannot fit in it never becomes ready."""
    b = await make(memory_limit_mb=8, start=False, ready_timeout_s=10.0)
    with pytest.raises(LeanSetupError):
        await b.start()
    assert not b.alive()


async def test_close_is_idempotent(make: Factory) -> None:
    b = await make()
    pid = b.pid
    await b.close()
    await b.close()
    assert pid is not None and await _wait_gone(pid)
    with contextlib.suppress(BackendDied):
        await b.stat()
    assert not b.alive()


# --- payload interpretation and rendering (canned shapes) ---------------------------------------------------------

# lenianiva/Pantograph v0.3.4 Test/Integration.lean test_automatic_mode (goal2l), serialised as the REPL does.
GOAL_INL = {"name": "_uniq.61", "userName": "inl", "fragment": "tactic", "target": {"pp": "q ∨ p"},
            "vars": [{"name": "_uniq.10", "userName": "p", "isInaccessible": False, "type": {"pp": "Prop"}},
                     {"name": "_uniq.13", "userName": "q", "isInaccessible": False, "type": {"pp": "Prop"}},
                     {"name": "_uniq.49", "userName": "h✝", "isInaccessible": True, "type": {"pp": "p"}}]}


def _var(name: str, typ: str, value: str | None = None) -> dict[str, object]:
    v: dict[str, object] = {"name": "_uniq.1", "userName": name, "isInaccessible": False, "type": {"pp": typ}}
    if value is not None:
        v["value"] = {"pp": value}
    return v


def test_render_goal_like_plain_goal() -> None:
    assert render_goal(GOAL_INL) == "case inl\np q : Prop\nh✝ : p\n⊢ q ∨ p"
    goal = {"name": "_uniq.5", "target": {"pp": "a + b = c"},
            "vars": [_var("a", "Nat"), _var("b", "Nat"), _var("h", "a = b"), _var("c", "Nat"),
                     _var("x", "Nat", "a + 1"), _var("y", "Nat"), _var("z", "Nat")]}
    assert render_goal(goal) == "a b : Nat\nh : a = b\nc : Nat\nx : Nat := a + 1\ny z : Nat\n⊢ a + b = c"
    assert render_goal({"name": "m", "target": {"pp": "p"}, "vars": []}) == "⊢ p"
    # conv goals (0.2.x isConversion, 0.3.3+ fragment) print `|`
    assert render_goal({"name": "m", "isConversion": True, "target": {"pp": "a"}}) == "| a"
    assert render_goal({"name": "m", "fragment": "conv", "target": {"pp": "a"}}) == "| a"
    # hygienic names print with a dagger; multi-line expressions are nested by 2
    hyg = {"name": "m", "target": {"pp": "∀ x,\n  p x"}, "vars": [_var("h._@.Mathlib.Foo._hyg.12", "p 0")]}
    assert render_goal(hyg) == "h✝ : p 0\n⊢ ∀ x,\n    p x"


def test_parse_message_both_wire_forms() -> None:
    serial = {"fileName": "<anonymous>", "pos": {"line": 3, "column": 2}, "endPos": {"line": 4, "column": 0},
              "keepFullRange": False, "severity": "warning", "caption": "", "data": "declaration uses 'sorry'",
              "kind": "hasSorry"}
    d = parse_message(serial)
    assert (d.severity, d.line, d.end_line, d.message) == (2, 2, 3, "declaration uses 'sorry'")
    d = parse_message("<Pantograph>:0:12: error: unsolved goals\np : Nat → Prop\n⊢ p 0\n")
    assert (d.severity, d.line, d.message) == (1, 0, "unsolved goals\np : Nat → Prop\n⊢ p 0")
    d = parse_message("<anonymous>:2:0: warning: declaration uses 'sorry'\n")
    assert (d.severity, d.line) == (2, 1)
    assert parse_message("<Pantograph>:1:5: unknown tactic").severity == 1  # parser errors carry no severity word
    assert parse_message("tactic 'assumption' failed\nn m : Nat\n⊢ n + m = m + n").severity == 1
    assert parse_message("2\n", unprefixed=3).severity == 3


@pytest.mark.parametrize(("payload", "status", "message"), [
    # v0.2.19 Protocol.lean GoalTacticResult
    ({"nextStateId": 1, "goals": [GOAL_INL]}, Status.OK, ""),
    ({"tacticErrors": ["tactic 'assumption' failed\nn m : Nat\n⊢ n + m = m + n"]}, Status.TACTIC_ERROR,
     "tactic 'assumption' failed"),
    ({"parseError": "<Pantograph>:1:3: unknown tactic"}, Status.PARSE_ERROR, "unknown tactic"),
    # v0.3.1-0.3.3: messages as strings, flags
    ({"messages": ["<Pantograph>:0:12: error: unsolved goals\n⊢ p 0\n"], "hasSorry": False, "hasUnsafe": False},
     Status.TACTIC_ERROR, "unsolved goals"),
    ({"nextStateId": 3, "goals": [], "messages": [], "hasSorry": True, "hasUnsafe": False}, Status.TACTIC_ERROR,
     "sorry"),
    ({"nextStateId": 3, "goals": [], "messages": [], "hasSorry": False, "hasUnsafe": True}, Status.TACTIC_ERROR,
     "unsafe"),
    # v0.3.4 Test/Integration.lean test_frontend_process_circular: `exact?` failure
    ({"messages": [{"fileName": "f", "kind": "[anonymous]", "pos": {"line": 0, "column": 0}, "endPos": None,
                    "keepFullRange": False, "severity": "error", "caption": "",
                    "data": "`exact?` could not close the goal. Try `apply?` to see partial suggestions."}],
      "hasSorry": False, "hasUnsafe": False}, Status.TACTIC_ERROR, "`exact?` could not close the goal"),
    ({"parseError": "<Pantograph>:1:6: expected term", "hasSorry": False, "hasUnsafe": False}, Status.PARSE_ERROR,
     "expected term"),
])
def test_interpret_tactic_result(payload: dict[str, object], status: Status, message: str) -> None:
    got_status, goals, msg, sid = interpret_tactic_result(payload)
    assert got_status is status
    assert message in msg
    if status is Status.OK:
        assert goals == ("case inl\np q : Prop\nh✝ : p\n⊢ q ∨ p",) and sid == 1


# --- request contract: every field Lean's derived FromJson requires, per version -------------------------------

VERSIONS = {"0.2.19": "0.2", "0.3.0": "0.3.1", "0.3.1": "0.3.1", "0.3.4": "0.3.4", "0.3.7/v4.21.0": "0.3.4",
            "0.3.8": "newest", "0.3.15": "newest"}


@pytest.mark.parametrize(("version", "proto"), VERSIONS.items())
def test_frontend_process_request_decodes_in_every_version(version: str, proto: str) -> None:
    dialect = Dialect(version)
    for sorrys in (True, False):
        for consts in (True, False):
            req = dialect.process_request("theorem x : True := trivial", sorrys=sorrys, new_constants=consts)
            assert fake_pantograph.decode_error("FrontendProcess", fake_pantograph.FRONTEND_PROCESS[proto], req) \
                is None, (version, req)
            assert req["inheritEnv"] is False and req["readHeader"] is False
    assert dialect.sorrys is (proto != "newest")


def test_the_old_request_is_refused_as_real_pantograph_refuses_it() -> None:
    """The request the client used to send (no typeErrorsAsGoals/newConstants/invocations)."""
    old = {"file": "theorem x : True := trivial", "readHeader": False, "inheritEnv": False, "sorrys": True}
    fp = fake_pantograph.FRONTEND_PROCESS
    assert fake_pantograph.decode_error("FrontendProcess", fp["0.3.4"], old) == {
        "error": "command", "desc": "Unable to parse json: Pantograph.Protocol.FrontendProcess.typeErrorsAsGoals: "
                                    "property not found: typeErrorsAsGoals"}
    assert "FrontendProcess.invocations: property not found: invocations" in \
        fake_pantograph.decode_error("FrontendProcess", fp["0.2"], old)["desc"]
    assert "FrontendProcess.invocations?: String expected" in fake_pantograph.decode_error(
        "FrontendProcess", fp["newest"], {**old, "invocations": False, "newConstants": False})["desc"]


@pytest.mark.parametrize("proto", PROTOS)
async def test_version_guess_corrected_by_the_first_answer(make: Factory, proto: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``--version`` says 0.3.4 whatever the proto: the answers set the dialect."""
    b = await make(proto=proto)
    assert (await b.start_proof(ADD)).ok
    assert b.dialect.invocations_bool is (proto in ("0.2", "0.3.1"))
    assert b.dialect.sorrys is (proto != "newest")
    # and a correct guess from the version needs no correction
    monkeypatch.setenv("FAKE_PANTOGRAPH_VERSION", {"0.2": "0.2.19", "0.3.1": "0.3.1", "0.3.4": "0.3.4",
                                                   "newest": "0.3.9/v4.22.0"}[proto])
    b2 = await make(proto=proto)
    assert (b2.dialect.invocations_bool, b2.dialect.sorrys) == (b.dialect.invocations_bool, b.dialect.sorrys)
    r = await b2.start_proof(OR)
    assert r.ok and r.state is not None and r.state.goals == ("p q : Prop\n⊢ p ∨ q → q ∨ p",)


async def test_pantograph_030_gets_invocations_from_the_first_request(make: Factory,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A REPL that says 0.3.0 (whose ``frontend.process`` requires ``invocations: Bool``) is sent it from the
    first request: one ``frontend.process``, no refusal to correct."""
    monkeypatch.setenv("FAKE_PANTOGRAPH_VERSION", "0.3.0")
    b = await make(proto="0.3.1")
    assert b.dialect.invocations_bool
    before = b.requests
    r = await b.start_proof(OR)
    assert r.ok and r.state is not None and r.state.goals == ("p q : Prop\n⊢ p ∨ q → q ∨ p",)
    assert b.requests - before == 1


async def test_command_error_is_infrastructure_never_a_verdict(make: Factory) -> None:
    from burnqed_core.lean.pool import LeanPool

    b = await make("--reject-frontend")
    with pytest.raises(PantographProtocolError, match=r"refused frontend\.process"):
        await b.start_proof(OR)
    with pytest.raises(BackendDied):
        await b.check_source("theorem a (n m : Nat) : n + m = m + n := by\n  omega\n")
    with pytest.raises(BackendDied):
        await b.elaborate("theorem a (n m : Nat) : n + m = m + n := by\n  omega\n", ["a"])
    assert b.alive()
    # through the pool: a crash-class infrastructure failure (retried once), never START_ERROR / a rejection
    cfg = b.config.model_copy(update={"self_test": False})
    pool = LeanPool(cfg, backend_factory=lambda: PantographBackend(cfg), num_workers=1)
    await pool.start()
    try:
        r = await pool.start_proof(OR)
        assert r.status is Status.CRASHED and r.status.is_infra and r.retried, r
        c = await pool.check_proof(OR, ["intro h", "exact Or.comm.mp h"])
        assert c.infra and not c.ok
    finally:
        await pool.close()


# --- elaborate: what Lean reports about a whole text -------------------------------------------------------------

GOOD = "theorem t1 (p q : Prop) : p ∨ q → q ∨ p := by\n  intro h\n  exact Or.comm.mp h\n"
ADD_SRC = "theorem t2 (n m : Nat) : n + m = m + n := by\n  omega\n"


@pytest.mark.parametrize("proto", PROTOS)
async def test_elaborate_declarations_axioms_and_completeness(make: Factory, proto: str) -> None:
    b = await make(proto=proto)
    e = await b.elaborate(GOOD + "\n" + ADD_SRC, ["t1", "t2"])
    assert e.complete and not [d for d in e.diagnostics if d.is_error]
    assert e.axioms == {"t1": [], "t2": ["propext"]}
    # 0.2.19 has no newConstants: the declarations are unknown (the checker fails closed)
    assert e.declarations == (None if proto == "0.2" else ["t1", "t2"])
    # Lean's messages of the text only: nothing from the appended commands
    assert all(d.line < 6 for d in e.diagnostics)

    sorry = await b.elaborate("theorem t3 (n m : Nat) : n + m = m + n := by\n  sorry\n", ["t3"])
    assert sorry.axioms == {"t3": ["sorryAx"]} and sorry.complete
    assert [d.severity for d in sorry.diagnostics] == [2]

    failed = await b.elaborate("theorem t4 (p q : Prop) : p ∨ q → q ∨ p := by\n  assumption\n", ["t4"])
    assert failed.axioms == {"t4": ["sorryAx"]} and [d.is_error for d in failed.diagnostics] == [True]

    classical = await b.elaborate("theorem t5 (n m : Nat) : n + m = m + n := by\n  exact Classical.choice _\n",
                                  ["t5"])
    assert classical.axioms == {"t5": ["Classical.choice", "propext", "Quot.sound"]}
    if proto != "0.2":
        assert classical.declarations == ["t5"]  # the auxiliary t5.proof_1 is not a declaration of the text

    # `#exit`: Lean stops; nothing after it is answered and the text is not complete
    cut = await b.elaborate(GOOD + "#exit\n" + ADD_SRC, ["t1", "t2"])
    assert not cut.complete and cut.axioms == {}

    # a name that is not declared gets no answer
    missing = await b.elaborate(GOOD, ["t1", "nope"])
    assert missing.axioms == {"t1": []} and missing.complete
    with pytest.raises(ValueError, match="not a declaration name"):
        await b.elaborate(GOOD, ["t1\n#eval 1"])


async def test_elaborate_runs_in_a_fresh_environment(make: Factory) -> None:
    b = await make()
    with_def = "def double (n : Nat) : Nat := n + n\n\ntheorem d1 (n : Nat) : double n = n + n := by\n  omega\n"
    first = await b.elaborate(with_def, ["d1"])
    assert first.complete and not [d for d in first.diagnostics if d.is_error]
    assert first.declarations == ["double", "d1"]
    # `double` of the earlier request is not visible
    alone = await b.elaborate("theorem d2 (n : Nat) : double n = n + n := by\n  omega\n", ["d2"])
    assert any("unknown identifier 'double'" in d.message for d in alone.diagnostics if d.is_error)
    # whereas a request that inherits the environment (never sent by the client) would leave it behind
    await b._call("frontend.process", {**b.dialect.process_request(with_def, sorrys=False, new_constants=False),
                                       "inheritEnv": True})
    polluted = await b.elaborate("theorem d2 (n : Nat) : double n = n + n := by\n  omega\n", ["d2"])
    assert not [d for d in polluted.diagnostics if d.is_error]  # the fake models that: the check above can fail


def test_protocol_helpers() -> None:
    assert parse_version("0.3.7/v4.21.0") == (0, 3, 7) and parse_version("0.2.19") == (0, 2, 19)
    assert parse_version("garbage") is None
    assert parse_print_axioms("'foo' depends on axioms: [propext, Classical.choice]") == \
        ("foo", ["propext", "Classical.choice"])
    assert parse_print_axioms("'«a b».c' does not depend on any axioms") == ("a b.c", [])
    assert parse_print_axioms("unknown constant 'foo'") is None
    assert user_declarations(["t", "t.proof_1", "t.match_1", "_private.X.0.y", "S", "S.mk", "S.rec", "f.eq_def",
                              "f._unfold", "T.casesOn"]) == ["t", "S", "S.mk"]
    assert statement_binder_names("(p q : Prop) {n : Nat} [inst : Foo n] [Bar] ⦃x : α⦄ : p") == \
        ["p", "q", "n", "inst", "_", "x"]
    assert statement_binder_names(": 1 = 1") == []
    assert statement_binder_names("(h : (fun x => x) 1 = 1) : True") == ["h"]
    assert statement_binder_names("x : Nat") is None


def test_command_ranges_stand_in_for_declaration_names() -> None:
    """A Pantograph without ``newConstants`` (0.2.x) reports only command
    ranges: the checked theorem must be the one command after the preamble,
    spanning the whole proof, and Lean must have answered its axioms."""
    from burnqed_core.lean.checker import declaration_problems
    from burnqed_core.lean.types import Elaboration

    def elab(commands: list[tuple[int, int]], answered: bool = True) -> Elaboration:
        return Elaboration(declarations=None, command_lines=commands, complete=True,
                           axioms={"burnqed_checked": []} if answered else {})

    assert declaration_problems(elab([(0, 1), (2, 2), (3, 6)]), "burnqed_checked", 3, 6) == []
    assert declaration_problems(elab([(0, 1), (3, 5), (6, 6)]), "burnqed_checked", 3, 6)   # a command after it
    assert declaration_problems(elab([(0, 1), (3, 4)]), "burnqed_checked", 3, 6)           # ends early
    assert declaration_problems(elab([(0, 4)]), "burnqed_checked", 3, 6)                   # starts in the preamble
    assert declaration_problems(elab([(0, 1), (3, 6)], answered=False), "burnqed_checked", 3, 6)
    assert declaration_problems(Elaboration(complete=True), "burnqed_checked", 3, 6)        # nothing reported


# --- the trusted checker through frontend.process ---------------------------------------------------------------


@pytest.mark.lean
@pytest.mark.own_lean  # a batch Lean of its own, never the session's worker
@pytest.mark.parametrize("proto", ["0.3.4", "0.3.1"])
async def test_trusted_checker_runs_through_frontend_process(
        make: Factory, lean_config: LeanConfig, monkeypatch: pytest.MonkeyPatch, proto: str) -> None:
    """The same checker as the embedded backend's: its header (with the
    process's modules) and one `burnqed_judge` command, read with its own
    header. The fake hands that document to a real Lean (the embedded one,
    batch mode) and answers in the version's wire shape (message objects in
    0.3.4, strings in 0.3.1). Static rules off: a true proof passes, a false
    one that re-scopes what follows it does not."""
    from burnqed_core.lean import checker

    monkeypatch.setenv("BURNQED_FAKE_PANTOGRAPH_LEAN", str(lean_config.embedded.install_dir))
    monkeypatch.setattr(checker, "static_problems", lambda *_: [])
    backend = await make(proto=proto, trusted=True, tactic_timeout_s=60.0)  # batch Lean: ~25 s idle
    assert checker.has_trusted_checker(backend)
    if proto == "0.3.4":
        good = await backend.check_proof(Theorem(name="two", statement=": 2 + 2 = 4"), ["decide"])
        assert good.ok, good.errors
    else:
        bad = await backend.check_proof(Theorem(name="f", statement=": False"), ["sorry", "namespace Evil"])
        assert not bad.ok and bad.errors


async def test_trusted_checker_fails_closed_when_lean_cannot_run_it(
        make: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pantograph whose Lean cannot read the checker's header (an old Lean:
    no module system) gives no verdict: every proof is rejected, with what
    Lean said, never accepted through the weaker route."""
    monkeypatch.delenv("BURNQED_FAKE_PANTOGRAPH_LEAN", raising=False)
    backend = await make(trusted=True)
    res = await backend.check_proof(Theorem(name="two", statement=": 2 + 2 = 4"), ["decide"])
    assert not res.ok
    assert "trusted checker" in res.errors[0] and "unknown module prefix" in res.errors[0]
    # an unusable answer retires the process: the pool replaces it
    assert "unusable" in backend.tainted and backend.pid is not None and await _wait_gone(backend.pid)
    header = backend.judge_header()
    assert "public import" not in header  # Init only: nothing more to import
    backend.pg = backend.pg.model_copy(update={"modules": [*backend.pg.modules, "Mathlib"]})
    assert "public import Mathlib\n" in backend.judge_header()
    backend.pg = backend.pg.model_copy(update={"modules": [*backend.pg.modules, "bad name; #exit"]})
    with pytest.raises(LeanSetupError):
        backend.judge_header()


RUNS_CODE = """\
open Lean Elab Command in
elab "#note" : command => logInfo "the file's own command ran"
#note
theorem one : (1:Nat) = 1 := rfl
"""
# The trusted checker's answer to RUNS_CODE in list mode, after its nonce: its fields, recorded from the embedded
# Lean (2026-12-07; the scratch file's name in the two `_aux` names replaced by `file:///input.lean`). The file's
# command ran (`R`), and Lean's errors are those of the embedded library's exported-level `.olean`s.
RAN_CODE_ANSWER = [
    "v2", "X", "1", "T", "0", "one", "theorem", "1", "3", "0", "3", "3", "1 = 1", "D", "0", "ok", "0", "W", "0",
    "meta command#note, _aux_external:file:///input.lean___elabRules_command#note_1", "W", "0",
    "code Lean.Parser.Command.elab, command#note", "R", "commands Lean.Parser.Command.elab, command#note", "R",
    "meta _aux_external:file:///input.lean___elabRules_command#note_1", "M", "error", "1", "0", "1", "62",
    "Unknown constant `_private.Lean.Log.0.Lean.MessageData.appendDescriptionWidgetIfNamed`", "M", "error", "2", "0",
    "2", "5", "elaboration function for `«command#note»` has not been implemented", "end"]


async def test_a_text_that_ran_code_retires_the_process(make: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pantograph's stdin and stdout carry the commands and their answers: a task that a judged text's own code
    left running could read the next command (with its nonce) or write a forged answer. After a report that says
    the text ran code, the process is killed and takes no further request (the pool starts a fresh one). The
    checker's answer is the real one above, in 0.3.4's message objects."""
    from burnqed_core.lean.pantograph import process as process_module

    backend = await make(trusted=True)
    pid = backend.pid
    assert pid is not None
    nonce = "burnqed-" + "5" * 32
    answer = nonce + "".join(f"{len(f)}:{f}" for f in RAN_CODE_ANSWER)

    async def answered(text: str, **_: object) -> list[dict[str, object]]:
        assert nonce in text  # the request is the checker's document of this call
        return [{"messages": [{"severity": "information", "pos": {"line": 4, "column": 0}, "data": answer}]}]

    with monkeypatch.context() as m:
        m.setattr(process_module, "new_nonce", lambda: nonce)
        m.setattr(backend, "process_file", answered)
        elab = await backend.elaborate(RUNS_CODE, declared=True)
    assert elab.ran_code and "ran code of its own" in backend.tainted
    assert await _wait_gone(pid)
    with pytest.raises(BackendDied, match="retired"):
        await backend.check_proof(Theorem(name="two", statement=": 2 + 2 = 4"), ["decide"])
