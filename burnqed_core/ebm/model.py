"""The goal-conditioned energy head (seed 002), nanoGPT-dense PyTorch.

    E(z_s, z_g) = MLP([x_s; x_g; x_s * x_g]) / T,    x = (z - mu) / sigma

* ``z_s``, ``z_g``: the encoder's vectors of a proof state and of its theorem's
  root goal (same pooling, `embeddings`); standardised by per-dimension
  statistics of the training embeddings (buffers saved with the head): pooled
  vectors of one model are close together (L2-normalised ones differ by
  little), and the standardised product term is what makes the head
  goal-conditioned.
* every linear layer is spectrally normalised (``torch.nn.utils.parametrizations
  .spectral_norm``, ``power_iterations`` per training forward), SiLU and dropout
  between layers, one scalar out;
* the first layer starts scaled by ``first_layer_scale`` (0.1, seed gotcha 2).
  Multiplying a spectrally normalised weight changes nothing (W / sigma(W) is
  scale-free), so the scale is a learnable gain on that layer's output,
  initialised to 0.1;
* ``T``: a learnable temperature (log-parametrised, clamped to its bounds),
  owned by the head: InfoNCE takes ``-energy`` as logits with no temperature of
  its own (seed gotcha 1).

Lower energy = more provable.
"""

from __future__ import annotations

import itertools
import math

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm


class HeadConfig(BaseModel):
    """Everything needed to rebuild a head (saved beside its weights)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    dim: int = Field(gt=0, description="width of the encoder's vectors")
    hidden_dims: list[int] = Field(default_factory=lambda: [512, 256, 128])
    dropout: float = 0.15
    first_layer_scale: float = 0.1
    power_iterations: int = 5
    temperature_init: float = 1.0
    temperature_min: float = 0.05
    temperature_max: float = 20.0


class EnergyHead(nn.Module):
    """See the module docstring."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        if not cfg.temperature_min < cfg.temperature_init < cfg.temperature_max:
            raise ValueError(f"temperature_init {cfg.temperature_init} must lie strictly inside "
                             f"[{cfg.temperature_min}, {cfg.temperature_max}]")
        self.cfg = cfg
        widths = [3 * cfg.dim, *cfg.hidden_dims, 1]
        self.linears = nn.ModuleList(
            spectral_norm(nn.Linear(a, b), n_power_iterations=cfg.power_iterations)
            for a, b in itertools.pairwise(widths)
        )
        self.act = nn.SiLU()
        self.drop = nn.Dropout(cfg.dropout)
        self.first_gain = nn.Parameter(torch.tensor(float(cfg.first_layer_scale)))
        self.log_temperature = nn.Parameter(torch.tensor(math.log(cfg.temperature_init)))
        self.register_buffer("mean", torch.zeros(cfg.dim))
        self.register_buffer("std", torch.ones(cfg.dim))

    # -- temperature ---------------------------------------------------------------

    @property
    def temperature(self) -> torch.Tensor:
        return self.log_temperature.exp().clamp(self.cfg.temperature_min, self.cfg.temperature_max)

    def temperature_pinned(self, rel: float = 0.01) -> str | None:
        """'floor' / 'ceiling' when the temperature sits at a bound, else None."""
        t = float(self.temperature.detach())
        if t <= self.cfg.temperature_min * (1 + rel):
            return "floor"
        if t >= self.cfg.temperature_max * (1 - rel):
            return "ceiling"
        return None

    # -- inputs --------------------------------------------------------------------

    @torch.no_grad()
    def fit_standardizer(self, z: torch.Tensor) -> None:
        """Per-dimension mean and std of training embeddings ``[n, dim]``."""
        if z.ndim != 2 or z.shape[1] != self.cfg.dim:
            raise ValueError(f"expected [n, {self.cfg.dim}] embeddings, got {tuple(z.shape)}")
        z = z.float()
        self.mean.copy_(z.mean(0))
        std = z.std(0, unbiased=False) if z.shape[0] > 1 else torch.ones_like(self.std)
        self.std.copy_(std.clamp(min=1e-4 * float(std.max().clamp(min=1e-8))).clamp(min=1e-8))

    def features(self, z_state: torch.Tensor, z_goal: torch.Tensor) -> torch.Tensor:
        """``[x_s; x_g; x_s * x_g]`` of broadcastable ``[..., dim]`` inputs."""
        xs = (z_state.float() - self.mean) / self.std
        xg = (z_goal.float() - self.mean) / self.std
        xs, xg = torch.broadcast_tensors(xs, xg)
        return torch.cat([xs, xg, xs * xg], dim=-1)

    # -- forward -------------------------------------------------------------------

    def raw(self, z_state: torch.Tensor, z_goal: torch.Tensor) -> torch.Tensor:
        """The MLP output before the temperature, shape ``[...]``."""
        h = self.features(z_state, z_goal)
        for i, lin in enumerate(self.linears):
            h = lin(h)
            if i == 0:
                h = h * self.first_gain
            if i < len(self.linears) - 1:
                h = self.drop(self.act(h))
        return h.squeeze(-1)

    def forward(self, z_state: torch.Tensor, z_goal: torch.Tensor) -> torch.Tensor:
        """Energy of each state given its goal, ``[...]``; lower = more provable."""
        return self.raw(z_state, z_goal) / self.temperature

    def spectral_norms(self) -> list[float]:
        """Largest singular value of each (normalised) linear weight."""
        return [float(torch.linalg.matrix_norm(lin.weight.detach(), ord=2)) for lin in self.linears]


def info_nce(energies: torch.Tensor) -> torch.Tensor:
    """InfoNCE over ``[B, 1 + K]`` energies, the positive in column 0: cross
    entropy of ``-energy`` as logits. No temperature here (gotcha 1): the head
    owns it."""
    target = torch.zeros(energies.shape[0], dtype=torch.long, device=energies.device)
    return nn.functional.cross_entropy(-energies, target)


def count_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
