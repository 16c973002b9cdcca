"""Toy trajectories for EBM tests: real `TrajectoryRecord`s of proved and
unproved searches, and embeddings in which positive states are separable."""

from __future__ import annotations

import numpy as np

from burnqed_core.config import EBMConfig
from burnqed_core.ebm.data import ContrastiveData
from burnqed_core.records import TrajectoryRecord


def toy_records(n_theorems: int = 30, depth: int = 3, siblings: int = 3, seed: int = 0) -> list[TrajectoryRecord]:
    """Each theorem: a proof path of ``depth`` tactics, each path node with
    ``siblings`` failed (negative) siblings; every third theorem unproved
    (its dead nodes negative, the rest unknown)."""
    rng = np.random.default_rng(seed)
    out: list[TrajectoryRecord] = []
    for t in range(n_theorems):
        name = f"thm_{t}"
        goal = f"n{t} : Nat\n⊢ goal {t}"
        proved = t % 3 != 2
        nodes: list[TrajectoryRecord] = []

        def add(parent: int, state: str, d: int, label: str, terminal: bool = False,
                nodes: list[TrajectoryRecord] = nodes, name: str = name, goal: str = goal,
                proved: bool = proved) -> int:
            nid = len(nodes)
            nodes.append(TrajectoryRecord(theorem=name, iteration=0, node_id=nid, parent_id=parent, state=state,
                                          goal=goal, tactic="" if parent < 0 else f"tac{nid}", depth=d,
                                          logprob=float(-rng.random()), cum_logprob=-1.0, label=label,  # type: ignore[arg-type]
                                          terminal=terminal, proved=proved))
            return nid

        parent = add(-1, goal, 0, "positive" if proved else "unknown")
        for d in range(1, depth + 1):
            for s in range(siblings):
                add(parent, f"⊢ bad {t} {d} {s}", d, "negative")
            if d < depth:
                parent = add(parent, f"⊢ good {t} {d}", d, "positive" if proved else "unknown")
        if proved:
            add(parent, "", depth, "positive", terminal=True)
        out.extend(nodes)
    return out


def separable_embeddings(data: ContrastiveData, dim: int = 16, seed: int = 0) -> np.ndarray:
    """Vectors in which 'good' states share a direction that 'bad' ones lack,
    plus noise; goals random. L2-normalised like the real pooling."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(len(data.texts), dim)).astype(np.float32)
    for i, text in enumerate(data.texts):
        if "good" in text:
            z[i, 0] += 3.0
        elif "bad" in text:
            z[i, 0] -= 3.0
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def toy_config(**kw: object) -> EBMConfig:
    """A small head and a short run for the toy sets; ``kw`` overrides."""
    base: dict[str, object] = dict(hidden_dims=[32, 16], dropout=0.0, steps=150, batch_size=32, num_negatives=4,
                                   lr=3e-3, eval_every=25, save_every=25, val_fraction=0.3, seed=0)
    base.update(kw)
    return EBMConfig(**base)  # type: ignore[arg-type]
