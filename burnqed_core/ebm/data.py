"""Contrastive examples from trajectory labels: one positive, K negatives.

A positive is a state on a found proof path (label ``positive``, depth >= 1,
goals left). Its negatives come, in this order of preference:

1. failed siblings: ``negative`` children of the same parent (the search had
   them and the proof went elsewhere);
2. other off-path states of the same theorem labelled ``negative``;
3. states of other theorems (any label; conditioned on this theorem's goal
   they are off-path).

With known proofs (``known``: `burnqed_core.ebm.hindsight`), a searched theorem that the search did not prove
gets its known proof's states as positives, the search's children of a known-path state that leave the path
as their failed siblings and its other states as their off-path negatives.

Negatives are drawn afresh at every step by a generator seeded with (seed,
step) (`sample_group`), so training is reproducible and resumes exactly.
The split into train and validation is by theorem name (seed gotcha 11).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from burnqed_core.ebm.embeddings import state_key
from burnqed_core.records import TrajectoryRecord


@dataclass(frozen=True)
class Positive:
    theorem: str
    depth: int
    state: int                  # row of the state in `ContrastiveData.keys`
    goal: int                   # row of the theorem's root goal
    siblings: tuple[int, ...]   # failed siblings (tier 1)
    off_path: tuple[int, ...]   # other negatives of the theorem (tier 2)


@dataclass
class ContrastiveData:
    """Positives of a set of theorems, over one table of unique state keys."""

    keys: list[str]                       # state hashes, index = row in the embedding matrix
    texts: list[str]
    positives: list[Positive] = field(default_factory=list)
    theorem_states: dict[str, list[int]] = field(default_factory=dict)  # every state row of each theorem
    negatives: list[int] = field(default_factory=list)                  # rows labelled negative (probe, metrics)
    positive_rows: list[int] = field(default_factory=list)              # rows labelled positive (probe, metrics)
    hindsight: int = 0                                                  # positives taken from known proofs

    @property
    def theorems(self) -> list[str]:
        return sorted({p.theorem for p in self.positives})


def theorem_in_val(name: str, val_fraction: float, seed: int) -> bool:
    """Deterministic split by theorem name."""
    if val_fraction <= 0:
        return False
    h = int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "big")
    return h / 2**64 < val_fraction


def build_data(records: Iterable[TrajectoryRecord],
               known: Mapping[str, Sequence[str]] | None = None) -> ContrastiveData:
    """Index every non-empty state and goal, and collect positives with their tiers; with ``known`` (theorem ->
    its known proof's states, root first), also the hindsight positives of the searches that proved nothing."""
    by_theorem: dict[tuple[str, int], list[TrajectoryRecord]] = {}
    for r in records:
        by_theorem.setdefault((r.theorem, r.iteration), []).append(r)
    builder = _Builder()
    for (theorem, _it), recs in sorted(by_theorem.items()):
        builder.add_search(theorem, recs, (known or {}).get(theorem))
    return builder.finish()


class _Builder:
    """`ContrastiveData` being built search by search: every state row by its key, in the order first seen, and
    the rows labelled negative and positive so far (insertion-ordered sets)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.texts: list[str] = []
        self.data = ContrastiveData(keys=[], texts=self.texts)
        self.neg_rows: dict[int, None] = {}
        self.pos_rows: dict[int, None] = {}

    def row(self, text: str) -> int:
        """The row of ``text``'s state, a new one when first seen."""
        k = state_key(text)
        if k not in self.index:
            self.index[k] = len(self.texts)
            self.texts.append(text)
        return self.index[k]

    def add_search(self, theorem: str, recs: Sequence[TrajectoryRecord], path: Sequence[str] | None) -> None:
        """One search's records (``path``: the theorem's known proof, if any); a search without a goal is
        skipped."""
        goal = recs[0].goal
        if not goal:
            return
        g = self.row(goal)
        rows_of = self.data.theorem_states.setdefault(theorem, [])
        children: dict[int, list[TrajectoryRecord]] = {}
        for r in recs:
            children.setdefault(r.parent_id, []).append(r)
            if r.state:
                i = self.row(r.state)
                rows_of.append(i)
                if r.label == "negative":
                    self.neg_rows.setdefault(i)
                elif r.label == "positive" and r.depth >= 1:
                    self.pos_rows.setdefault(i)
        self._add_positives(theorem, g, recs, children)
        if path and path[0] == goal and not any(r.proved or r.label == "positive" for r in recs):
            self._add_hindsight(theorem, g, path, recs, children, rows_of)

    def _add_positives(self, theorem: str, g: int, recs: Sequence[TrajectoryRecord],
                       children: Mapping[int, Sequence[TrajectoryRecord]]) -> None:
        """A `Positive` per positive state below the root, with its negative siblings and the search's other
        negatives (off its path)."""
        row = self.row
        negs = [row(r.state) for r in recs if r.label == "negative" and r.state]
        for r in recs:
            if r.label != "positive" or not r.state or r.depth < 1:
                continue
            sib = tuple(dict.fromkeys(row(c.state) for c in children.get(r.parent_id, [])
                                      if c.label == "negative" and c.state and c.node_id != r.node_id))
            me = row(r.state)
            off = tuple(dict.fromkeys(i for i in negs if i not in sib and i != me))
            self.data.positives.append(Positive(theorem=theorem, depth=r.depth, state=me, goal=g, siblings=sib,
                                                off_path=off))

    def _add_hindsight(self, theorem: str, g: int, path: Sequence[str], recs: Sequence[TrajectoryRecord],
                       children: Mapping[int, Sequence[TrajectoryRecord]], rows_of: list[int]) -> None:
        """The hindsight positives of a search that proved nothing, from the known proof ``path``: its states
        positive, the search's other states negative."""
        added = _hindsight(self.data, theorem, g, path, recs, children, self.row)
        self.data.hindsight += len(added)
        for i in added:  # on a known proof: provable, whatever the search's label said
            rows_of.append(i)
            self.pos_rows.setdefault(i)
            self.neg_rows.pop(i, None)
        on = set(path)
        for r in recs:
            if r.state and r.state not in on:
                self.neg_rows.setdefault(self.row(r.state))

    def finish(self) -> ContrastiveData:
        """The data, each theorem's rows once, with the keys and the labelled rows."""
        data = self.data
        for t, rows in data.theorem_states.items():
            data.theorem_states[t] = list(dict.fromkeys(rows))
        data.keys = [state_key(t) for t in self.texts]
        data.negatives = list(self.neg_rows)
        data.positive_rows = list(self.pos_rows)
        return data


def _hindsight(data: ContrastiveData, theorem: str, goal: int, path: Sequence[str], recs: Sequence[TrajectoryRecord],
               children: Mapping[int, Sequence[TrajectoryRecord]], row: Callable[[str], int]) -> list[int]:
    """Append the positives of one unproved search from the known proof ``path``; their state rows."""
    on = set(path)
    off_all = list(dict.fromkeys(row(r.state) for r in recs if r.state and r.state not in on))
    added: list[int] = []
    for d in range(1, len(path)):
        parents = [r.node_id for r in recs if r.state == path[d - 1]]
        sib = tuple(dict.fromkeys(row(c.state) for p in parents for c in children.get(p, ())
                                  if c.state and c.state not in on))
        sib_set = set(sib)
        off = tuple(i for i in off_all if i not in sib_set)
        if not sib and not off:
            continue
        me = row(path[d])
        data.positives.append(Positive(theorem=theorem, depth=d, state=me, goal=goal, siblings=sib, off_path=off))
        added.append(me)
    return added


def split_positives(data: ContrastiveData, val_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Indices of train and validation positives, split by theorem."""
    train, val = [], []
    for i, p in enumerate(data.positives):
        (val if theorem_in_val(p.theorem, val_fraction, seed) else train).append(i)
    return train, val


def sample_group(data: ContrastiveData, pos: Positive, k: int, rng: np.random.Generator,
                 other_pool: Sequence[int]) -> list[int]:
    """``k`` negative rows for ``pos`` by tiers (see the module docstring).
    ``other_pool``: candidate rows of other theorems (those equal to a row of
    this theorem are skipped). Fewer than ``k`` only if nothing is left."""
    out: list[int] = []
    for tier in (pos.siblings, pos.off_path):
        if len(out) >= k:
            break
        take = min(k - len(out), len(tier))
        if take:
            out.extend(int(tier[j]) for j in rng.choice(len(tier), size=take, replace=False))
    if len(out) < k and len(other_pool):
        own = set(data.theorem_states.get(pos.theorem, ()))
        tries = 0
        while len(out) < k and tries < 20 * k:
            tries += 1
            c = int(other_pool[int(rng.integers(len(other_pool)))])
            if c not in own and c != pos.state and c not in out:
                out.append(c)
    return out


def other_theorem_pool(data: ContrastiveData, theorems: Iterable[str]) -> list[int]:
    """Every state row of ``theorems`` (the tier-3 pool of a split)."""
    pool: dict[int, None] = {}
    for t in theorems:
        for i in data.theorem_states.get(t, ()):
            pool.setdefault(i)
    return list(pool)


def fixed_groups(data: ContrastiveData, positives: Sequence[int], k: int, seed: int,
                 pool: Sequence[int]) -> list[list[int]]:
    """One reproducible group of negatives per positive (evaluation)."""
    rng = np.random.default_rng([seed, 7])
    return [sample_group(data, data.positives[i], k, rng, pool) for i in positives]
