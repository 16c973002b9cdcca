"""The re-ranker at search time: a `PremiseIndex` whose retrieval re-orders BM25's candidates
(`burnqed_core.premises.rerank`)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.errors import DataError
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.records import Premise, Retrieved
from burnqed_core.premises.rerank.head import RerankHead, rerank_order
from burnqed_core.premises.rerank.store import (
    FORMAT,
    RECORD_FILE,
    WEIGHTS_FILE,
    RerankMismatchError,
    RerankRecord,
    check_encoder,
    encode_texts,
    read_record,
)
from burnqed_core.record_io import file_sha256
from burnqed_core.records import Theorem

GOAL_CACHE = 4096  # states whose projected vectors a re-ranker keeps (a search batch holds far fewer)


class PremiseReranker:
    """A trained head on its encoder, with the projected vectors it has computed (premises: each once; states:
    the `GOAL_CACHE` most recent)."""

    def __init__(self, head: RerankHead, record: RerankRecord, encoder: Any, batch_size: int = 64) -> None:
        self.head = head.eval()
        self.record = record
        self.encoder = encoder
        self.batch_size = batch_size
        self.candidates = record.candidates
        self._fmt = format_of(encoder)
        self._premises: dict[str, torch.Tensor] = {}
        self._goals: OrderedDict[str, torch.Tensor] = OrderedDict()
        self.encoded = 0
        self.encode_calls = 0
        self.encode_s = 0.0

    @property
    def key(self) -> str:
        return self.record.key

    async def prepare(self, goals: Sequence[str], premises: Iterable[Premise]) -> None:
        """Encode and project, in one pass, the ``goals`` (states) and ``premises`` not held yet."""
        new_goals = [g for g in dict.fromkeys(goals) if g not in self._goals]
        new_lines = [x for x in dict.fromkeys(p.prompt_line() for p in premises) if x not in self._premises]
        for g in goals:
            if g in self._goals:
                self._goals.move_to_end(g)
        if not new_goals and not new_lines:
            return
        t = time.perf_counter()
        z = await encode_texts(self.encoder, [self._fmt.prompt_text(g) for g in new_goals] + new_lines,
                               self.batch_size)
        if z.shape[1] != self.record.encoder_dim:
            raise RerankMismatchError(f"the encoder returns width {z.shape[1]}, the re-ranker was trained on "
                                      f"{self.record.encoder_dim}")
        zt = torch.from_numpy(z)
        with torch.inference_mode():
            g_vecs = self.head.embed_goals(zt[:len(new_goals)])
            p_vecs = self.head.embed_premises(zt[len(new_goals):])
        self._premises.update(zip(new_lines, p_vecs, strict=True))
        self._goals.update(zip(new_goals, g_vecs, strict=True))
        while len(self._goals) > max(GOAL_CACHE, len(goals)):
            self._goals.popitem(last=False)
        self.encoded += len(new_goals) + len(new_lines)
        self.encode_calls += 1
        self.encode_s += time.perf_counter() - t

    def order(self, goal: str, retrieved: Sequence[Retrieved]) -> list[Retrieved]:
        """``retrieved`` (BM25's, best first) re-ordered for ``goal``; `prepare` must have seen both."""
        if len(retrieved) < 2:
            return list(retrieved)
        g = self._goals.get(goal)
        lines = [r.premise.prompt_line() for r in retrieved]
        if g is None or any(x not in self._premises for x in lines):
            raise RuntimeError("premise re-ranker: a state or premise was not prepared (PremiseIndex.prepare "
                               "first)")
        order = rerank_order(self.head, g, torch.stack([self._premises[x] for x in lines]))
        return [retrieved[i] for i in order]


class RerankedIndex(PremiseIndex):
    """``index`` with its retrieval re-ranked by ``reranker`` (the premise rule is ``index``'s: only what its BM25
    returns is re-ordered). The library, masks and BM25 are ``index``'s own objects, shared, nothing rebuilt."""

    def __init__(self, index: PremiseIndex, reranker: PremiseReranker) -> None:
        # not PremiseIndex.__init__: ``index``'s library, masks and BM25 are taken as they are
        if isinstance(index, RerankedIndex):
            index = index.base
        self.__dict__.update(index.__dict__)
        self.base = index
        self.reranker = reranker
        self._hits: OrderedDict[tuple[str, str, str, str, int], list[Retrieved]] = OrderedDict()

    @property
    def rerank_key(self) -> str | None:  # type: ignore[override]
        return self.reranker.key

    def without_families(self, families: Collection[str]) -> PremiseIndex:
        return RerankedIndex(self.base.without_families(families), self.reranker)

    def _bm25_hits(self, theorem: Theorem, goal: str, k: int) -> list[Retrieved]:
        n = max(k, self.reranker.candidates)
        key = (theorem.name, theorem.module, theorem.preamble, goal, n)
        hit = self._hits.get(key)
        if hit is None:
            hit = self._hits[key] = self.base.retrieve(theorem, goal, n)
            if len(self._hits) > GOAL_CACHE:
                self._hits.popitem(last=False)
        return hit

    async def prepare(self, queries: Sequence[tuple[Theorem, str]], ks: Collection[int]) -> None:
        c = self.reranker.candidates
        premises = [r.premise for thm, goal in queries for k in ks if k > 0 for r in self._bm25_hits(thm, goal, k)[:c]]
        await self.reranker.prepare([goal for _, goal in queries], premises)

    def retrieve(self, theorem: Theorem, goal: str, k: int) -> list[Retrieved]:
        if k < 1:
            return []
        hits = self._bm25_hits(theorem, goal, k)
        c = self.reranker.candidates
        ordered = self.reranker.order(goal, hits[:c]) + hits[c:]
        return [r.model_copy(update={"rank": i}) for i, r in enumerate(ordered[:k])]

    async def retrieve_async(self, theorem: Theorem, goal: str, k: int) -> list[Retrieved]:
        """`prepare` then `retrieve`, for one query."""
        await self.prepare([(theorem, goal)], [k])
        return self.retrieve(theorem, goal, k)


def load_reranker(directory: str | Path, encoder: Any, fingerprint: str, batch_size: int = 64) -> PremiseReranker:
    """The re-ranker saved in ``directory`` on ``encoder`` (whose model fingerprint is ``fingerprint``:
    `burnqed_core.ebm.embeddings.policy_fingerprint`); another encoder than the one it was trained on is a
    `RerankMismatchError`."""
    d = Path(directory)
    record = read_record(d)
    if record.format != FORMAT:
        raise DataError(f"{d}: a premise re-ranker of format {record.format!r}, this code reads {FORMAT!r}")
    check_encoder(record, encoder, fingerprint, d)
    if file_sha256(d / WEIGHTS_FILE) != record.weights_sha256:
        raise DataError(f"{d / WEIGHTS_FILE}: not the weights {RECORD_FILE} was written with")
    head = RerankHead(record.encoder_dim, record.dim, record.seed)
    head.load_state_dict(torch.load(d / WEIGHTS_FILE, map_location="cpu", weights_only=True))
    return PremiseReranker(head, record, encoder, batch_size=batch_size)
