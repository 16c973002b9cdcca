"""Data, one package per concept (plain library code, no Dagster):

* `theorems`: theorem sets and their loaders (bundled, JSONL, ``.lean`` files, LeanDojo, Lean's own library as a
  pool), a user's file checked theorem by theorem, and the fixed stratified sample of a set;
* `twins`: twin detection: canonical forms, near-twins, template clusters, similarity to a corpus;
* `synthetic`: the generator of the bundled sets: the families, one module per proof technique
  (`synthetic.techniques`), renaming, the set writer;
* `pairs`: tactic pairs and the prompt format of a pair (canonical local names and numerals, alpha-renaming
  augmentation), their preparation, iteration mixing, what a traced state shows.

The bundled files are under ``sets/``. The loop's theorem selection is `burnqed_core.loop.selection`, held-out
hygiene `burnqed_core.eval.hygiene`.
"""
