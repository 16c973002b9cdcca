"""A theorem file evaluates as Lean reads it (issue 55): its file-level options (``set_option autoImplicit
true`` at the top), ``open``s, namespaces, sections and ``variable``s reach each theorem's document; a theorem that
cannot start is reported with Lean's error in the eval's summary, never silently counted as unsolved. On the real
embedded Lean (the session's `lean_pool`). The theorems are written for this test."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.eval.run import run_eval
from burnqed_core.eval.summary import SummaryOptions, summarize
from burnqed_core.lean.source import STRICT_LINE, sets_auto_implicit, strict_line
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.fixed import FixedTacticsPolicy

# Auto-bound names (`k`, `j`), a function reached through `open Nat` (`succ`), a name declared in a namespace
# and used unqualified inside it, a section `variable` the statement mentions (`m`).
LOOSE = """\
/- Halves and doubles, stated with auto-bound names as a file of someone else's might be. -/
set_option autoImplicit true

open Nat

namespace Halves

def twice (n : Nat) : Nat := n + n

theorem twice_pos (h : 0 < k) : 0 < twice k := by
  unfold twice
  omega

section Bounds
variable (m : Nat)

theorem half_le_self : m / 2 ≤ m := by
  omega

theorem twice_mono (h : k ≤ m) : twice k ≤ twice m := by
  unfold twice
  omega
end Bounds

theorem succ_twice : succ (twice j) = twice j + 1 := by
  rfl

end Halves
"""
# The same kind of statement in a file that sets nothing: the project's default (auto-bound names off) holds,
# and the statement does not start.
STRICT = """\
/- A file that does not set autoImplicit. -/
theorem loose_ne (h : 0 < q) : q ≠ 0 := by
  omega
"""


def test_only_a_file_that_sets_the_option_keeps_it() -> None:
    assert sets_auto_implicit("set_option autoImplicit true\nopen Nat\n")
    assert sets_auto_implicit("/- head -/\nset_option relaxedAutoImplicit false\n")
    assert not sets_auto_implicit("set_option autoImplicit true in\ndef f (x : α) : α := x\n")  # one declaration
    assert not sets_auto_implicit("-- set_option autoImplicit true\ndef f := 1\n")  # a comment
    assert strict_line("open Nat\n") == STRICT_LINE and strict_line("set_option autoImplicit true\n") == ""


@pytest.mark.lean
async def test_a_file_with_auto_bound_names_starts_and_checks_as_lean_reads_it(lean_pool: ProofEnv,
                                                                               tmp_path: Path) -> None:
    (tmp_path / "halves.lean").write_text(LOOSE, encoding="utf-8")
    thms = load_theorems(tmp_path / "halves.lean")
    assert [t.name for t in thms] == ["Halves.twice_pos", "Halves.half_le_self", "Halves.twice_mono",
                                      "Halves.succ_twice"]
    assert all(sets_auto_implicit(t.preamble) for t in thms)
    starts = await asyncio.gather(*(lean_pool.start_proof(t) for t in thms))
    assert [s.message for s in starts if not s.ok] == []
    checks = await asyncio.gather(*(lean_pool.check_proof(t, t.proof) for t in thms))
    assert {t.name: c.errors[:1] for t, c in zip(thms, checks, strict=True) if not c.ok} == {}
    # a wrong proof still fails, auto-bound names or not
    wrong = await lean_pool.check_proof(thms[0], ["rfl"])
    assert not wrong.ok
    # a section variable the statement names is how the file states it; one that `include` adds to every
    # theorem is a hypothesis the statement's text does not show: refused (a file's preamble is not trusted)
    hidden = thms[1].model_copy(update={"preamble": thms[1].preamble + "variable (hf : False)\ninclude hf\n"})
    refused = await lean_pool.check_proof(hidden, ["exact hf.elim"])
    assert not refused.ok and any("changes what the statement means" in e for e in refused.errors), refused.errors


@pytest.mark.lean
async def test_a_theorem_that_cannot_start_is_reported_with_leans_error(lean_pool: ProofEnv, tmp_path: Path) -> None:
    (tmp_path / "halves.lean").write_text(LOOSE, encoding="utf-8")
    (tmp_path / "strict.lean").write_text(STRICT, encoding="utf-8")
    thms = [*load_theorems(tmp_path / "halves.lean")[:2], *load_theorems(tmp_path / "strict.lean")]
    prof = load_profile("tiny", overrides={"search.concurrency": 2, "search.flush_every": 1, "eval.budgets": [4],
                                           "eval.pass_k": 1, "search.automation.enabled": False})
    rows = await run_eval(prof, FixedTacticsPolicy(["omega", "unfold twice"]), lean_pool, thms, tmp_path / "eval",
                          iteration=0, benchmark="files", progress=False)
    s = summarize(rows, None, SummaryOptions(iteration=0, benchmark="files", budgets=[4]))
    assert s.start_errors == 1 and list(s.start_failures) == ["loose_ne"]
    assert "q" in s.start_failures["loose_ne"] and "nknown identifier" in s.start_failures["loose_ne"]
    assert "Halves.half_le_self" in s.solved  # the auto-bound file's theorems are searched like any other
