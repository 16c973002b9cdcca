"""Dagster definitions, loaded by `burnqed_pipeline.definitions` (``dg.load_from_defs_folder``)."""
