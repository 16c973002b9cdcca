"""Build the policy a profile asks for."""

from __future__ import annotations

from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Policy


def make_policy(profile: Profile, model_path: str | Path | None = None) -> Policy:
    """The profile's policy backend (``policy.backend``).

    * ``local``: `LocalPolicy` on ``model_path`` (else ``policy.model_path``);
    * ``sglang``: `SglangPolicy` for the server at ``policy.sglang.url``
      (started separately, e.g. by `SglangServer`); ``model_path``, if
      given, is the model the server must be serving: checked against its
      ``/model_info`` when the policy is opened (`SglangPolicy.check_model`);
    * ``fixed``: `FixedTacticsPolicy` on ``policy.fixed_tactics``;
    * ``structural``: `StructuralPolicy`, no learned policy (baseline (c)).

    Heavy imports (torch, transformers, httpx) happen here, not at import time.
    """
    cfg = profile.policy
    if cfg.backend == "local":
        from burnqed_core.policy.local import LocalPolicy

        return LocalPolicy.from_config(cfg, model_path=model_path, seed=profile.search.seed)
    if cfg.backend == "sglang":
        from burnqed_core.policy.sglang import SglangPolicy

        return SglangPolicy(
            cfg.sglang,
            max_new_tokens=cfg.max_new_tokens,
            batch_size=cfg.batch_size,
            expected_model=str(model_path or cfg.model_path or "") or None,
        )
    if cfg.backend == "fixed":
        from burnqed_core.policy.fixed import FixedTacticsPolicy

        return FixedTacticsPolicy(cfg.fixed_tactics)
    if cfg.backend == "structural":
        from burnqed_core.policy.structural import StructuralPolicy

        return StructuralPolicy()
    raise PolicyError(f"unknown policy backend {cfg.backend!r}")
