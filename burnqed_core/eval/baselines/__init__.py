"""The baselines every solve rate is read against, one module per baseline:

* (a) `single`: the first single automation tactic (``rfl`` ... ``grind``) that closes a theorem alone;
* (b) `defaware`: definition-aware automation (``simp [defs]``, ``induction x <;> simp_all [defs]`` ...; its tactic
  list is `burnqed_core.lean.definitions.definition_aware_tactics`, which the search's ``baseline_at_root`` tries
  too);
* (c) `structural`: the prover's search with no learned policy (`burnqed_core.policy.structural.StructuralPolicy`).

Shared parts: `records` (`Baselines`, `StructuralBaseline`: what the eval reads), `rounds` (the batched Lean rounds
of (a) and (b)), `measure` ((a) and (b) of a benchmark measured together, cached and shipped by key) and `keyed`
(the keyed files of all three). The ``automation_baselines`` stage (`burnqed_core.loop.stages`) writes (a) per
benchmark; the automation candidates every search adds stay with the search (`burnqed_core.search.automation`).
"""
