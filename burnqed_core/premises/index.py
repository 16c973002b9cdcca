"""`PremiseIndex`: BM25 over the library's premises, the premise rule as a mask, and a theorem's own premises.

Why BM25 (the `bm25s` library: sparse matrices over numpy, no other dependency, scores every document for one
query in milliseconds, and takes a weight mask): lexical retrieval over name pieces and the constants of a
statement is the strong baseline of premise selection in Lean (BM25 plus symbol features is not beaten at
recall@10 by a structure-guided re-ranker on a Lean 4 benchmark, and a learned re-ranker has to beat it on our
own recall figures first). `bm25s` is maintained, small and fast; ``rank-bm25`` scores in Python loops and has
not been released since 2022.

The premise rule. For a library theorem (``Theorem.module`` set) only the premises of the modules its module
imports, directly or not, are candidates: never its own module, never a module after it (the trusted checker
refuses a proof that uses one, status ``premise``). For a theorem of a user's file (no module) the whole library
the worker loads is available, and so is what its preamble states before it (`burnqed_core.premises.local`):
those are ranked by a BM25 of their own (a file's few declarations are not comparable with the library's
statistics) and put first, up to half of ``k``, then the library's best fill the rest.

Every cache lives in the index object (one per search run): the masks by module and the file premises by
preamble.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from burnqed_core.data.theorems.core_pool import import_closures
from burnqed_core.errors import DataError
from burnqed_core.premises.local import file_premises
from burnqed_core.premises.records import Premise, Retrieved
from burnqed_core.premises.tokens import premise_tokens, text_tokens
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

_LOCAL_CACHE = 256  # preambles kept (one bundled set has a few hundred)


def _bm25(docs: Sequence[Sequence[str]]):  # type: ignore[no-untyped-def]
    import bm25s

    index = bm25s.BM25()
    # an empty document would make bm25s drop it; every document gets a token that no query has
    index.index([list(d) or ["\x00"] for d in docs], show_progress=False)
    return index


@dataclass(frozen=True)
class _Local:
    premises: list[Premise]
    index: object | None


class PremiseIndex:
    """The library's premises with their modules' import graph, searchable under the premise rule."""

    #: what re-orders its retrieval, for what is keyed by it (`burnqed_core.premises.rerank.RerankedIndex`):
    #: None, BM25 alone
    rerank_key: str | None = None

    def __init__(self, premises: Sequence[Premise], graph: Mapping[str, Sequence[str]]) -> None:
        t = time.perf_counter()
        self.premises: list[Premise] = [p for p in premises if p.module]
        if len(self.premises) != len(premises):
            raise DataError("the library index takes library premises only (a module each)")
        self.graph = {m: list(v) for m, v in graph.items()}
        unknown = sorted({p.module for p in self.premises} - set(self.graph))
        if unknown:
            raise DataError(f"premises of modules the import graph lacks: {', '.join(unknown[:5])}")
        self.modules = sorted(self.graph)
        self._module_id = {m: i for i, m in enumerate(self.modules)}
        self._ids = np.array([self._module_id[p.module] for p in self.premises], dtype=np.int32)
        self._closures = import_closures(self.graph)
        self._bm25 = _bm25([premise_tokens(p.name, p.type) for p in self.premises]) if self.premises else None
        self._masks: dict[str, np.ndarray] = {}
        self._local: OrderedDict[str, _Local] = OrderedDict()
        self.build_s = time.perf_counter() - t

    def __len__(self) -> int:
        return len(self.premises)

    def without_families(self, families: Collection[str]) -> PremiseIndex:
        """This index less every premise of a module of ``families`` (module families,
        `burnqed_core.data.theorems.core_pool.module_family`): the index of the loop's pool searches, which must hold
        nothing of the held-out families (``core:dev``, ``core:test``), whatever a pool module imports. The
        import graph is kept (the rule itself does not change)."""
        from burnqed_core.data.theorems.core_pool import module_family

        held = set(families)
        if not held:
            return self
        return PremiseIndex([p for p in self.premises if module_family(p.module) not in held], self.graph)

    # -- the premise rule --------------------------------------------------

    def accessible_modules(self, theorem: Theorem) -> frozenset[str] | None:
        """The modules whose premises ``theorem`` may use: its module's import closure; None for a theorem of a
        user's file (every module). A module the graph does not know is an error (the index was read from
        another library)."""
        if not theorem.module:
            return None
        closure = self._closures.get(theorem.module)
        if closure is None:
            raise DataError(f"{theorem.name}: module {theorem.module} is not in the premise index's library")
        return closure

    def mask(self, theorem: Theorem) -> np.ndarray:
        """1.0 for each library premise ``theorem`` may use, 0.0 for the others."""
        key = theorem.module
        m = self._masks.get(key)
        if m is None:
            allowed = self.accessible_modules(theorem)
            if allowed is None:
                m = np.ones(len(self.premises), dtype=np.float32)
            else:
                ids = np.array(sorted(self._module_id[x] for x in allowed if x in self._module_id), dtype=np.int32)
                m = np.isin(self._ids, ids).astype(np.float32)
            self._masks[key] = m
        return m

    # -- a theorem's own premises -----------------------------------------------

    def _file(self, preamble: str) -> _Local:
        key = hashlib.blake2b(preamble.encode("utf-8"), digest_size=16).hexdigest()
        hit = self._local.get(key)
        if hit is not None:
            self._local.move_to_end(key)
            return hit
        prem = file_premises(preamble)
        entry = _Local(prem, _bm25([premise_tokens(p.name, p.type, whole=True) for p in prem]) if prem else None)
        self._local[key] = entry
        if len(self._local) > _LOCAL_CACHE:
            self._local.popitem(last=False)
        return entry

    # -- retrieval ----------------------------------------------------------

    async def prepare(self, queries: Sequence[tuple[Theorem, str]], ks: Collection[int]) -> None:
        """Compute ahead what `retrieve` needs for these (theorem, goal) queries at these k, in one call (a
        re-ranked index encodes them with its model: `burnqed_core.premises.rerank.RerankedIndex`); BM25 needs
        nothing ahead."""
        return None

    def retrieve(self, theorem: Theorem, goal: str, k: int) -> list[Retrieved]:
        """The ``k`` premises ``theorem``'s proof may use that best match ``goal`` (a state as Lean prints it),
        best first; only premises that share a piece with the goal (score > 0). The theorem itself is never
        among them."""
        if k < 1:
            return []
        query = text_tokens(goal)
        local: list[tuple[Premise, float]] = []
        if theorem.preamble and not theorem.module:
            f = self._file(theorem.preamble)
            if f.index is not None:
                scores = f.index.get_scores(text_tokens(goal, whole=True))  # type: ignore[attr-defined]
                local = [(f.premises[i], float(scores[i])) for i in np.argsort(-scores, kind="stable")
                         if scores[i] > 0 and f.premises[i].name != theorem.name]
        library: list[tuple[Premise, float]] = []
        if self._bm25 is not None and query:
            scores = self._bm25.get_scores(query, weight_mask=self.mask(theorem))
            want = k + 1  # one spare: the theorem itself may be among them
            top = np.argpartition(-scores, min(want, len(scores) - 1))[:want] if len(scores) > want else \
                np.arange(len(scores))
            top = sorted(top, key=lambda i: (-scores[i], i))
            library = [(self.premises[i], float(scores[i])) for i in top
                       if scores[i] > 0 and self.premises[i].name != theorem.name]
        n_local = min(len(local), (k + 1) // 2)
        chosen = local[:n_local] + library[:k - n_local]
        chosen += local[n_local:n_local + k - len(chosen)]
        return [Retrieved(premise=p, score=s, rank=r) for r, (p, s) in enumerate(chosen)]
