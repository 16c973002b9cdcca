"""``merged_model[N]``: the adapter merged into its base, loadable by SGLang and transformers."""

import dagster as dg

from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, require
from burnqed_core.loop.markers import fingerprint, run_stage
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import ProfileResource
from burnqed_pipeline.metadata import model_fingerprint
from burnqed_pipeline.stage import logs_to, result, stage


@dg.asset(partitions_def=iterations, group_name="iteration", deps=["lora_adapter"], pool=GPU_POOL,
          op_tags=GPU_OP_TAGS, kinds={"safetensors"})
def merged_model(context: dg.AssetExecutionContext, profile: ProfileResource) -> dg.MaterializeResult:
    """lora_adapter[N] merged into the base weights (safetensors + tokenizer), checked against the adapter."""
    st, n = stage(profile.load()), partition_iteration(context)
    adapter = require(st.layout.iteration(n).adapter, "lora_adapter", n, f"merged_model[{n}]")
    out = st.layout.iteration(n).merged
    fp = fingerprint("merged_model", st.profile, {"adapter": adapter}, {"n": n})
    with logs_to(context):
        res = run_stage(out, fp, lambda: stages.merged_model(st.profile, n, adapter, out))
    used = UsedPartitions(same_iteration=[f"lora_adapter[{n}]"], earlier={})
    return result(context, res, used, model_fingerprint(out))
