"""The EBM as the search's `EnergyScorer`: encode new states, score them, one call.

`load_energy_scorer(dir, policy)` rebuilds the head from the directory's
``ebm.json`` + ``head.pt`` (another process than the one that trained it) and
checks that the policy encodes the way the head was trained: the same pooling
(always; refusing to mix) and, where the policy's model directory is known,
the same encoder weights (fingerprint). ``score(states, goal)`` sends the
states (and the goal, the first time it is seen) to ``policy.encode`` in ONE
call and evaluates the head on the batch.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.ebm.embeddings import (
    EmbeddingMismatchError,
    encoder_text,
    model_fingerprint,
    policy_pooling,
)
from burnqed_core.ebm.model import EnergyHead
from burnqed_core.ebm.train import EbmRecord, load_head

log = logging.getLogger(__name__)


class EbmScorer:
    """An `EnergyScorer` (``burnqed_core.search.scoring``) over a policy's encoder."""

    def __init__(self, head: EnergyHead, record: EbmRecord, policy: Any, goal_cache: int = 1024) -> None:
        self.head = head.eval()
        self.record = record
        self.policy = policy
        self._goals: OrderedDict[str, torch.Tensor] = OrderedDict()
        self._goal_cache = goal_cache
        self.calls = 0
        self.states_scored = 0

    async def score(self, states: list[str], goal: str) -> list[float]:
        """Energies of ``states`` given the root ``goal`` (lower = more provable)."""
        if not states:
            return []
        fmt = format_of(self.policy)
        texts = [encoder_text(s, fmt) for s in states]
        z_goal = self._goals.get(goal)
        if z_goal is None:
            texts.append(encoder_text(goal, fmt))
        vecs = await self.policy.encode(texts)
        if len(vecs) != len(texts):
            raise EmbeddingMismatchError(f"the encoder returned {len(vecs)} vectors for {len(texts)} texts")
        z = torch.from_numpy(np.asarray(vecs, dtype=np.float32))
        if z.shape[1] != self.record.head.dim:
            raise EmbeddingMismatchError(f"the encoder returns width {z.shape[1]}, the EBM was trained on "
                                         f"{self.record.head.dim}")
        if z_goal is None:
            z_goal = z[-1]
            z = z[:-1]
            self._goals[goal] = z_goal
            while len(self._goals) > self._goal_cache:
                self._goals.popitem(last=False)
        else:
            self._goals.move_to_end(goal)
        with torch.inference_mode():
            energies = self.head(z, z_goal.unsqueeze(0))
        self.calls += 1
        self.states_scored += len(states)
        return [float(e) for e in energies]

    def score_sync(self, states: Sequence[str], goal: str) -> list[float]:
        """`score` from synchronous code (tests, scripts)."""
        return asyncio.run(self.score(list(states), goal))


def check_compatible(record: EbmRecord, policy: Any, where: Path) -> None:
    """Refuse a policy that does not encode the way the head was trained."""
    pooling = policy_pooling(policy)
    if pooling != record.pooling:
        raise EmbeddingMismatchError(
            f"the EBM in {where} was trained on {record.pooling!r} embeddings but the policy pools {pooling!r}: "
            f"refusing to mix poolings")
    version = format_of(policy).version
    if record.text_format != version:
        raise EmbeddingMismatchError(f"the EBM in {where} encodes states as {record.text_format!r}, this policy "
                                     f"as {version!r}: retrain it")
    hidden = getattr(policy, "hidden_size", None)
    if isinstance(hidden, int) and hidden != record.head.dim:
        raise EmbeddingMismatchError(f"the EBM in {where} takes {record.head.dim}-d embeddings, the policy's model "
                                     f"has {hidden}")
    model_path = getattr(policy, "model_path", None)
    if model_path is not None and Path(model_path).is_dir() and not record.fingerprint.startswith("name:"):
        fp = model_fingerprint(model_path)
        if fp != record.fingerprint:
            raise EmbeddingMismatchError(
                f"the EBM in {where} was trained on embeddings of another model ({record.model_path or '?'}) than "
                f"the policy's {model_path}: use the EBM of the same iteration as the model")


def load_energy_scorer(ebm_dir: str | Path, policy: Any) -> EbmScorer:
    """The EBM saved in ``ebm_dir`` as an `EnergyScorer` on ``policy``'s encoder."""
    d = Path(ebm_dir)
    head, record = load_head(d)
    check_compatible(record, policy, d)
    log.info("EBM %s: %s-d %s embeddings, head %s, temperature %.3f", d, record.head.dim, record.pooling,
             record.head.hidden_dims, float(head.temperature.detach()))
    return EbmScorer(head, record, policy)
