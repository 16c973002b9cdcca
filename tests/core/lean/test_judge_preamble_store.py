"""The trusted checker's preamble store (`burnqed_core/lean/judge.lean`): a preamble is elaborated, and its
declarations replayed through the kernel, once per worker; a later request with the same preamble starts
from that state and gets the verdicts a fresh run gives, and nothing a request's candidate did reaches
another request. Real embedded Lean (the session's worker)."""

from __future__ import annotations

import secrets

import pytest

from burnqed_core.data.theorems.file_check import preamble_split, theorem_declarations
from burnqed_core.lean.embedded import STORED_PREAMBLE_LINES
from burnqed_core.lean.judge import JudgeReport
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.types import Status
from burnqed_core.lean.verdicts import verdict_problems
from burnqed_core.records import Theorem

pytestmark = pytest.mark.lean


def _preamble() -> tuple[str, str]:
    """A preamble no other test sends (so the store has not seen it): a recursive definition and a lemma."""
    f = f"storeF{secrets.token_hex(4)}"
    return f, (f"def {f} : Nat → Nat\n  | 0 => 0\n  | n + 1 => {f} n + 2\n\n"
               f"theorem {f}_zero : {f} 0 = 0 := rfl\n")


def _ok(report: JudgeReport, name: str) -> bool:
    return not verdict_problems(name, report.verdicts.get(name))


async def _stats(pool: LeanPool) -> tuple[int, int]:
    s = await pool.store_stats()
    assert s is not None, "the embedded worker keeps a preamble store"
    return s.entries, s.hits


async def test_a_preamble_is_elaborated_once_and_reused(lean_pool: LeanPool) -> None:
    f, pre = _preamble()
    _, hits0 = await _stats(lean_pool)
    first = await lean_pool.judge(pre, "", f"theorem a : {f} 1 = 2 := rfl\n", ["a"])
    assert _ok(first, "a")
    entries1, hits1 = await _stats(lean_pool)
    assert hits1 == hits0 and entries1 >= 1
    again = await lean_pool.judge(pre, "", f"theorem b : {f} 2 = 4 := by simp [{f}]\n", ["b"])
    wrong = await lean_pool.judge(pre, "", f"theorem c : {f} 2 = 5 := by decide\n", ["c"])
    _, hits2 = await _stats(lean_pool)
    assert hits2 == hits1 + 2
    assert _ok(again, "b")
    assert not _ok(wrong, "c")
    # The preamble's own lemma and definition are usable from the kept state, with the same axioms.
    uses = await lean_pool.judge(pre, "", f"theorem d : {f} 0 = 0 := {f}_zero\n", ["d"])
    assert _ok(uses, "d")
    assert uses.verdicts["d"].leaves == first.verdicts["a"].leaves


async def test_a_kept_preamble_carries_nothing_from_one_request_to_the_next(lean_pool: LeanPool) -> None:
    f, pre = _preamble()
    one = await lean_pool.judge(pre, "", (
        "def leak : Nat := 1\n"
        f"instance (priority := high) : OfNat Nat 7 := ⟨{f} 4⟩\n"
        "namespace Inner\n"
        "theorem one : leak = 1 := rfl\n"
        "end Inner\n"), ["Inner.one"])
    assert _ok(one, "Inner.one")
    _, hits = await _stats(lean_pool)
    # The next request starts from the kept preamble: the first one's definition, instance and namespace are
    # not there (7 is 7 again, `leak` is unknown).
    two = await lean_pool.judge(pre, "", "theorem two : leak = 1 := rfl\ntheorem seven : (7 : Nat) = 7 := rfl\n",
                                ["two", "seven"])
    assert (await _stats(lean_pool))[1] == hits + 1
    assert not _ok(two, "two")
    assert _ok(two, "seven")
    three = await lean_pool.judge(pre, "", f"theorem eight : (7 : Nat) = {f} 4 := by decide\n", ["eight"])
    assert not _ok(three, "eight")


async def test_a_preamble_with_errors_is_not_kept(lean_pool: LeanPool) -> None:
    bad = f"def broken{secrets.token_hex(4)} : Nat := \"no\"\n"
    _, hits0 = await _stats(lean_pool)
    for _ in range(2):
        r = await lean_pool.judge(bad, "", "theorem t : True := trivial\n", ["t"])
        assert r.preamble_error is not None
    assert (await _stats(lean_pool))[1] == hits0


async def test_no_text_reaches_the_store(lean_pool: LeanPool) -> None:
    """A text that declares syntax of the store's probe kind and uses it as a command gets no store (the probe
    needs positions that no parsed text has): its theorem gets its verdict, and the pool goes on answering.
    (Declaring syntax is code of the text's own: the process that ran it takes no further request.)"""
    f, pre = _preamble()
    r = await lean_pool.judge(pre, "", (
        'syntax (name := BurnqedJudge.preambleStoreProbe) "burnqed" : command\n'
        "burnqed\n"
        f"theorem p : {f} 1 = 2 := rfl\n"), ["p"])
    assert _ok(r, "p")
    after = await lean_pool.judge(pre, "", f"theorem q : {f} 3 = 6 := rfl\n", ["q"])
    assert _ok(after, "q")
    again = await lean_pool.judge(pre, "", f"theorem s : {f} 3 = 7 := rfl\n", ["s"])
    assert not _ok(again, "s")
    assert (await _stats(lean_pool))[0] >= 1


async def test_a_search_document_takes_a_long_preamble_from_the_store(lean_pool: LeanPool) -> None:
    """A search on a theorem with a long preamble: its documents take the preamble's state from the store
    (the second theorem's start is a hit), its steps read the preamble's definitions, a step that closes the
    goal is what the checker accepts; a long preamble with an error is a start error."""
    f, pre = _preamble()
    long = pre + "".join(f"def {f}_pad{i} : Nat := {i}\n" for i in range(STORED_PREAMBLE_LINES))
    one = Theorem(name="s1", preamble=long, statement=f": {f} 2 = 4")
    start = await lean_pool.start_proof(one)
    assert start.ok and start.state is not None and start.state.goals
    _, hits = await _stats(lean_pool)
    two = Theorem(name="s2", preamble=long, statement=f"(n : Nat) : {f} n = 2 * n")
    start2 = await lean_pool.start_proof(two)
    assert start2.ok and start2.state is not None
    assert (await _stats(lean_pool))[1] > hits
    steps = await lean_pool.apply_many([(start.state, "decide"), (start.state, f"exact {f}_pad3"),
                                        (start2.state, "induction n <;> simp_all [" + f + "] <;> omega")])
    assert steps[0].ok and steps[0].state is not None and steps[0].state.goals == ()
    assert not steps[1].ok
    assert steps[2].ok and steps[2].state is not None and steps[2].state.goals == ()
    assert (await lean_pool.check_proof(one, ["decide"])).ok
    bad = Theorem(name="s3", preamble=long + 'def oops : Nat := "x"\n', statement=": True")
    assert (await lean_pool.start_proof(bad)).status is Status.START_ERROR


def test_the_definitions_of_a_file_end_where_its_first_theorem_command_starts() -> None:
    defs = "set_option autoImplicit true\n\ndef g (n : Nat) : Nat := n + 1\n\n"
    for head, line in [("theorem t1 : g 0 = 1 := rfl\n", 4),
                       ("/-- doc -/\n@[simp] private theorem t1 : g 0 = 1 := rfl\n", 4),
                       ("@[simp]\ntheorem t1 : g 0 = 1 := rfl\n", 4)]:
        text = defs + head + "theorem t2 : g 1 = 2 := rfl\n"
        decls = theorem_declarations(text)
        assert decls is not None
        assert preamble_split(text, decls) == line, head
    # No split where the theorem shares its line with other text or carries an `… in` prefix, nor before
    # a file that starts with its first theorem.
    for text in [defs + "set_option maxRecDepth 100 in\ntheorem t1 : g 0 = 1 := rfl\n",
                 "def h := 1 theorem t1 : h = 1 := rfl\n",
                 "theorem t1 : 1 = 1 := rfl\n"]:
        decls = theorem_declarations(text)
        assert decls is not None
        assert preamble_split(text, decls) is None, text
