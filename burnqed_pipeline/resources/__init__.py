"""The resources of the pipeline's assets, one concept each: the profile (`ProfileResource`), the run's event
loop (`EventLoopResource`), its Lean pool (`LeanPoolResource`) and its policy (`PolicyResource`), the last two
depending on the loop. `kept_resources`: the last three bound to the services of an owner that outlives runs."""

from burnqed_pipeline.resources.event_loop import WORKER_RUNTIME_ATTR, EventLoopResource, worker_runtime
from burnqed_pipeline.resources.kept import kept_resources
from burnqed_pipeline.resources.lean_pool import LeanPoolResource
from burnqed_pipeline.resources.policy import PolicyResource
from burnqed_pipeline.resources.profile import ProfileResource

__all__ = ("WORKER_RUNTIME_ATTR", "EventLoopResource", "LeanPoolResource", "PolicyResource", "ProfileResource",
           "kept_resources", "worker_runtime")
