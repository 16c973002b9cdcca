"""Data: theorem sets and their loaders (bundled, JSONL, ``.lean`` files,
LeanDojo, miniF2F), Lean-file parsing, tactic-pair preparation, the prompt
format of a pair (`prompt`, with canonical local names and numerals:
`local_names`, `numerals`), iteration mixing and theorem selection for
search. Plain library code (polars), no Dagster."""
