"""Resources: the profile, the Lean pool and the policy.

* `ProfileResource`: a profile name (``configs/``) or path, with the same
  ``BURNQED_*`` environment overrides as the command line.
* `LeanResource`: the profile's Lean pool, started on first use in the run
  process and closed when the run ends (`teardown_after_execution`).
* `PolicyResource`: the policy a search/eval stage uses for iteration N's
  merged model. ``local``: transformers on the merged model dir. ``sglang``:
  launch the server from ``policy.sglang.python`` (``launch: true``) or
  attach to ``policy.sglang.url`` (``BURNQED_SGLANG_URL``), load the
  iteration's model with the safe weight swap, check it with a real
  one-token generation, and record what the server says it serves; a
  launched server is stopped at the end of the run.

Coroutines of the pool and the policy run on the run's event loop
(`burnqed_pipeline.runtime`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from burnqed_core.config import Profile, load_profile
from burnqed_core.errors import PolicyError
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_pipeline.executors import pipeline_executor
from burnqed_pipeline.runtime import attached, get_runtime

log = logging.getLogger(__name__)

PROBE_STATE = "⊢ True"


class ProfileResource(dg.ConfigurableResource):
    """The burnqed profile every stage reads: loaded once per resource instance (once per run), at the first
    `load`, which reads the files and the ``BURNQED_*`` environment; later calls return the same (frozen,
    shareable) `Profile`."""

    profile: str = "tiny"
    work_dir: str | None = None
    _loaded: Profile | None = PrivateAttr(default=None)

    def load(self) -> Profile:
        if self._loaded is None:
            overrides = {"paths.work_dir": self.work_dir} if self.work_dir else None
            self._loaded = load_profile(self.profile, overrides=overrides)
        return self._loaded


#: ``1``: the code location's Lean resource keeps its pool in the process between steps and runs (a Celery
#: worker process, where every step is a task of its own: `burnqed_pipeline.deploy.local_celery` sets it).
KEEP_LEAN_ENV = "BURNQED_KEEP_LEAN"
_kept: dict[str, Any] = {}  # the process's kept pool, by its Lean settings (at most one)


async def _kept_pool(settings: Any) -> Any:
    from burnqed_core.lean.pool import LeanPool

    key = settings.model_dump_json()
    pool = _kept.get(key)
    if pool is None:
        for old in list(_kept.values()):  # other settings: one kept pool per process
            await old.close()
        _kept.clear()
        log.info("starting Lean (%s backend), kept by this process for later steps", settings.backend)
        pool = LeanPool(settings)
        await pool.start()
        _kept[key] = pool
    else:
        log.info("Lean pool of this process reused (started by an earlier step)")
    return pool


def close_kept() -> None:
    """Close the Lean pool this process kept (`LeanResource.keep`), if any: the end of ``burnqed loop``."""
    pools = list(_kept.values())
    _kept.clear()
    for pool in pools:
        get_runtime().run(pool.close())


class LeanResource(dg.ConfigurableResource):
    """The Lean pool of the profile, started once per run process on first use; with ``keep`` once per process
    (kept from step to step and run to run: a Celery worker process, ``burnqed loop``)."""

    profile: ProfileResource
    keep: bool = False
    _pool: Any = PrivateAttr(default=None)
    _kept: bool = PrivateAttr(default=False)

    async def env(self) -> ProofEnv:
        """The started environment (call on the runtime loop)."""
        lent = attached()
        if lent is not None and lent[1] is not None:
            return lent[1]
        if self._pool is None:
            from burnqed_core.lean.pool import LeanPool

            prof = self.profile.load()
            if self.keep:
                self._pool, self._kept = await _kept_pool(prof.lean), True
                return self._pool
            log.info("starting Lean (%s backend) for this run", prof.lean.backend)
            pool = LeanPool(prof.lean)
            await pool.start()
            self._pool = pool
        return self._pool

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        pool, self._pool = self._pool, None
        if pool is not None and not self._kept:
            get_runtime().run(pool.close())


def _same_path(a: Any, b: str | Path) -> bool:
    if a is None:
        return False
    if str(a).rstrip("/") == str(b).rstrip("/"):
        return True
    try:
        return Path(str(a)).resolve() == Path(b).resolve()
    except OSError:
        return False


class PolicyResource(dg.ConfigurableResource):
    """The profile's policy, serving the model of the iteration being run."""

    profile: ProfileResource
    launch: bool = False
    _policy: Any = PrivateAttr(default=None)
    _model: str | None = PrivateAttr(default=None)
    _server: Any = PrivateAttr(default=None)

    async def for_model(self, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        """The policy on ``model_path`` (loaded or swapped in if needed), checked by a one-token generation,
        and what it serves: ``{"backend", "model_path", ...}`` (for SGLang, the server's own ``/model_info``)."""
        prof = self.profile.load()
        backend = prof.policy.backend
        if backend == "sglang":
            return await self._sglang(prof, model_path, iteration)
        if self._policy is None or self._model != str(model_path):
            from burnqed_core.policy.factory import make_policy

            await self._close_policy()
            self._policy = make_policy(prof, model_path)
            self._model = str(model_path)
        await self._probe()
        return self._policy, {"backend": backend, "model_path": self._model}

    async def _sglang(self, prof: Profile, model_path: Path, iteration: int) -> tuple[Policy, dict[str, Any]]:
        from burnqed_core.policy.sglang import SglangPolicy

        cfg = prof.policy
        if self._policy is None:
            server = None
            if self.launch:
                import asyncio

                from burnqed_core.policy.launcher import SglangServer

                server = SglangServer(cfg.sglang, model_path, log_path=Path(prof.paths.work_dir) / "sglang.log")
                await asyncio.to_thread(server.start)
                self._server = server
            self._policy = SglangPolicy(cfg.sglang, max_new_tokens=cfg.max_new_tokens, batch_size=cfg.batch_size,
                                        server=server)
        policy: SglangPolicy = self._policy
        info = await policy.model_info()
        restarted = False
        if not _same_path(info.get("model_path"), model_path):
            log.info("SGLang serves %s: swapping in %s", info.get("model_path"), model_path)
            swapped = await policy.swap_weights(model_path, weight_version=f"iter_{iteration}")
            restarted = swapped.restarted
        if not await policy.healthy():
            raise PolicyError(f"the SGLang server at {policy.client.url} does not generate (one-token check failed)")
        info = await policy.model_info()
        if not _same_path(info.get("model_path"), model_path):
            raise PolicyError(f"the SGLang server at {policy.client.url} serves {info.get('model_path')!r}, "
                              f"not {str(model_path)!r}")
        self._model = str(model_path)
        return policy, {"backend": "sglang", "url": policy.client.url, "model_path": info.get("model_path"),
                        "weight_version": info.get("weight_version"), "restarted": restarted,
                        "launched": self._server is not None}

    async def _probe(self) -> None:
        """A real one-token generation: a model that cannot generate fails here, not mid-search."""
        out = await self._policy.generate([PROBE_STATE], 1, 0.0, max_new_tokens=1)
        if len(out) != 1:
            raise PolicyError(f"policy {self._policy.name}: the one-token check returned {len(out)} results")

    async def _close_policy(self) -> None:
        policy, self._policy, self._model = self._policy, None, None
        if policy is not None:
            await policy.close()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._policy is not None:
            get_runtime().run(self._close_policy())
        server, self._server = self._server, None
        if server is not None:
            server.stop()


def default_resources() -> dict[str, Any]:
    """The resources of the code location: profile from ``BURNQED_PROFILE`` (default tiny); the SGLang server
    launched by the pipeline when ``BURNQED_SGLANG_LAUNCH=1``, else attached to ``policy.sglang.url``."""
    profile = ProfileResource(profile=os.environ.get("BURNQED_PROFILE", "tiny"))
    return {
        "profile": profile,
        "lean": LeanResource(profile=profile, keep=os.environ.get(KEEP_LEAN_ENV) == "1"),
        "policy": PolicyResource(profile=profile, launch=os.environ.get("BURNQED_SGLANG_LAUNCH") == "1"),
    }


@dg.definitions
def resources() -> dg.Definitions:
    # By default one process runs every step of a run: the Lean pool and the loaded policy serve all of its
    # stages. BURNQED_EXECUTOR picks another executor (Kubernetes, celery: `burnqed_pipeline.executors`).
    return dg.Definitions(resources=default_resources(), executor=pipeline_executor())
