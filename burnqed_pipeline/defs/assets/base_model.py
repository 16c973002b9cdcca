"""``base_model``: the model every iteration's LoRA adapter starts from."""

import dagster as dg

from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, require
from burnqed_core.loop.markers import fingerprint, run_stage
from burnqed_pipeline.defs.resources import ProfileResource
from burnqed_pipeline.metadata import loss_curve, model_fingerprint
from burnqed_pipeline.stage import logs_to, progress, result, stage, training_progress


@dg.asset(group_name="base", deps=["base_tactic_pairs"], kinds={"pytorch"})
def base_model(context: dg.AssetExecutionContext, profile: ProfileResource) -> dg.MaterializeResult:
    """The tiny model pre-trained here on the training side of the base pairs' theorem split (drawn here once,
    ``split.json``: its validation theorems are never trained on, and every iteration's pairs reuse it), or the
    profile's Hugging Face model (``training.base_model``) in prod."""
    st = stage(profile.load())
    pairs = require(st.layout.traced, "base_tactic_pairs", None, "base_model")
    out = st.layout.model
    fp = fingerprint("base_model", st.profile, {"pairs": pairs})
    with logs_to(context), progress(context, training_progress(out)):
        res = run_stage(out, fp, lambda: stages.base_model(st.profile, pairs, out))
    extra = {**loss_curve(out, "pre-training"), **model_fingerprint(out)} if (out / "config.json").exists() else {}
    return result(context, res, UsedPartitions(same_iteration=["base_tactic_pairs"], earlier={}), extra)
