"""The learned premise re-ranker: BM25's candidates re-ordered by the policy model's own embeddings (issue 65).

BM25 (`burnqed_core.premises.index`) ranks what a theorem may cite by shared name pieces and constants. What a
found proof actually cited is a second signal: iteration N's policy model encodes a state (as its prompt, the
text the policy sees) and a premise line (``name : type``, `Premise.prompt_line`) into vectors (`Policy.encode`,
the EBM's encoder), and a small head learns from the found proofs of iterations < N which premise a state's
step used.

**The head** (`RerankHead`). Each kind of text is centred (minus the training mean of its kind: pooled vectors
of one model are close together, and a state's prompt and a premise line differ by more than their meaning), then
mapped by a linear map of its own, both maps starting as the same seeded one (the identity when ``dim`` is the
encoder's width), so that before training the score is the encoder's own cosine. The score of premise p at
state s is

    score(s, p) = a · cos(G (z_s - μ_s), P (z_p - μ_p)) − b · log(1 + rank_BM25(s, p))

with a and b learned (log-parametrised). Why combine so: the pairs are few (a round of the ``core`` run finds a
few dozen), and BM25's order is a strong prior (the baseline of premise selection in Lean, and the order that
made the premise steps the proofs were found with). Learning b beside a lets InfoNCE decide how far the
embeddings may overrule BM25's order, on the same pairs; a head trained on too little stays near BM25's order
rather than replacing it with noise. Equal scores keep BM25's order (a stable sort).

**What is re-ranked, and the premise rule.** The ``candidates`` best BM25 hits of a state under the theorem's
rule (`PremiseIndex.retrieve`): retrieval at k returns the first k of them re-ordered, then BM25's hits beyond
``candidates`` (when k exceeds it) in BM25's order. A re-ranked retrieval therefore returns exactly premises BM25
returned under the rule, never another: the rule holds by construction.

**Training** (`train_reranker`). The pairs (`premise_pairs`): each positive step of a found proof whose tactic
names a premise its theorem may cite (a library premise of its module's import closure, or a lemma its file
states before it), with the state it was applied to. InfoNCE per (state, premise): the positive against the
state's other BM25 candidates (another premise the same step names is not a negative) and against the other
pairs' premises of the batch (in-batch negatives, rank feature ``candidates``: beyond the list). A pair whose
premise BM25 does not return among the candidates cannot be re-ranked into place: it is left out of the loss
and counted as a miss in the recall. Theorems are split by a hash of their name and the seed: the
``val_fraction`` side only measures. Seeded (the initial map, the batch order): the same pairs, settings and
encoder give the same head. Recall@k before (BM25) and after (re-ranked) on both sides is recorded. With
``require_gain`` (the default) a re-ranker is adopted (saved, so that the searches use it) only when on its
validation pairs it recalls at least as much as BM25 (the mean of recall@k over ``recall_at``): a few dozen pairs
overfit easily (the ``core`` run's first two rounds give about 30, and a head trained on them recalls less than
BM25 on theorems it did not train on: `benchmarks/premise_rerank.py`), and the searches then keep BM25's order.

**The folder.** ``reranker.pt`` (the head's weights) and ``reranker.json`` (`RerankRecord`: the encoder's model
fingerprint, pooling, text format and width, the settings, the training report; written last, its presence
marks a usable re-ranker). `load_reranker` refuses an encoder of another model, pooling, text format or width
(`RerankMismatchError`): never a silent mix.

**At search time** (`RerankedIndex`): a `PremiseIndex` whose `retrieve` re-ranks. The search calls
`PremiseIndex.prepare` with a batch's states first (one `encode` call for the states and the premises not
encoded yet), after which `retrieve` is synchronous. The projected vectors live in the `PremiseReranker`
(each premise once, the most recent states), never in a module.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from burnqed_core.config import RerankConfig
from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.local import file_premises
from burnqed_core.premises.records import Premise, Retrieved
from burnqed_core.record_io import atomic_open, atomic_write_text, file_sha256
from burnqed_core.records import Theorem, TrajectoryRecord

log = logging.getLogger(__name__)

FORMAT = "premise-rerank-v1"
WEIGHTS_FILE = "reranker.pt"
RECORD_FILE = "reranker.json"
GOAL_CACHE = 4096  # states whose projected vectors a re-ranker keeps (a search batch holds far fewer)
_IDENT = re.compile(r"[A-Za-z_][\w'.!?]*")


class RerankMismatchError(BurnqedError):
    """A re-ranker asked to work on another encoder than the one it was trained on."""


# -- the pairs ---------------------------------------------------------------------------------------------


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


# -- the head ----------------------------------------------------------------------------------------------


def _initial_map(encoder_dim: int, dim: int, seed: int) -> torch.Tensor:
    """``[dim, encoder_dim]``: the identity at equal widths, else seeded orthonormal rows (or columns)."""
    if dim == encoder_dim:
        return torch.eye(dim)
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(max(dim, encoder_dim), min(dim, encoder_dim), generator=g))
    return (q if dim > encoder_dim else q.T).contiguous()


class RerankHead(nn.Module):
    """The two maps, the centres, and the two weights of the score (module docstring)."""

    def __init__(self, encoder_dim: int, dim: int, seed: int = 0) -> None:
        super().__init__()
        w0 = _initial_map(encoder_dim, dim, seed)
        self.goal = nn.Linear(encoder_dim, dim, bias=False)
        self.premise = nn.Linear(encoder_dim, dim, bias=False)
        with torch.no_grad():
            self.goal.weight.copy_(w0)
            self.premise.weight.copy_(w0)
        self.register_buffer("w0", w0.clone())
        self.register_buffer("goal_mean", torch.zeros(encoder_dim))
        self.register_buffer("premise_mean", torch.zeros(encoder_dim))
        self.log_scale = nn.Parameter(torch.tensor(math.log(10.0)))
        self.log_beta = nn.Parameter(torch.tensor(0.0))

    @torch.no_grad()
    def fit_centres(self, goals: torch.Tensor, premises: torch.Tensor) -> None:
        self.goal_mean.copy_(goals.float().mean(0))
        self.premise_mean.copy_(premises.float().mean(0))

    def embed_goals(self, z: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.goal(z.float() - self.goal_mean), dim=-1)

    def embed_premises(self, z: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.premise(z.float() - self.premise_mean), dim=-1)

    @property
    def scale(self) -> torch.Tensor:
        return self.log_scale.clamp(max=math.log(100.0)).exp()

    @property
    def beta(self) -> torch.Tensor:
        return self.log_beta.exp()

    def logits(self, cos: torch.Tensor, ranks: torch.Tensor) -> torch.Tensor:
        """The score of each premise from its cosine and its BM25 rank (0 the best)."""
        return self.scale * cos - self.beta * torch.log1p(ranks.float())

    def drift(self) -> torch.Tensor:
        """How far both maps moved from their initial one (squared Frobenius norms)."""
        return ((self.goal.weight - self.w0) ** 2).sum() + ((self.premise.weight - self.w0) ** 2).sum()


def rerank_order(head: RerankHead, goal: torch.Tensor, premises: torch.Tensor) -> list[int]:
    """The order of ``premises`` (projected, ``[n, dim]``, in BM25's order) for the projected ``goal``: by score,
    BM25's order among equals."""
    with torch.inference_mode():
        scores = head.logits(premises @ goal, torch.arange(premises.shape[0])).numpy()
    return [int(i) for i in np.argsort(-scores, kind="stable")]


# -- records -----------------------------------------------------------------------------------------------


class RecallAt(BaseModel):
    """Recall@k over (state, premise) pairs: the share whose premise is among the first k retrieved, by BM25
    (``before``) and re-ranked (``after``)."""

    model_config = ConfigDict(frozen=True)
    pairs: int = Field(ge=0, description="(state, premise) pairs counted")
    before: dict[int, float]
    after: dict[int, float]

    def line(self) -> str:
        return ", ".join(f"@{k} {100 * self.before[k]:.1f}% -> {100 * self.after[k]:.1f}%" for k in self.before)


class RerankReport(BaseModel):
    """What a training run of the re-ranker saw and measured."""

    model_config = ConfigDict(frozen=True)
    pairs: int = Field(ge=0, description="(state, premise) pairs of the found proofs (a step naming two: two)")
    states: int = Field(ge=0, description="states (steps) they come from")
    theorems: int = Field(ge=0)
    train_pairs: int = Field(ge=0)
    val_pairs: int = Field(ge=0)
    in_candidates: float = Field(description="share of the pairs whose premise BM25 returns among the candidates")
    examples: int = Field(ge=0, description="training pairs in the loss (premise among the candidates)")
    candidates: int
    steps: int
    loss_first: float | None = None
    loss_last: float | None = None
    scale: float = Field(description="a: the weight of the cosine after training")
    beta: float = Field(description="b: the weight of log(1 + BM25 rank) after training")
    train: RecallAt
    val: RecallAt | None = None
    encode_s: float = 0.0
    train_s: float = 0.0
    adopted: bool = Field(True, description="whether it re-ranks the searches (``require_gain``)")
    verdict: str = Field("", description="why it is adopted or not")

    def summary(self) -> str:
        val = f"; val {self.val.line()}" if self.val is not None else "; no validation pair"
        head = "" if self.adopted else f"not adopted ({self.verdict}): "
        return (f"{head}re-ranker on {self.pairs} (state, premise) pairs of {self.states} states, {self.theorems} "
                f"theorems ({self.train_pairs} train / {self.val_pairs} val; {100 * self.in_candidates:.0f}% among the "
                f"{self.candidates} BM25 candidates), {self.steps} steps, loss "
                f"{self.loss_first or 0:.3f} -> {self.loss_last or 0:.3f}; recall train {self.train.line()}{val}; "
                f"trained in {self.train_s:.1f} s (encoding {self.encode_s:.1f} s)")


class RerankRecord(BaseModel):
    """Everything needed to rebuild and check a saved re-ranker (``reranker.json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    format: str = FORMAT
    fingerprint: str = Field(description="the encoder's model fingerprint (`burnqed_core.ebm.embeddings`)")
    model_path: str = ""
    pooling: str
    text_format: str = Field(description="the encoder's prompt format version (states are encoded as prompts)")
    encoder_dim: int = Field(gt=0)
    dim: int = Field(gt=0)
    candidates: int = Field(ge=2)
    seed: int
    weights_sha256: str
    config: dict[str, Any]
    report: RerankReport

    @property
    def key(self) -> str:
        """The re-ranker's identity (its encoder and its weights), for what is keyed by the retrieval."""
        return f"{self.fingerprint[:16]}:{self.weights_sha256[:16]}"


def has_reranker(directory: str | Path | None) -> bool:
    """Whether ``directory`` holds a saved re-ranker (a ``premise_reranker`` stage of iteration 0 has none)."""
    return directory is not None and (Path(directory) / RECORD_FILE).is_file() and \
        (Path(directory) / WEIGHTS_FILE).is_file()


def read_record(directory: str | Path) -> RerankRecord:
    d = Path(directory)
    if not has_reranker(d):
        raise DataError(f"{d}: no premise re-ranker here (expected {RECORD_FILE} and {WEIGHTS_FILE})")
    return RerankRecord.model_validate_json((d / RECORD_FILE).read_text(encoding="utf-8"))


def save_reranker(head: RerankHead, record: RerankRecord, out_dir: Path) -> RerankRecord:
    """``reranker.pt``, then ``reranker.json`` with the weights' digest (last: it marks the folder complete)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_open(out_dir / WEIGHTS_FILE) as f:
        torch.save(head.state_dict(), f)
    record = record.model_copy(update={"weights_sha256": file_sha256(out_dir / WEIGHTS_FILE)})
    atomic_write_text(out_dir / RECORD_FILE, record.model_dump_json(indent=1) + "\n")
    return record


# -- the encoder -------------------------------------------------------------------------------------------


def encoder_identity(encoder: Any) -> tuple[str, str, int | None]:
    """(pooling, text format, width) of an encoder (a policy); an encoder without a pooling cannot encode."""
    pooling = getattr(encoder, "pooling", None)
    if not isinstance(pooling, str):
        raise RerankMismatchError(f"{getattr(encoder, 'name', encoder)!r} has no pooling: it cannot encode")
    hidden = getattr(encoder, "hidden_size", None)
    return pooling, format_of(encoder).version, hidden if isinstance(hidden, int) else None


def check_encoder(record: RerankRecord, encoder: Any, fingerprint: str, where: Path) -> None:
    """Refuse an encoder that does not encode as the re-ranker was trained (module docstring)."""
    pooling, text_format, hidden = encoder_identity(encoder)
    wrong = [(what, a, b) for what, a, b in (("model", record.fingerprint, fingerprint),
                                             ("pooling", record.pooling, pooling),
                                             ("text format", record.text_format, text_format))
             if a != b]
    if hidden is not None and hidden != record.encoder_dim:
        wrong.append(("width", str(record.encoder_dim), str(hidden)))
    if wrong:
        what, a, b = wrong[0]
        raise RerankMismatchError(
            f"the premise re-ranker in {where} was trained on embeddings of {what} {a[:24]!r} "
            f"({record.model_path or '?'}), this encoder's is {b[:24]!r}: use the re-ranker of the same iteration "
            f"as the model, or retrain it")


async def encode_texts(encoder: Any, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """``[len(texts), width]`` float32 vectors of ``texts`` through ``encoder.encode``, ``batch_size`` a call."""
    out: list[list[float]] = []
    for start in range(0, len(texts), batch_size):
        chunk = list(texts[start:start + batch_size])
        vecs = await encoder.encode(chunk)
        if len(vecs) != len(chunk):
            raise RerankMismatchError(f"the encoder returned {len(vecs)} vectors for {len(chunk)} texts")
        out.extend(vecs)
    return np.asarray(out, dtype=np.float32).reshape(len(texts), -1) if out else np.zeros((0, 0), np.float32)


# -- at search time ----------------------------------------------------------------------------------------


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


# -- training ----------------------------------------------------------------------------------------------


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
