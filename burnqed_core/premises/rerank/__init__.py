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

from burnqed_core.premises.rerank.head import RerankHead, rerank_order
from burnqed_core.premises.rerank.pairs import PremisePair, is_val, premise_pairs
from burnqed_core.premises.rerank.search import GOAL_CACHE, PremiseReranker, RerankedIndex, load_reranker
from burnqed_core.premises.rerank.store import (
    FORMAT,
    RECORD_FILE,
    WEIGHTS_FILE,
    RecallAt,
    RerankMismatchError,
    RerankRecord,
    RerankReport,
    check_encoder,
    encode_texts,
    encoder_identity,
    has_reranker,
    read_record,
    save_reranker,
)
from burnqed_core.premises.rerank.train import adoption, train_reranker

__all__ = ("FORMAT", "GOAL_CACHE", "RECORD_FILE", "WEIGHTS_FILE", "PremisePair", "PremiseReranker", "RecallAt",
           "RerankHead", "RerankMismatchError", "RerankRecord", "RerankReport", "RerankedIndex", "adoption",
           "check_encoder", "encode_texts", "encoder_identity", "has_reranker", "is_val", "load_reranker",
           "premise_pairs", "read_record", "rerank_order", "save_reranker", "train_reranker")
