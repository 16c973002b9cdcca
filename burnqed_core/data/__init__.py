"""Data: theorem sets and their loaders (bundled, JSONL, ``.lean`` files,
LeanDojo, miniF2F), Lean-file parsing, tactic-pair preparation, iteration
mixing and theorem selection for search. Plain library code (polars), no
Dagster."""
