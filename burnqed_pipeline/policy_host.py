"""The policy a process serves (`PolicyHost`): the profile's backend on the iteration's model, loaded or swapped
in when the model changes, checked by a real one-token generation, with what it serves.

* ``local`` (and ``fixed``, ``structural``): `burnqed_core.policy.factory.make_policy` on the model dir;
* ``sglang``: launch the server from ``policy.sglang.python`` (``launch``) or attach to ``policy.sglang.url``,
  load the iteration's model with the safe weight swap, check it, and record what the server says it serves
  (its ``/model_info``); a launched server is stopped when the host closes.

Its owner is a `burnqed_pipeline.resources.PolicyResource` (one run, or one step) or a `StageRuntime` that
outlives runs (`burnqed_pipeline.services`). Call its coroutines on the event loop its clients belong to.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from burnqed_core.config import Profile
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Policy

log = logging.getLogger(__name__)

PROBE_STATE = "⊢ True"


def same_path(a: Any, b: str | Path) -> bool:
    """Whether ``a`` (a path as a server reports it, or None) names the path ``b``."""
    if a is None:
        return False
    if str(a).rstrip("/") == str(b).rstrip("/"):
        return True
    try:
        return Path(str(a)).resolve() == Path(b).resolve()
    except OSError:
        return False


async def probe(policy: Policy) -> None:
    """A real one-token generation: a model that cannot generate fails here, not mid-search."""
    out = await policy.generate([PROBE_STATE], 1, 0.0, max_new_tokens=1)
    if len(out) != 1:
        raise PolicyError(f"policy {policy.name}: the one-token check returned {len(out)} results")


class PolicyHost:
    """The served policy and, for SGLang, the launched server (module docstring)."""

    def __init__(self, launch_sglang: bool = False) -> None:
        self.launch_sglang = launch_sglang
        self._policy: Any = None
        self._model: str | None = None
        self._server: Any = None

    async def policy(self, profile: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        """The policy on ``model_path`` (loaded or swapped in if needed), checked by a one-token generation,
        and what it serves: ``{"backend", "model_path", ...}``."""
        backend = profile.policy.backend
        if backend == "sglang":
            return await self._sglang(profile, model_path, iteration)
        if self._policy is None or self._model != str(model_path):
            from burnqed_core.policy.factory import make_policy

            await self._close_policy()
            self._policy = make_policy(profile, model_path)
            self._model = str(model_path)
        await probe(self._policy)
        return self._policy, {"backend": backend, "model_path": self._model}

    async def _open_sglang(self, prof: Profile, model_path: Path) -> Any:
        from burnqed_core.policy.sglang import SglangPolicy

        cfg = prof.policy
        server = None
        if self.launch_sglang:
            from burnqed_core.policy.launcher import SglangServer

            server = SglangServer(cfg.sglang, model_path, log_path=Path(prof.paths.work_dir) / "sglang.log")
            await asyncio.to_thread(server.start)
            self._server = server
        return SglangPolicy(cfg.sglang, max_new_tokens=cfg.max_new_tokens, batch_size=cfg.batch_size, server=server)

    async def _sglang(self, prof: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        if self._policy is None:
            self._policy = await self._open_sglang(prof, model_path)
        policy = self._policy
        info = await policy.model_info()
        restarted = False
        if not same_path(info.get("model_path"), model_path):
            log.info("SGLang serves %s: swapping in %s", info.get("model_path"), model_path)
            swapped = await policy.swap_weights(model_path, weight_version=f"iter_{iteration}")
            restarted = swapped.restarted
        if not await policy.healthy():
            raise PolicyError(f"the SGLang server at {policy.client.url} does not generate (one-token check failed)")
        info = await policy.model_info()
        if not same_path(info.get("model_path"), model_path):
            raise PolicyError(f"the SGLang server at {policy.client.url} serves {info.get('model_path')!r}, "
                              f"not {str(model_path)!r}")
        self._model = str(model_path)
        return policy, {"backend": "sglang", "url": policy.client.url, "model_path": info.get("model_path"),
                        "weight_version": info.get("weight_version"), "restarted": restarted,
                        "launched": self._server is not None}

    async def _close_policy(self) -> None:
        policy, self._policy, self._model = self._policy, None, None
        if policy is not None:
            await policy.close()

    @property
    def loaded(self) -> bool:
        return self._policy is not None

    async def aclose(self) -> None:
        """Close the policy's clients (on the loop)."""
        await self._close_policy()

    def stop_server(self) -> None:
        """Stop a server launched here (off the loop: it waits for the process)."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()
