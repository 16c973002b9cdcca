"""The re-ranker's head: two centred linear maps of the encoder's vectors and the score
``a·cos − b·log(1 + BM25 rank)`` (`burnqed_core.premises.rerank`)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


def _initial_map(encoder_dim: int, dim: int, seed: int) -> torch.Tensor:
    """``[dim, encoder_dim]``: the identity at equal widths, else seeded orthonormal rows (or columns)."""
    if dim == encoder_dim:
        return torch.eye(dim)
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(max(dim, encoder_dim), min(dim, encoder_dim), generator=g))
    return (q if dim > encoder_dim else q.T).contiguous()


class RerankHead(nn.Module):
    """The two maps, the centres, and the two weights of the score (module docstring)."""

    def __init__(self, encoder_dim: int, dim: int, seed: int = 0) -> None:
        super().__init__()
        w0 = _initial_map(encoder_dim, dim, seed)
        self.goal = nn.Linear(encoder_dim, dim, bias=False)
        self.premise = nn.Linear(encoder_dim, dim, bias=False)
        with torch.no_grad():
            self.goal.weight.copy_(w0)
            self.premise.weight.copy_(w0)
        self.register_buffer("w0", w0.clone())
        self.register_buffer("goal_mean", torch.zeros(encoder_dim))
        self.register_buffer("premise_mean", torch.zeros(encoder_dim))
        self.log_scale = nn.Parameter(torch.tensor(math.log(10.0)))
        self.log_beta = nn.Parameter(torch.tensor(0.0))

    @torch.no_grad()
    def fit_centres(self, goals: torch.Tensor, premises: torch.Tensor) -> None:
        self.goal_mean.copy_(goals.float().mean(0))
        self.premise_mean.copy_(premises.float().mean(0))

    def embed_goals(self, z: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.goal(z.float() - self.goal_mean), dim=-1)

    def embed_premises(self, z: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.premise(z.float() - self.premise_mean), dim=-1)

    @property
    def scale(self) -> torch.Tensor:
        return self.log_scale.clamp(max=math.log(100.0)).exp()

    @property
    def beta(self) -> torch.Tensor:
        return self.log_beta.exp()

    def logits(self, cos: torch.Tensor, ranks: torch.Tensor) -> torch.Tensor:
        """The score of each premise from its cosine and its BM25 rank (0 the best)."""
        return self.scale * cos - self.beta * torch.log1p(ranks.float())

    def drift(self) -> torch.Tensor:
        """How far both maps moved from their initial one (squared Frobenius norms)."""
        return ((self.goal.weight - self.w0) ** 2).sum() + ((self.premise.weight - self.w0) ** 2).sum()


def rerank_order(head: RerankHead, goal: torch.Tensor, premises: torch.Tensor) -> list[int]:
    """The order of ``premises`` (projected, ``[n, dim]``, in BM25's order) for the projected ``goal``: by score,
    BM25's order among equals."""
    with torch.inference_mode():
        scores = head.logits(premises @ goal, torch.arange(premises.shape[0])).numpy()
    return [int(i) for i in np.argsort(-scores, kind="stable")]
