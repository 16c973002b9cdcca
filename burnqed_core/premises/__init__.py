"""Premise retrieval under the premise rule (issue 65).

A proof of a library theorem may use only the constants of the modules its module imports (the trusted
checker's premise rule, `burnqed_core.records.Theorem.module`); a proof of a theorem of a user's file may use
the library and what the file states before the theorem (its preamble). This package finds, for a goal, the
premises such a proof may use that are most likely to help, and turns them into candidate steps:

* `tokens`: the lexical pieces BM25 compares (a name split on ``.``, ``_`` and case; the constants and notation
  symbols of a type);
* `records`: `Premise` (a name, its module or file position, its type as Lean prints it);
* `local`: the premises a theorem's own preamble states (its definitions and lemmas);
* `index`: `PremiseIndex`, BM25 (the `bm25s` library) over the library's premises with the premise rule as a
  mask, plus a theorem's own premises; `PremiseIndex.retrieve`;
* `library`: the library's premises and import graph read by the embedded Lean, cached by the Lean's identity;
* `steps`: premise steps (``rw [p]``, ``simp only [p]``, ``exact p``, ``apply p``) as search candidates.
"""
