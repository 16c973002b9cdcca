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
* `steps`: premise steps (``rw [p]``, ``simp only [p]``, ``exact p``, ``apply p``) as search candidates;
* `rerank`: the learned re-ranker: BM25's best ``premises.rerank.candidates`` hits of a state re-ordered by a
  projection of the policy model's own embeddings (of the state's prompt and of each ``name : type`` line), trained
  with InfoNCE on the (state, premise) pairs of found proofs of earlier iterations (the ``premise_reranker``
  stage); `RerankedIndex` re-orders only what BM25 returned under the rule.

The re-ranker measured (`benchmarks/premise_rerank.py`, the ``core`` run of 2026-12-06: trained on the found proofs
of iterations 0 and 1 with iteration 2's model, measured on the theorems held out by a hash of their name, 28
training and 14 test pairs, seeds 0-2): BM25 alone recalls the premise a found step used at 1 in 50.0% and at 3 in
92.9% of the test pairs; re-ranked, 35.7-42.9% at 1 and 57.1-64.3% at 3. A few dozen pairs overfit (train
recall@1 57% -> 82-85%), and BM25 looks strong on these pairs because the proofs were found by premise steps of
its own top 3. So the stage adopts a re-ranker only when it recalls at least as much as BM25 on its validation
pairs (``premises.rerank.require_gain``): on that run it would adopt none, and the searches keep BM25's order.
"""
