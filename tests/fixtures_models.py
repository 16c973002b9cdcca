"""Model fixtures (filled in by the training work)."""
