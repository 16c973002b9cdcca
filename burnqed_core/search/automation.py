"""Automation tactics as search candidates (issue 21).

At an expansion the search may add automation tactics to the policy's
samples (`AutomationConfig`): plain ones (``simp_all``, ``omega``, ...) and
definition-aware templates (``simp [{defs}]`` ...) where ``{defs}`` becomes
the user definitions of the theorem's preamble that the expanded goal names
(`burnqed_core.lean.definitions.mentioned_definitions`: the baseline (b) rule
applied to a goal's text). The policy then only has to find the structural
steps between them (``induction xs``, ``cases h``, a witness ...).

With ``baseline_at_root`` the root expansion also tries every tactic of the
definition-aware baseline (b) (`burnqed_core.lean.definitions.definition_aware_tactics`,
``induction x <;> simp_all [defs]`` among them): the search then closes
whatever baseline (b) closes, so policy + automation is at least baseline (b)
by construction and its excess over (b) (the hard split) is the policy's own.

Every candidate carries its origin (`Source`): ``policy``, ``automation``,
or ``both`` when the policy sampled a tactic that is also an automation one
(same whitespace-normalised text: it is kept once, with the higher of the
policy's logprob and the prior). The origin goes into the trajectories, so
that the training mix can include or exclude automation-found steps
knowingly, and the eval reports the policy alone beside policy + automation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from burnqed_core.config import AutomationConfig
from burnqed_core.lean.definitions import definition_aware_tactics, mentioned_definitions, user_definitions
from burnqed_core.policy.base import Candidate
from burnqed_core.records import Theorem

Source = Literal["policy", "automation", "both", "structural", "premise"]
SOURCES: tuple[str, ...] = ("policy", "automation", "both", "structural", "premise")


def tactic_key(tactic: str) -> str:
    """The text two candidates are compared on (whitespace-normalised, as
    `burnqed_core.policy.base.dedup_candidates` does)."""
    return " ".join(tactic.split())


@dataclass(frozen=True, slots=True)
class SourcedCandidate:
    candidate: Candidate
    source: Source

    @property
    def tactic(self) -> str:
        return self.candidate.tactic

    @property
    def logprob(self) -> float:
        return self.candidate.logprob


class AutomationCandidates:
    """The automation tactics of one theorem's search (its preamble's user
    definitions are read once)."""

    def __init__(self, config: AutomationConfig, preamble: str = "", theorem: Theorem | None = None) -> None:
        self.config = config
        if theorem is not None:
            preamble = theorem.preamble
        self.definitions = user_definitions(preamble) if config.defaware else []
        self.root_tactics: list[str] = (definition_aware_tactics(theorem)
                                        if config.baseline_at_root and theorem is not None else [])

    def applies(self, depth: int) -> bool:
        return self.config.enabled and (self.config.at == "all" or depth == 0)

    def tactics(self, goal: str, depth: int = 1) -> list[str]:
        """The automation tactics for a goal state's text at ``depth``, in
        order, unique (at depth 0 with ``baseline_at_root``: baseline (b)'s
        tactics after the others)."""
        out = [t for t in self.config.tactics if t.strip()]
        defs = mentioned_definitions(goal, self.definitions)[: self.config.max_defs] if self.definitions else []
        if defs:
            out += [t.replace("{defs}", ", ".join(defs)) for t in self.config.defaware]
        if depth == 0:
            out += self.root_tactics
        seen: set[str] = set()
        uniq = []
        for t in out:
            k = tactic_key(t)
            if k and k not in seen:
                seen.add(k)
                uniq.append(t.strip())
        return uniq

    def merge(self, policy: Sequence[Candidate], goal: str, depth: int) -> list[SourcedCandidate]:
        """The policy's (deduplicated) candidates with the automation ones
        added: a tactic in both is kept once, marked ``both``; automation-only
        ones come after the policy's, with the prior logprob."""
        out = [SourcedCandidate(c, "policy") for c in policy]
        if not self.applies(depth):
            return out
        index = {tactic_key(c.tactic): i for i, c in enumerate(policy)}
        prior = self.config.prior_logprob
        for t in self.tactics(goal, depth):
            i = index.get(tactic_key(t))
            if i is None:
                out.append(SourcedCandidate(Candidate(tactic=t, logprob=prior, num_tokens=0), "automation"))
            else:
                c = out[i].candidate
                if prior > c.logprob:
                    c = c.model_copy(update={"logprob": prior})
                out[i] = SourcedCandidate(c, "both")
        return out


def plain(policy: Sequence[Candidate]) -> list[SourcedCandidate]:
    """The policy's candidates alone (automation off)."""
    return [SourcedCandidate(c, "policy") for c in policy]
