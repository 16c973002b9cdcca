"""The expert-iteration loop as plain functions, one per stage. The Dagster
assets call the same functions; `burnqed loop` runs them in order."""
