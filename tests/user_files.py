"""A user's theorem file of the shape people bring (written for these tests, generated, not copied from
anywhere): `set_option autoImplicit true` at the top, about 100 definitions in three namespaces inside
`noncomputable section`s, 15 of them by well-founded recursion with `termination_by`/`decreasing_by`, a
`DecidablePred` instance through `decidable_of_iff`, and the theorems (code properties) after the
definitions. Used by the tests of `burnqed lean check` and `burnqed eval` on users' files and by
`benchmarks/user_file.py`."""

from __future__ import annotations

SCALES = range(1, 27)  # `Scale.grow{k}`
STEPS = range(1, 16)  # `Walk.down{k}`: well-founded recursion
MODS = range(2, 12)  # `Parity.divBy{k}`


def _scale() -> tuple[list[str], list[str]]:
    defs = ["namespace Scale", "noncomputable section", ""]
    thms = ["namespace Scale", ""]
    for k in SCALES:
        defs += [f"def grow{k} (n : Nat) : Nat := n * {k} + {k}",
                 f"def shrink{k} (n : Nat) : Nat := n / {k + 1}", ""]
        thms += [f"theorem grow{k}_pos (n : Nat) : 0 < grow{k} n := by unfold grow{k}; omega",
                 f"theorem grow{k}_mono (a b : Nat) (h : a ≤ b) : grow{k} a ≤ grow{k} b := by unfold grow{k}; omega",
                 f"theorem shrink{k}_le (n : Nat) : shrink{k} n ≤ n := by unfold shrink{k}; omega",
                 f"theorem grow{k}_zero : grow{k} 0 = {k} := by simp [grow{k}]", ""]
    defs += ["end", "", "end Scale", ""]
    thms += ["end Scale", ""]
    return defs, thms


def _walk() -> tuple[list[str], list[str]]:
    defs = ["namespace Walk", "noncomputable section", ""]
    thms = ["namespace Walk", ""]
    for k in STEPS:
        defs += [f"def down{k} (n : Nat) : Nat :=",
                 f"  if h : n ≤ {k} then 0 else 1 + down{k} (n - {k + 1})",
                 "termination_by n",
                 "decreasing_by omega", ""]
        thms += [f"theorem down{k}_small (n : Nat) (h : n ≤ {k}) : down{k} n = 0 := by",
                 f"  rw [down{k}]; simp [h]",
                 f"theorem down{k}_zero : down{k} 0 = 0 := by rw [down{k}]; simp",
                 f"theorem down{k}_le (n : Nat) : down{k} n ≤ n := by",
                 "  induction n using Nat.strongRecOn with",
                 "  | _ n ih =>",
                 f"    rw [down{k}]",
                 "    split",
                 "    · omega",
                 f"    · have := ih (n - {k + 1}) (by omega); omega", ""]
    defs += ["end", "", "end Walk", ""]
    thms += ["end Walk", ""]
    return defs, thms


def _parity() -> tuple[list[str], list[str]]:
    defs = ["namespace Parity", "noncomputable section", ""]
    thms = ["namespace Parity", ""]
    for k in MODS:
        defs += [f"def divBy{k} (n : Nat) : Prop := n % {k} = 0",
                 f"def tag{k} (n : Nat) : Nat := if n % {k} = 0 then 1 else 0",
                 f"def combo{k} (n : Nat) : Nat := tag{k} n + n % {k}", ""]
        thms += [f"theorem divBy{k}_zero : divBy{k} 0 := by simp [divBy{k}]",
                 f"theorem divBy{k}_mul (n : Nat) : divBy{k} ({k} * n) := by simp [divBy{k}]",
                 f"theorem tag{k}_le (n : Nat) : tag{k} n ≤ 1 := by unfold tag{k}; split <;> omega",
                 f"theorem tag{k}_self : tag{k} {k} = 1 := by simp [tag{k}]", ""]
    defs += ["instance : DecidablePred divBy2 := fun n => decidable_of_iff (n % 2 = 0) Iff.rfl",
             "noncomputable def witness : Nat := Classical.choose (⟨0, rfl⟩ : ∃ n : Nat, n = 0)", "",
             "end", "", "end Parity", ""]
    thms += ["theorem divBy2_four : divBy2 4 := by decide",
             "theorem witness_eq : witness = 0 := Classical.choose_spec (⟨0, rfl⟩ : ∃ n : Nat, n = 0)", "",
             "end Parity", ""]
    return defs, thms


def _first(thms: list[str], keep: int) -> tuple[list[str], int]:
    """The lines of ``thms`` with at most ``keep`` theorems (a theorem runs to the next theorem, blank line or
    `end`), and how many it kept."""
    out, kept, inside = [], 0, False
    for line in thms:
        if line.startswith("theorem "):
            inside = kept < keep
            kept += inside
        elif not line.strip() or line.startswith(("end ", "namespace ")):
            inside = False
            out.append(line)
            continue
        if inside:
            out.append(line)
    return out, kept


def user_file_text(max_theorems: int | None = None) -> str:
    """The file: ~100 definitions, then ~190 theorems (a few of them false or unprovable as written: a
    verdict is a verdict); ``max_theorems``: the first that many theorems of each namespace only."""
    parts = [_scale(), _walk(), _parity()]
    lines = ["set_option autoImplicit true", ""]
    for defs, _ in parts:
        lines += defs
    for _, thms in parts:
        lines += thms if max_theorems is None else _first(thms, max_theorems)[0]
    return "\n".join(lines) + "\n"


def counts(text: str) -> tuple[int, int]:
    """(definitions, theorems) of a file of this module."""
    defs = sum(line.startswith(("def ", "noncomputable def ", "instance ")) for line in text.split("\n"))
    thms = sum(line.startswith("theorem ") for line in text.split("\n"))
    return defs, thms
