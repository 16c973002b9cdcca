"""A saved re-ranker: its record (encoder identity, settings, training report), its weights, and the check
that an encoder is the one it was trained on (`burnqed_core.premises.rerank`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.premises.rerank.head import RerankHead
from burnqed_core.record_io import atomic_open, atomic_write_text, file_sha256

FORMAT = "premise-rerank-v1"
WEIGHTS_FILE = "reranker.pt"
RECORD_FILE = "reranker.json"


class RerankMismatchError(BurnqedError):
    """A re-ranker asked to work on another encoder than the one it was trained on."""


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
