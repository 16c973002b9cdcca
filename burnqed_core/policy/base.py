"""The Policy protocol every backend implements."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

#: How `Policy.encode` turns a text's last hidden states into one vector.
#: ``last_l2``: the last token's state, L2-normalised (what SGLang's ``/encode``
#: returns for a causal LM; the default everywhere); ``mean``: the mean over
#: the text's tokens (local backend only). An EBM is trained and used on ONE
#: pooling: caches and EBM configs record it and refuse to mix.
Pooling = Literal["last_l2", "mean"]
POOLINGS: tuple[str, ...] = ("last_l2", "mean")


class Candidate(BaseModel):
    """One generated tactic: its text, the sum of its token logprobs (from
    the raw logits, not the temperature-scaled ones) and its token count."""

    model_config = ConfigDict(frozen=True)
    tactic: str
    logprob: float
    num_tokens: int


@runtime_checkable
class Policy(Protocol):
    """Proposes tactics for proof states and embeds texts."""

    name: str

    async def generate(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
    ) -> list[list[Candidate]]:
        """For each state, ``n`` sampled candidates (duplicates allowed).

        A backend whose model's prompt shows premises (``prompt_format.premises`` > 0: local, SGLang) also
        takes ``premises=``, per state the premise lines retrieved for it; the search passes them only then.

        ``seeds``: one per state. When given, a state's samples depend only on
        the model, the sampling settings, the state and its seed, never on the
        other states of the call or on earlier calls (reproducible search);
        when None, a backend may sample from a stream that advances per call."""
        ...

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text from the last hidden states, pooled as the
        backend's ``pooling`` attribute says (`Pooling`; default ``last_l2``)."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class TacticScorer(Protocol):
    """A policy that also scores given tactics: the log-probability its model gives each tactic's text at a
    state (the sum over the completion's tokens and the end of sequence, from the raw logits, in the prompt
    `generate` uses), so that a search can rank candidates the policy did not sample (`SearchConfig.rank`)."""

    async def score(
        self,
        states: Sequence[str],
        tactics: Sequence[Sequence[str]],
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[float]]:
        """Per state, one log-probability per tactic of ``tactics[i]``; ``premises`` as in `Policy.generate`."""
        ...


SEED_BITS = 63


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from ``parts`` (ints, strings): stable across processes
    and platforms (BLAKE2b of their ``repr``), unlike Python's ``hash``."""
    h = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(h, "little") & ((1 << SEED_BITS) - 1)


def check_seeds(states: Sequence[str], seeds: Sequence[int] | None) -> None:
    if seeds is not None and len(seeds) != len(states):
        raise ValueError(f"{len(seeds)} seeds for {len(states)} states: pass one seed per state")


def samples_per_state(n: int, temperature: float) -> int:
    """How many sequences to generate per state for ``n`` candidates: one when
    decoding greedily (``temperature <= 0``; the candidate is repeated ``n``
    times), else ``n``."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return 1 if temperature <= 0 else n


def dedup_candidates(cands: Sequence[Candidate]) -> list[Candidate]:
    """Unique candidates by whitespace-normalised tactic text, keeping the
    best logprob of each, best first; empty tactics dropped."""
    best: dict[str, Candidate] = {}
    for c in cands:
        key = " ".join(c.tactic.split())
        if not key:
            continue
        if key not in best or c.logprob > best[key].logprob:
            best[key] = c
    return sorted(best.values(), key=lambda c: c.logprob, reverse=True)
