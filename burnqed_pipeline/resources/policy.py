"""The run's policy (`PolicyResource`): the profile's policy backend serving the iteration's model, opened on
the run's event loop when a stage first asks for it, closed (a server it launched stopped) when the run (or
step) ends; in a Celery worker process with ``keep``, or in a command's runs, the owner's, left open.

Its fields are where the policy runs (`burnqed_core.config.PolicyConfig`'s ``machine`` fields: launch an SGLang
server or attach to one, its URL, the device and batch of a local model), editable on the launchpad; ``None``
keeps the profile's. What the policy proposes (backend, sampling, prompt) stays the profile's.

A test swaps the policy alone by binding another `PolicyResource` under the ``policy`` key (a subclass whose
`policy` returns, say, a fixed policy): the Lean pool and the loop stay the run's.
"""

# No ``from __future__ import annotations``: Dagster reads ``ResourceDependency`` annotations as objects.


from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field, PrivateAttr

from burnqed_core.config import Profile
from burnqed_core.policy.base import Policy
from burnqed_pipeline.policy_host import PolicyHost
from burnqed_pipeline.resources.event_loop import EventLoopResource


class PolicyResource(dg.ConfigurableResource):
    """The run's policy: the profile's backend serving the iteration's model, opened on the run's loop and closed
    (a launched server stopped) when the run ends. Its fields say where it runs; unset (null), the profile's
    policy section decides."""

    event_loop: dg.ResourceDependency[EventLoopResource]
    launch_sglang: bool = Field(False, description="SGLang backend: launch the server (policy.sglang.python) "
                                                   "and stop it when the run ends; else attach to sglang_url")
    sglang_url: str | None = Field(None, description="the SGLang server to attach to (None: policy.sglang.url)")
    device: str | None = Field(None, description="local backend: cpu, cuda, auto (None: policy.device)")
    batch_size: int | None = Field(None, ge=1, description="sequences per generate() call (None: the profile's)")
    _host: PolicyHost | None = PrivateAttr(default=None)
    _owned: bool = PrivateAttr(default=False)

    def profile_for(self, profile: Profile) -> Profile:
        """The profile with this resource's fields that are set in its ``policy`` section."""
        cfg = profile.policy
        update: dict[str, Any] = {k: getattr(self, k) for k in ("device", "batch_size") if getattr(self, k) is not None}
        if self.sglang_url is not None:
            update["sglang"] = cfg.sglang.model_copy(update={"url": self.sglang_url})
        return profile.model_copy(update={"policy": cfg.model_copy(update=update)}) if update else profile

    async def policy(self, profile: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        """The policy on ``model_path``, checked by a one-token generation, and what it serves (call on the
        event loop)."""
        if self._host is None:
            raise dg.DagsterInvariantViolationError("the policy resource is not set up (use it inside a run)")
        return await self._host.policy(self.profile_for(profile), model_path, iteration)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        kept = self.event_loop.kept
        self._host, self._owned = ((kept.policies, False) if kept is not None
                                   else (PolicyHost(launch_sglang=self.launch_sglang), True))

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        host, self._host = self._host, None
        if host is None or not self._owned:
            return
        try:
            if host.loaded:
                self.event_loop.run(host.aclose())
        finally:
            host.stop_server()
