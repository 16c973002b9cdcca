"""Every stage of the loop as an asset, made from its spec (`burnqed_core.loop.stages`, `burnqed_pipeline.factory`)."""

from burnqed_core.loop.stages import SPECS
from burnqed_pipeline.factory import build

for _spec in SPECS:
    globals()[_spec.name] = build(_spec)
