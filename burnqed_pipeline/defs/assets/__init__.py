"""One module per stage: ~20-line asset bodies over `burnqed_core.loop.stages`."""
