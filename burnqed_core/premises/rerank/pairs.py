"""The re-ranker's training pairs: (state, premise) from the positive steps of found proofs, under the premise
rule (`burnqed_core.premises.rerank`)."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.errors import DataError
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.local import file_premises
from burnqed_core.records import Theorem, TrajectoryRecord

log = logging.getLogger(__name__)

_IDENT = re.compile(r"[A-Za-z_][\w'.!?]*")


class PremisePair(BaseModel):
    """A state of a found proof and the premises its step named."""

    model_config = ConfigDict(frozen=True)
    theorem: Theorem
    state: str
    premises: list[str] = Field(description="full names, sorted")


def _local_names(theorem: Theorem) -> dict[str, str]:
    """name -> full name of the premises ``theorem``'s own file states before it (by full name and by last
    component); none for a library theorem."""
    out: dict[str, str] = {}
    if theorem.preamble and not theorem.module:
        for p in file_premises(theorem.preamble):
            out.setdefault(p.name.rsplit(".", 1)[-1], p.name)
            out[p.name] = p.name
    return out


def _resolve(ident: str, local: Mapping[str, str], mask: np.ndarray, library: Mapping[str, int]) -> str | None:
    """The premise ``ident`` names that its theorem may cite (a file's own, or a library premise the mask
    allows), or None."""
    full = local.get(ident)
    if full is not None:
        return full
    i = library.get(ident)
    return ident if i is not None and mask[i] > 0 else None


def _mask(index: PremiseIndex, theorem: Theorem) -> np.ndarray:
    """The premise rule's mask of ``theorem``; none allowed when the index's library does not know its module
    (logged: its steps then name no premise it may cite here)."""
    try:
        return index.mask(theorem) if len(index) else np.zeros(0)
    except DataError as e:
        log.warning("premise pairs: %s", e)
        return np.zeros(len(index))


def premise_pairs(records: Iterable[TrajectoryRecord], theorems: Mapping[str, Theorem],
                  index: PremiseIndex) -> list[PremisePair]:
    """One `PremisePair` per positive step of ``records`` whose tactic names a premise its theorem may cite (a
    library premise of ``index`` its module's import closure holds, any for a theorem of a user's file; a lemma or
    definition its file states before it), the theorem itself never. Steps of theorems ``theorems`` lacks are
    left out; a pair found twice (two passes of one search) counts once."""
    from burnqed_core.data.pairs.mixing import positive_steps

    library = {p.name: i for i, p in enumerate(index.premises)}
    out: list[PremisePair] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    scope: dict[str, tuple[dict[str, str], np.ndarray]] = {}
    for step in positive_steps(records):
        thm = theorems.get(step.theorem)
        if thm is None:
            continue
        if thm.name not in scope:
            scope[thm.name] = (_local_names(thm), _mask(index, thm))
        local, mask = scope[thm.name]
        used = sorted({full for ident in _IDENT.findall(step.tactic)
                       if (full := _resolve(ident, local, mask, library)) is not None and full != thm.name})
        key = (thm.name, step.state_before, tuple(used))
        if used and key not in seen:
            seen.add(key)
            out.append(PremisePair(theorem=thm, state=step.state_before, premises=used))
    return out


def is_val(theorem: str, fraction: float, seed: int) -> bool:
    """Whether ``theorem``'s pairs only measure (a hash of its name and the seed, below ``fraction``)."""
    h = hashlib.blake2b(f"{seed}:{theorem}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2.0**64 < fraction
