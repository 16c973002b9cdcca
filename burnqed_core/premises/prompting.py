"""The premise lines a policy's prompt shows (`burnqed_core.data.pairs.prompt.PromptFormat.premises`, issue 65).

At a state of a theorem, the top k premises the theorem's premise rule allows (`PremiseIndex.retrieve`), each as
``name : type`` with the type cut (`Premise.prompt_line`): the same lines at training time (for every pair, by
its theorem) and at search time (for every expanded state), so the model learns to copy a name it is shown.
A (type -> name) pair of the library (`burnqed_core.premises.pretraining`) shows its own lemma among others
retrieved for its statement, in an order drawn from its name: the model learns to pick the name that fits.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence

from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.records import Premise
from burnqed_core.records import TacticPair, Theorem


class PromptPremises:
    """Premise lines for (theorem, state): retrieved under the theorem's rule from ``index``; ``fixed`` gives the
    lines of pairs whose theorem is not a theorem of ``theorems`` (the library pairs); a pair of an unknown
    theorem gets none."""

    def __init__(self, index: PremiseIndex, theorems: Mapping[str, Theorem], k: int,
                 fixed: Mapping[str, Sequence[str]] | None = None) -> None:
        self.index = index
        self.theorems = theorems
        self.k = k
        self.fixed = dict(fixed or {})

    def lines(self, theorem: str, state: str) -> list[str]:
        if theorem in self.fixed:
            return list(self.fixed[theorem])[:self.k]
        thm = self.theorems.get(theorem)
        if thm is None or self.k < 1:
            return []
        return [r.premise.prompt_line() for r in self.index.retrieve(thm, state, self.k)]

    def of(self, pair: TacticPair) -> list[str]:
        return self.lines(pair.theorem, pair.state_before)


def library_pair_lines(chosen: Sequence[Premise], index: PremiseIndex, k: int) -> dict[str, list[str]]:
    """For each (type -> name) pair's lemma: its own line among the k - 1 best others retrieved for its
    statement (as a user's file sees the library), in an order drawn from its name."""
    out: dict[str, list[str]] = {}
    for p in chosen:
        probe = Theorem(name=p.name, statement=": True")
        others = [r.premise.prompt_line() for r in index.retrieve(probe, "⊢ " + p.type, k)
                  if r.premise.name != p.name][:max(k - 1, 0)]
        lines = [p.prompt_line(), *others]
        seed = int.from_bytes(hashlib.blake2b(p.name.encode(), digest_size=8).digest(), "little")
        random.Random(seed).shuffle(lines)
        out[p.name] = lines
    return out
