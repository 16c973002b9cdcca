"""The expert-iteration loop as plain functions, one per stage (`stages`), with fingerprinted stage markers
(`markers`), the inputs an iteration reads from earlier ones (`inputs`) and the run directory layout
(`layout`). The Dagster assets of `burnqed_pipeline` orchestrate them; `burnqed loop` materialises those."""
