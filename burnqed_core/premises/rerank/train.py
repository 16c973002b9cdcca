"""Training the re-ranker: InfoNCE over BM25's candidates and in-batch negatives, recall@k before and after,
adoption (`burnqed_core.premises.rerank`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from burnqed_core.config import RerankConfig
from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.errors import DataError
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.records import Retrieved
from burnqed_core.premises.rerank.head import RerankHead, rerank_order
from burnqed_core.premises.rerank.pairs import PremisePair, is_val
from burnqed_core.premises.rerank.store import (
    RecallAt,
    RerankRecord,
    RerankReport,
    encode_texts,
    encoder_identity,
    save_reranker,
)

log = logging.getLogger(__name__)


@dataclass
class _Data:
    """The pairs with their BM25 lists and the encoder's vectors (goals by state, premises by prompt line)."""

    pairs: list[PremisePair]
    hits: list[list[Retrieved]]  # per pair: BM25's first max(candidates, k) under the rule
    goal_of: list[int]
    premise_ids: list[list[int]]  # per pair: the ids of its hits
    zg: torch.Tensor
    zp: torch.Tensor
    val: list[bool]
    names: list[str] = field(default_factory=list)  # per premise id: its name


async def _collect(pairs: Sequence[PremisePair], index: PremiseIndex, encoder: Any, cfg: RerankConfig) -> _Data:
    """BM25's hits of every pair under its theorem's rule, and one encoding of every state and premise line."""
    n = max(cfg.candidates, max(cfg.recall_at))
    hits = [index.retrieve(p.theorem, p.state, n) for p in pairs]
    goals = list(dict.fromkeys(p.state for p in pairs))
    line_id: dict[str, int] = {}
    names: dict[str, str] = {}
    for h in hits:
        for r in h:
            line_id.setdefault(r.premise.prompt_line(), len(line_id))
            names.setdefault(r.premise.prompt_line(), r.premise.name)
    lines = list(line_id)
    fmt = format_of(encoder)
    z = await encode_texts(encoder, [fmt.prompt_text(g) for g in goals] + lines, cfg.encode_batch_size)
    zt = torch.from_numpy(z)
    goal_id = {g: i for i, g in enumerate(goals)}
    return _Data(pairs=list(pairs), hits=hits, goal_of=[goal_id[p.state] for p in pairs],
                 premise_ids=[[line_id[r.premise.prompt_line()] for r in h] for h in hits],
                 zg=zt[:len(goals)], zp=zt[len(goals):], names=[names[x] for x in lines],
                 val=[is_val(p.theorem.name, cfg.val_fraction, cfg.seed) for p in pairs])


@dataclass
class _Examples:
    """The training side's (state, premise) examples whose premise is among the candidates, as tensors."""

    pair: list[int]
    goal: torch.Tensor  # [E]
    cands: torch.Tensor  # [E, c] premise ids (0 where padded)
    pos: torch.Tensor  # [E] the positive's place in its list
    masked: torch.Tensor  # [E, c] padding and the step's other premises: not negatives
    positive: torch.Tensor  # [E] the positive's premise id
    shown: list[set[str]]  # per example: the names in its list or named by its step (no in-batch negatives)


def _examples(data: _Data, c: int) -> _Examples:
    rows: list[tuple[int, int]] = []
    for i, (pair, h) in enumerate(zip(data.pairs, data.hits, strict=True)):
        if data.val[i]:
            continue
        names = [r.premise.name for r in h[:c]]
        rows += [(i, names.index(u)) for u in pair.premises if u in names]
    cands = torch.zeros((len(rows), c), dtype=torch.long)
    masked = torch.ones((len(rows), c), dtype=torch.bool)
    shown: list[set[str]] = []
    for e, (i, pos) in enumerate(rows):
        ids = data.premise_ids[i][:c]
        cands[e, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        named = set(data.pairs[i].premises)
        masked[e, :len(ids)] = torch.tensor([r.premise.name in named and j != pos
                                             for j, r in enumerate(data.hits[i][:c])])
        shown.append(named | {r.premise.name for r in data.hits[i][:c]})
    pos = torch.tensor([p for _, p in rows], dtype=torch.long)
    return _Examples(pair=[i for i, _ in rows], goal=torch.tensor([data.goal_of[i] for i, _ in rows],
                                                                  dtype=torch.long),
                     cands=cands, pos=pos, masked=masked, positive=cands[torch.arange(len(rows)), pos],
                     shown=shown)


def _loss(head: RerankHead, data: _Data, ex: _Examples, idx: torch.Tensor, c: int) -> torch.Tensor:
    """InfoNCE of the examples ``idx``: each positive against its list and the batch's other positives."""
    g = head.embed_goals(data.zg[ex.goal[idx]])  # [B, d]
    p = head.embed_premises(data.zp[ex.cands[idx]])  # [B, c, d]
    ranks = torch.arange(c).expand(len(idx), c)
    listed = head.logits(torch.einsum("bd,bcd->bc", g, p), ranks).masked_fill(ex.masked[idx], float("-inf"))
    q = head.embed_premises(data.zp[ex.positive[idx]])  # [B, d]
    inb = head.logits(g @ q.T, torch.full((len(idx), len(idx)), c))
    rows = idx.tolist()
    positives = [data.names[int(ex.positive[j])] for j in rows]
    excluded = torch.tensor([[name in ex.shown[i] for name in positives] for i in rows], dtype=torch.bool)
    inb = inb.masked_fill(excluded, float("-inf"))
    return nn.functional.cross_entropy(torch.cat([listed, inb], dim=1), ex.pos[idx])


def _fit(head: RerankHead, data: _Data, ex: _Examples, cfg: RerankConfig) -> list[float]:
    """``cfg.steps`` AdamW steps over seeded permutations of the examples; the loss of each step."""
    gen = torch.Generator().manual_seed(cfg.seed)
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=0.0)
    n = len(ex.pair)
    order = torch.randperm(n, generator=gen)
    at, losses = 0, []
    head.train()
    for _ in range(cfg.steps):
        if at >= n:
            order, at = torch.randperm(n, generator=gen), 0
        idx = order[at:at + cfg.batch_size]
        at += cfg.batch_size
        loss = _loss(head, data, ex, idx, cfg.candidates)
        total = loss + cfg.weight_decay * head.drift()
        opt.zero_grad()
        total.backward()
        opt.step()
        losses.append(float(loss.detach()))
    head.eval()
    return losses


def _recall(head: RerankHead | None, data: _Data, which: Sequence[int], cfg: RerankConfig) -> dict[int, float]:
    """Recall@k of the pairs ``which``, BM25's order (``head`` None) or re-ranked by ``head``."""
    c, hit, total = cfg.candidates, dict.fromkeys(cfg.recall_at, 0), 0
    with torch.inference_mode():
        zg = head.embed_goals(data.zg) if head is not None else None
        zp = head.embed_premises(data.zp) if head is not None else None
    for i in which:
        names = [r.premise.name for r in data.hits[i]]
        if zg is not None and zp is not None and len(names) > 1:
            ids = data.premise_ids[i][:c]
            order = rerank_order(head, zg[data.goal_of[i]], zp[ids])  # type: ignore[arg-type]
            names = [names[j] for j in order] + names[c:]
        used = set(data.pairs[i].premises)
        total += len(used)
        for k in cfg.recall_at:
            hit[k] += len(used & set(names[:k]))
    return {k: hit[k] / max(total, 1) for k in cfg.recall_at}


def _side(head: RerankHead, data: _Data, which: Sequence[int], cfg: RerankConfig) -> RecallAt:
    return RecallAt(pairs=sum(len(data.pairs[i].premises) for i in which), before=_recall(None, data, which, cfg),
                    after=_recall(head, data, which, cfg))


def adoption(report: RerankReport, cfg: RerankConfig) -> dict[str, Any]:
    """``adopted`` and ``verdict`` of a trained re-ranker (``require_gain``)."""
    if not cfg.require_gain:
        return {"adopted": True, "verdict": "premises.rerank.require_gain is off"}
    if report.val is None:
        return {"adopted": False, "verdict": "no validation pair to show it recalls at least as much as BM25"}
    after, before = (sum(r.values()) / len(r) for r in (report.val.after, report.val.before))
    if after < before:
        return {"adopted": False, "verdict": f"on its validation pairs it recalls less than BM25 (mean over "
                                             f"recall@k {100 * after:.1f}% against {100 * before:.1f}%)"}
    return {"adopted": True, "verdict": f"on its validation pairs it recalls at least as much as BM25 (mean over "
                                        f"recall@k {100 * after:.1f}% against {100 * before:.1f}%)"}


async def train_reranker(pairs: Sequence[PremisePair], index: PremiseIndex, encoder: Any, fingerprint: str,
                         cfg: RerankConfig, out_dir: Path, *, model_path: str | Path | None = None
                         ) -> RerankRecord:
    """Train a re-ranker on ``pairs`` (BM25's candidates from ``index``, vectors from ``encoder``, whose model
    fingerprint is ``fingerprint``) and save it in ``out_dir`` when it is adopted (``require_gain``: its record
    says; nothing is written otherwise). A `DataError` when no training pair's premise is among its candidates
    (nothing to learn)."""
    pooling, text_format, _ = encoder_identity(encoder)
    t0 = time.perf_counter()
    data = await _collect(pairs, index, encoder, cfg)
    encode_s = time.perf_counter() - t0
    ex = _examples(data, cfg.candidates)
    if not ex.pair:
        raise DataError(f"no training pair's premise is among its {cfg.candidates} BM25 candidates "
                        f"({len(pairs)} pairs, {sum(data.val)} of them on the validation side)")
    encoder_dim = int(data.zg.shape[1])
    head = RerankHead(encoder_dim, cfg.dim or encoder_dim, cfg.seed)
    train = [i for i, v in enumerate(data.val) if not v]
    head.fit_centres(data.zg[sorted({data.goal_of[i] for i in train})],
                     data.zp[sorted({j for i in train for j in data.premise_ids[i][:cfg.candidates]})])
    losses = _fit(head, data, ex, cfg)
    val = [i for i, v in enumerate(data.val) if v]
    names = [set(p.premises) for p in pairs]
    report = RerankReport(
        pairs=sum(len(u) for u in names), states=len(pairs), theorems=len({p.theorem.name for p in pairs}),
        train_pairs=sum(len(names[i]) for i in train), val_pairs=sum(len(names[i]) for i in val),
        in_candidates=sum(len(u & {r.premise.name for r in h[:cfg.candidates]}) for u, h in
                          zip(names, data.hits, strict=True)) / max(sum(len(u) for u in names), 1),
        examples=len(ex.pair), candidates=cfg.candidates, steps=cfg.steps,
        loss_first=losses[0] if losses else None, loss_last=losses[-1] if losses else None,
        scale=float(head.scale.detach()), beta=float(head.beta.detach()),
        train=_side(head, data, train, cfg), val=_side(head, data, val, cfg) if val else None,
        encode_s=encode_s, train_s=time.perf_counter() - t0)
    report = report.model_copy(update=adoption(report, cfg))
    record = RerankRecord(fingerprint=fingerprint, model_path=str(model_path or ""), pooling=pooling,
                          text_format=text_format, encoder_dim=encoder_dim, dim=cfg.dim or encoder_dim,
                          candidates=cfg.candidates, seed=cfg.seed, weights_sha256="",
                          config=cfg.model_dump(mode="json"), report=report)
    return save_reranker(head, record, out_dir) if report.adopted else record
