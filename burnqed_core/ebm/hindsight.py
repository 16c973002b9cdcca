"""Hindsight positives: the known proof of a searched theorem that the search did not prove.

A policy-only search of a long-proof theorem usually fails, and a failed search labels nothing positive, so
the EBM of such a setting trains on the few theorems its policy already proves (seed 002's setting had
thousands; the `ebm` profile's first run had 4). A training theorem of the corpus still has a proof: its
traced tactic pairs. With ``ebm.hindsight`` the states of that proof are the theorem's positives (each is
provable: the rest of the known proof closes it), and the search's own states of the same theorem are their
negatives: the children of a known-path state that leave the path are its failed siblings, every other state
the search reached off the path is an off-path negative. Those negatives are soft, as failed siblings of a
found proof are: a state off the known path may still be provable another way.

Only theorems on the training side of the base split have known paths here (`known_paths` is given that set):
a withheld exercise's or a validation theorem's proof is never read. The path is taken as traced, state by
state, and a theorem whose pairs do not chain (a state after that is not the next state before, a depth
missing, a proof that does not end in "no goals") has none.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from burnqed_core.records import TacticPair

if TYPE_CHECKING:
    from pathlib import Path


def known_paths(pairs: Iterable[TacticPair], allowed: Container[str]) -> dict[str, list[str]]:
    """The states of each allowed theorem's known proof, root first, without the final "no goals" state."""
    by: dict[str, list[TacticPair]] = {}
    for p in pairs:
        if p.theorem in allowed:
            by.setdefault(p.theorem, []).append(p)
    out: dict[str, list[str]] = {}
    for theorem, steps in by.items():
        steps.sort(key=lambda p: p.depth)
        if [p.depth for p in steps] != list(range(len(steps))) or steps[-1].state_after:
            continue
        if any(a.state_after != b.state_before for a, b in pairwise(steps)):
            continue
        if any(not p.state_before for p in steps):
            continue
        out[theorem] = [p.state_before for p in steps]
    return out


def path_texts(known: Mapping[str, Sequence[str]], theorems: Iterable[str]) -> list[str]:
    """The known-path states of ``theorems`` (those with one), each once: what the encoder must embed."""
    seen: dict[str, None] = {}
    for t in theorems:
        for s in known.get(t, ()):
            seen.setdefault(s)
    return list(seen)


def read_known(pairs: Path, split: Path | None = None) -> dict[str, list[str]]:
    """`known_paths` of a tactic-pair Parquet file (``burnqed lean trace``'s, a base ``pairs.parquet``): every
    theorem in it, or with ``split`` (a ``split.json``) only the training side of that split."""
    from burnqed_core.data.pairs.prepare import read_split
    from burnqed_core.record_io import read_parquet

    records = read_parquet(pairs, TacticPair)
    allowed: Container[str] = (frozenset(read_split(split).train) if split is not None
                               else frozenset(p.theorem for p in records))
    return known_paths(records, allowed)
