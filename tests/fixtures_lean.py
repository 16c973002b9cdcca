"""Lean fixtures (filled in by the Lean work)."""
