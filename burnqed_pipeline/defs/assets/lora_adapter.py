"""``lora_adapter[N]``: LoRA (QLoRA in prod) fine-tuning of iteration N."""

from pathlib import Path

import dagster as dg

from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, require, warm_start
from burnqed_core.loop.markers import fingerprint, run_stage
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import ProfileResource
from burnqed_pipeline.metadata import loss_curve
from burnqed_pipeline.stage import logs_to, progress, result, stage, training_progress


@dg.asset(partitions_def=iterations, group_name="iteration", deps=["tactic_pairs", "base_model"],
          pool=GPU_POOL, op_tags=GPU_OP_TAGS, kinds={"pytorch"})
def lora_adapter(context: dg.AssetExecutionContext, profile: ProfileResource) -> dg.MaterializeResult:
    """SFT of a LoRA adapter on tactic_pairs[N] over the base model, warm-started from iteration N-1's adapter
    (or merged model: ``training.warm_start``); resumes from its last checkpoint."""
    st, n = stage(profile.load()), partition_iteration(context)
    me = f"lora_adapter[{n}]"
    pairs = require(st.layout.iteration(n).pairs, "tactic_pairs", n, me)
    model = require(st.layout.model, "base_model", None, me)
    warm = warm_start(st.profile, st.layout, n)
    out = st.layout.iteration(n).adapter
    fp = fingerprint("lora_adapter", st.profile, {"pairs": pairs, "base": model, "warm": warm}, {"n": n})
    base = Path(stages.base_model_path(model))
    with logs_to(context), progress(context, training_progress(out)):
        res = run_stage(out, fp, lambda: stages.lora_adapter(st.profile, n, pairs, base, warm, out))
    warm_asset = "lora_adapter" if st.profile.training.warm_start == "adapter" else "merged_model"
    earlier = {warm_asset: [n - 1]} if n else {}
    used = UsedPartitions(same_iteration=[f"tactic_pairs[{n}]", "base_model"], earlier=earlier)
    return result(context, res, used, loss_curve(out, f"LoRA iteration {n}"))
