"""A verdict per theorem of a file in bounded time (`burnqed_core.data.theorems.file_check`): the chunk texts (no Lean),
the printed lines of `burnqed lean check`, and files whose theorems never finish, on a real Lean of the test's
own (its worker is killed at each timeout)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from burnqed_core.cli.lean import check_report
from burnqed_core.data.theorems.file_check import chunk_text, theorem_declarations
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.types import DeclaredTheorem, Elaboration
from burnqed_core.records import Theorem

FILE = """\
namespace A
def double (n : Nat) : Nat := n + n
@[simp] theorem double_eq (n : Nat) : double n = 2 * n := by
  unfold double
  omega
example : double 1 = 2 := rfl
end A
open A in
theorem uses (n : Nat) : double n = n * 2 := by
  rw [double_eq]; omega
theorem last : True := trivial
"""


def test_theorem_declarations_and_chunk_texts() -> None:
    """Theorems before a chunk become axioms of the same name and statement (examples go), later text is
    cut, and every kept line stays where it was (the chunk's messages and ranges are the file's)."""
    decls = theorem_declarations(FILE)
    assert decls is not None
    assert [(d.name, d.keyword, d.line, d.end_line) for d in decls] == [
        ("A.double_eq", "theorem", 2, 4), ("A.example_6", "example", 5, 5), ("uses", "theorem", 8, 9),
        ("last", "theorem", 10, 10)]
    text = chunk_text(FILE, decls, 2, 2)
    lines = text.split("\n")
    assert lines[2] == "@[simp] axiom double_eq (n : Nat) : double n = 2 * n"
    assert lines[3] == lines[4] == lines[5] == ""
    assert lines[8:10] == FILE.split("\n")[8:10]
    assert "last" not in text and text.count("\n") == 10
    everything = chunk_text(FILE, decls, len(decls), len(decls) - 1)  # the definitions alone
    assert "theorem" not in everything and "axiom double_eq" in everything and "axiom last : True" in everything


def test_timeout_lines_of_lean_check() -> None:
    """`burnqed lean check` prints a TIMEOUT line for a theorem without a verdict and counts it as not ok."""
    theorems = [DeclaredTheorem(name=n, kind="theorem", found=n != "slow", line=i, column=0, start_line=i,
                                end_line=i, statement="True") for i, n in enumerate(["a", "slow", "b"])]
    text = "theorem a : True := trivial\ntheorem slow : True := trivial\ntheorem b : True := trivial\n"
    elab = Elaboration(theorems=theorems, axioms={"a": [], "b": []}, complete=True,
                       timed_out={"slow": "no verdict within its limit (5 s)"})
    lines, ok, total = check_report(text, elab)
    assert lines == ["ok a : True", "TIMEOUT slow: no verdict within its limit (5 s)", "ok b : True"]
    assert (ok, total) == (2, 3)


# --- real Lean --------------------------------------------------------------------------------------------------

# A theorem that never finishes here: the kernel reducing a power of 2^29 bits, under the file's own
# `maxHeartbeats 0` (which lifts no limit of the checker's: its limit is a wall clock). One such theorem, not
# two: each costs its limit and a worker's restart.
SLOW_FILE = """\
def double (n : Nat) : Nat := n + n
theorem before (n : Nat) : double n = 2 * n := by unfold double; omega
theorem middle : double 3 = 6 := rfl
set_option maxHeartbeats 0 in
theorem slow_option : (3:Nat) ^ (2 ^ 29) % 3 = 0 := by decide +kernel
theorem uses_before : double 4 = 8 := by rw [before]
theorem uses_slow : (3:Nat) ^ (2 ^ 29) % 3 = 0 ∧ True := ⟨slow_option, trivial⟩
theorem after : 1 + 1 = 2 := rfl
"""
# The slow theorem's own limit, which it waits out twice (alone and inside the whole file's request): short,
# since every request's limit adds the definitions' time and a margin stretched by the load (`file_check._limit`),
# which is what the innocent theorems beside it need.
LIMIT_S = 2.0


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def own_pool() -> AsyncIterator[LeanPool]:
    from tests.fixtures_lean import own_lean_pool

    async with own_lean_pool(self_test=False, verdict_cache=0) as pool:
        yield pool  # type: ignore[misc]


@pytest.mark.lean
@pytest.mark.slow
@pytest.mark.own_lean
async def test_theorems_that_never_finish_cost_only_their_own_verdict(own_pool: LeanPool) -> None:
    """Innocent theorems beside one that never finishes get their verdicts; the slow one gets TIMEOUT; a
    theorem using it fails (it is not accepted on an unchecked lemma); a theorem using an accepted
    one is accepted; nothing raises, and the pool still answers afterwards."""
    from burnqed_core.data.theorems.file_check import check_file

    said: list[str] = []
    elab = await check_file(own_pool, SLOW_FILE, LIMIT_S, progress=said.append)
    lines, ok, total = check_report(SLOW_FILE, elab)
    by_name = {line.split(" ")[1].rstrip(":"): line for line in lines if not line.startswith(" ")}
    assert total == 6 and ok == 4, lines
    for name in ("before", "middle", "uses_before", "after"):
        assert by_name[name].startswith(f"ok {name} :"), lines
    assert by_name["slow_option"].startswith("TIMEOUT slow_option:"), lines
    assert by_name["uses_slow"].startswith("FAIL uses_slow:") and "slow_option" in by_name["uses_slow"], lines
    assert not any(line.startswith("FAIL <file>") for line in lines), lines
    assert any("per request" in m for m in said), said
    good = Theorem(name="comm", statement="(a b : Nat) : a + b = b + a")
    assert (await own_pool.check_proof(good, ["omega"])).ok
