"""The expert-iteration loop: one module per stage (`stages`: its settings, run function and spec), what a stage
is (`spec`), its markers (`markers`: skipped only when settings, inputs, code and read files are unchanged),
theorem shards (`shards`), the inputs and errors of missing ones (`inputs`), the run directory (`layout`) and
what the asset checks judge (`checks`). The Dagster assets of `burnqed_pipeline` are made from the specs;
``burnqed loop`` materialises them."""
