"""Every stage as an asset, made from its spec (`burnqed_core.loop.stages`, `burnqed_pipeline.factory`): the
loop's stages and the nightly eval."""

import dagster as dg

from burnqed_core.loop.stages import ALL
from burnqed_pipeline.factory import build


@dg.definitions
def assets() -> dg.Definitions:
    return dg.Definitions(assets=[build(spec) for spec in ALL])
