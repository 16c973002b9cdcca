"""One candidate set for every searcher: the policy's samples, the automation tactics, baseline (c)'s
structural steps and premise steps (issue 65).

At each expansion the search tries, for the state's main goal:

* the policy's samples (deduplicated), source ``policy``;
* the automation tactics (`burnqed_core.search.automation`), source ``automation`` (``both`` when the policy
  sampled the same text);
* with ``search.structural.enabled``, the structural steps of baseline (c)
  (`burnqed_core.policy.structural.structural_steps`: ``intro``, ``induction x``, ``cases h`` ...), source
  ``structural``, each at the uniform log-probability (c) gives them;
* with ``search.premises.enabled`` and a premise index, the premise steps of the top-k premises the premise
  rule allows at the theorem (`burnqed_core.premises.steps`), source ``premise``. With a re-ranked index
  (`burnqed_core.premises.rerank.RerankedIndex`, from iteration 1 with ``premises.rerank``) the top k are BM25's
  candidates re-ordered by the iteration's re-ranker; the engine prepares each batch's states first
  (`PremiseIndex.prepare`), so `CandidateBuilder.retrieve` stays synchronous. Baseline (c) with retrieval is
  given the same index, so it gets the same retrieval.

A text proposed twice is tried once, under the first source in that order. So the prover's candidates at a
state contain baseline (c)'s (the structural steps with automation, and with premise steps for "(c) with
retrieval"), and (c) is the same search with the policy removed: what the prover proves beyond it is the
policy's doing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from burnqed_core.config import SearchConfig
from burnqed_core.policy.base import Candidate
from burnqed_core.policy.structural import structural_steps
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.records import Retrieved
from burnqed_core.premises.steps import premise_steps
from burnqed_core.records import Theorem
from burnqed_core.search.automation import AutomationCandidates, Source, SourcedCandidate, plain, tactic_key


class CandidateBuilder:
    """The candidate set of one theorem's search (its automation definitions and premise cache are read once)."""

    def __init__(self, config: SearchConfig, theorem: Theorem, premises: PremiseIndex | None = None) -> None:
        self.config = config
        self.theorem = theorem
        self.automation = AutomationCandidates(config.automation, theorem=theorem) \
            if config.automation.enabled else None
        self.index = premises
        self.premises = premises if config.premises.enabled else None
        self.premises_retrieved = 0
        self._retrieved: dict[tuple[str, int], list[Retrieved]] = {}

    def retrieve(self, state: str, k: int) -> list[Retrieved]:
        """The top ``k`` premises of ``state`` under the theorem's rule (cached per state: the prompt and the
        premise steps of one expansion share one retrieval)."""
        if self.index is None or k < 1:
            return []
        key = (state, k)
        hit = self._retrieved.get(key)
        if hit is None:
            hit = self._retrieved[key] = self.index.retrieve(self.theorem, state, k)
        return hit

    def prompt_lines(self, state: str, k: int) -> list[str]:
        """The premise lines a policy's prompt shows at ``state`` (`burnqed_core.premises.prompting`)."""
        return [r.premise.prompt_line() for r in self.retrieve(state, k)]

    def structural(self, state: str) -> list[Candidate]:
        if not self.config.structural.enabled:
            return []
        steps = structural_steps(state, limit=self.config.structural.limit)
        lp = -math.log(len(steps)) if steps else 0.0
        return [Candidate(tactic=t, logprob=lp, num_tokens=0) for t in steps]

    def premise(self, state: str) -> list[Candidate]:
        if self.premises is None:
            return []
        retrieved = self.retrieve(state, self.config.premises.k)
        self.premises_retrieved += len(retrieved)
        return [Candidate(tactic=t, logprob=lp, num_tokens=0)
                for t, lp, _ in premise_steps(retrieved, self.config.premises)]

    def build(self, policy: Sequence[Candidate], state: str, depth: int) -> list[SourcedCandidate]:
        """The candidates at ``state`` (``depth`` below the root) given the policy's deduplicated samples."""
        out = self.automation.merge(policy, state, depth) if self.automation is not None else plain(policy)
        seen = {tactic_key(c.tactic) for c in out}
        extras: tuple[tuple[Source, list[Candidate]], ...] = (("structural", self.structural(state)),
                                                              ("premise", self.premise(state)))
        for source, extra in extras:
            for c in extra:
                k = tactic_key(c.tactic)
                if k and k not in seen:
                    seen.add(k)
                    out.append(SourcedCandidate(c, source))
        return out
