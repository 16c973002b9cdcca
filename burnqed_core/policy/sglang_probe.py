"""What the SGLang client (`policy.sglang`) and the launcher
(`policy.launcher`) share, in a module of its own so that neither imports
the other: the health probe (a real one-token generation, or one embedding)
and the interface the client needs from a server it may restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

HEALTH_PROMPT = "Complete the following Lean 4 code:\n"


def health_request(is_embedding: bool) -> tuple[str, dict[str, Any]]:
    """(path, body) of the probe that proves the server computes: one greedy
    token, or one embedding on an ``--is-embedding`` server."""
    if is_embedding:
        return "/encode", {"text": HEALTH_PROMPT}
    return "/generate", {"text": HEALTH_PROMPT, "sampling_params": {"max_new_tokens": 1, "temperature": 0.0}}


def health_response_ok(is_embedding: bool, body: Any) -> bool:
    """Whether a probe's JSON answer carries a result (not only a 200)."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return False
    if is_embedding:
        return bool(body.get("embedding") or body.get("embeddings"))
    return "text" in body and isinstance(body.get("meta_info"), dict)


class RestartableServer(Protocol):
    """A server process the policy can restart (`launcher.SglangServer`).
    ``model_path`` is what a (re)start loads: the last model known good."""

    url: str
    model_path: str

    def restart(self, model_path: str | Path | None = None) -> None: ...
