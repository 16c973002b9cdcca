"""From tactic pairs to a training set (polars).

The rules come from the seeds (002, gotchas 11-12) and are not optional:

* **Split by theorem name, never by pair**: a theorem's pairs share variable
  names and goal shapes, so a pair-level split leaks validation into training.
  A theorem goes to validation when a hash of ``seed:name`` falls below
  ``val_fraction``: deterministic, independent of input order, and stable
  when theorems are added (a theorem never changes side). The loop draws
  this split once, before the tiny base is pre-trained (`split_theorems`,
  saved as ``split.json``): pre-training sees only the training side, and
  every later preparation reuses the same split (``val_theorems``), so that
  validation theorems are never seen by any model selected on them.
* **Drop whole theorems** any of whose tactics contains a word of
  `burnqed_core.lean.sandbox.FORBIDDEN_WORDS` (``sorry``, ``admit``, ``cheat``,
  ``native_decide``, ``ofReduceBool`` ...): one such step makes the whole
  trace untrustworthy.
* **Dedup** identical ``(state_before, tactic)`` pairs (first kept), before
  the split, so one example cannot sit on both sides.
* **Token filter**: pairs whose prompt + completion (`format_example`) is
  longer than ``max_tokens`` are dropped (they would be truncated in
  training, teaching a cut-off tactic).

`write_prepared` writes ``train.parquet`` / ``val.parquet`` (`TacticPair`
records, readable with `read_records`) and ``stats.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from tqdm import tqdm

from burnqed_core.data.pairs.prompt import format_example
from burnqed_core.errors import DataError
from burnqed_core.lean.sandbox import forbidden_words_regex
from burnqed_core.record_io import atomic_open, atomic_write_text, read_records
from burnqed_core.records import Record, TacticPair, arrow_schema

TokenCounter = Callable[[str], int]
UNSAFE_TACTIC_RE = forbidden_words_regex()  # the one list: `burnqed_core.lean.sandbox.FORBIDDEN_WORDS`
_UNSAFE = re.compile(UNSAFE_TACTIC_RE)
PAIR_COLUMNS = tuple(TacticPair.model_fields)


def is_unsafe_tactic(tactic: str) -> bool:
    """Does the tactic contain sorry/admit/cheat/native_decide as a word?"""
    return _UNSAFE.search(tactic) is not None


def char_token_estimate(text: str) -> int:
    """A tokenizer-free estimate (about 3 characters per token for Lean text
    and goal states under byte-level BPE), rounded up; +1 for end-of-sequence."""
    return math.ceil(len(text) / 3) + 1


def hf_token_counter(tokenizer_dir: str | Path) -> TokenCounter:
    """A counter using a Hugging Face tokenizer (dir or hub name in a local
    cache): tokens of the text plus one for end-of-sequence."""
    from transformers import AutoTokenizer  # heavy import: only when asked

    try:
        tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    except (OSError, ValueError) as e:
        raise DataError(f"cannot load a tokenizer from {tokenizer_dir}: {e}") from None

    def count(text: str) -> int:
        return len(tok(text, add_special_tokens=False)["input_ids"]) + 1

    return count


def is_val_theorem(name: str, seed: int, val_fraction: float) -> bool:
    """Deterministic theorem-level split: hash of ``seed:name`` in [0, 1)."""
    return _unit_hash(name, seed) < val_fraction


def _unit_hash(name: str, seed: int) -> float:
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class PairStats(BaseModel):
    """What `prepare_pairs` did, for logs, metadata and ``stats.json``."""

    model_config = ConfigDict(frozen=True)
    seed: int
    val_fraction: float
    max_tokens: int
    pairs_in: int
    theorems_in: int
    unsafe_theorems: int = Field(description="theorems dropped for sorry/admit/cheat/native_decide")
    unsafe_pairs: int = Field(description="pairs of those theorems")
    duplicate_pairs: int
    too_long_pairs: int
    empty_pairs: int = Field(description="pairs with an empty state or tactic")
    train_theorems: int
    val_theorems: int
    train_pairs: int
    val_pairs: int
    alpha_renamed_pairs: int = Field(0, description="alpha-renamed copies among the training pairs")
    depth_histogram: dict[int, int] = Field(description="kept pairs per depth (index of the step in its proof)")
    proof_length_histogram: dict[int, int] = Field(description="kept theorems per proof length (max depth + 1)")
    mean_depth: float
    max_depth: int


class PreparedPairs(BaseModel):
    """Train and validation pairs (TacticPair columns) and the stats."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    train: pl.DataFrame
    val: pl.DataFrame
    stats: PairStats


def pairs_frame(pairs: Sequence[TacticPair] | pl.DataFrame) -> pl.DataFrame:
    """TacticPair records (or a frame with their columns) as a typed frame."""
    if isinstance(pairs, pl.DataFrame):
        missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
        if missing:
            raise DataError(f"tactic pair table lacks column(s) {', '.join(missing)}")
        return pairs.select(list(PAIR_COLUMNS)).cast({"depth": pl.Int64})
    schema = {"theorem": pl.String, "state_before": pl.String, "tactic": pl.String,
              "state_after": pl.String, "depth": pl.Int64, "source": pl.String}
    return pl.DataFrame([p.model_dump() for p in pairs], schema=schema, orient="row")


def load_pairs(paths: Sequence[str | Path]) -> pl.DataFrame:
    """Tactic pairs from Parquet/JSONL record files or LeanDojo ``.json`` split
    files (or split directories: their ``train.json``), concatenated in order."""
    from burnqed_core.data.theorems.external import read_leandojo

    frames = []
    for p in map(Path, paths):
        if p.is_dir():
            p = p / "train.json"
        if p.suffix == ".json":
            frames.append(pairs_frame(read_leandojo(p, progress=True).pairs))
        else:
            frames.append(pairs_frame(read_records(p, TacticPair)))
    if not frames:
        raise DataError("no tactic pair files given")
    return pl.concat(frames, how="vertical")


def depth_histogram(df: pl.DataFrame) -> dict[int, int]:
    counts = df.group_by("depth").len().sort("depth")
    return {int(d): int(n) for d, n in counts.iter_rows()}


def proof_lengths(df: pl.DataFrame) -> dict[str, int]:
    """Proof length of each theorem in a pair table: max depth + 1."""
    agg = df.group_by("theorem").agg(pl.col("depth").max())
    return {str(t): int(d) + 1 for t, d in agg.iter_rows()}


def pair_set_stats(df: pl.DataFrame) -> dict[str, object]:
    """Counts of a pair table: pairs, theorems, depth and proof-length distributions."""
    lengths = proof_lengths(df)
    return {
        "pairs": df.height,
        "theorems": len(lengths),
        "depth_histogram": depth_histogram(df),
        "proof_length_histogram": _histogram(list(lengths.values())),
        "unsafe_pairs": df.filter(pl.col("tactic").str.contains(UNSAFE_TACTIC_RE)).height,
    }


def _histogram(values: Sequence[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in sorted(values):
        out[v] = out.get(v, 0) + 1
    return out


SPLIT_FILE = "split.json"


class TheoremSplit(BaseModel):
    """The one theorem-level train/validation split of the base pairs, drawn before pre-training."""

    model_config = ConfigDict(frozen=True)
    seed: int
    val_fraction: float
    train: list[str] = Field(description="theorems whose pairs may be trained on (pre-training and SFT)")
    val: list[str] = Field(description="theorems held out for validation: never trained on")
    withheld: list[str] = Field(default_factory=list, description="exercises (``data.withhold_fraction``): their "
                                "known proofs are never trained on; proofs the loop's search finds are")
    withhold_fraction: float = 0.0

    _val_set: frozenset[str] = PrivateAttr(default=frozenset())
    _train_set: frozenset[str] = PrivateAttr(default=frozenset())
    _withheld_set: frozenset[str] = PrivateAttr(default=frozenset())

    def model_post_init(self, _context: object) -> None:
        self._val_set, self._train_set = frozenset(self.val), frozenset(self.train)
        self._withheld_set = frozenset(self.withheld)
        if self._withheld_set & (self._val_set | self._train_set):
            raise ValueError("a withheld theorem is also on the train or validation side")

    def is_val(self, name: str) -> bool:
        """Is ``name`` a validation theorem? Only those drawn into validation before pre-training are. One the
        split does not know (a theorem of a searched pool such as Lean's library, or a corpus theorem whose trace
        failed) is not: the proofs the search finds for it are training data, every one of them (issue 65: a
        hash rule here sent about one found proof in ten to validation, never trained on); so is a withheld
        theorem's."""
        return name in self._val_set

    def is_withheld(self, name: str) -> bool:
        return name in self._withheld_set

    def trainable(self, pairs: Sequence[TacticPair]) -> list[TacticPair]:
        """``pairs`` without those of withheld theorems (their known proofs only check the corpus)."""
        if not self._withheld_set:
            return list(pairs)
        return [p for p in pairs if p.theorem not in self._withheld_set]


def split_theorems(names: Iterable[str], seed: int, val_fraction: float, *, withhold_from: Collection[str] = (),
                   withhold_fraction: float = 0.0, withhold: Collection[str] = ()) -> TheoremSplit:
    """Split theorem ``names`` once (`assign_split`): the split every stage of the loop uses. With
    ``withhold_fraction``, that share of the non-validation theorems among ``withhold_from`` (by a hash of the
    name, `is_val_theorem` with the seed + 1) is withheld: neither trained on nor validated on. The
    non-validation theorems among ``withhold`` are withheld whatever the fraction (whole families of
    exercises, ``data.withhold_families``)."""
    uniq = sorted(set(names))
    val = assign_split(uniq, seed, val_fraction) if val_fraction > 0 else set()
    candidates = set(withhold_from) & set(uniq)
    withheld = {n for n in candidates - val if is_val_theorem(n, seed + 1, withhold_fraction)}
    withheld |= (set(withhold) & set(uniq)) - val
    return TheoremSplit(seed=seed, val_fraction=val_fraction,
                        train=[n for n in uniq if n not in val and n not in withheld], val=sorted(val),
                        withheld=sorted(withheld), withhold_fraction=withhold_fraction)


def write_split(split: TheoremSplit, path: str | Path) -> Path:
    path = Path(path)
    atomic_write_text(path, split.model_dump_json(indent=1) + "\n")
    return path


def read_split(path: str | Path) -> TheoremSplit:
    """A split written by `write_split` (``split.json``); a missing or unreadable file is a `DataError`."""
    path = Path(path)
    try:
        return TheoremSplit.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"no theorem split at {path}") from None
    except ValueError as e:
        raise DataError(f"{path} is not a theorem split: {e}") from None


def assign_split(names: Sequence[str], seed: int, val_fraction: float) -> set[str]:
    """The validation theorems among ``names``. With two or more theorems
    both sides are non-empty: if the hash put none (or all) on one side, the
    theorem with the lowest (highest) hash moves over. A single theorem is
    always for training."""
    uniq = sorted(set(names))
    if len(uniq) < 2:
        return set()
    val = {n for n in uniq if is_val_theorem(n, seed, val_fraction)}
    if len(uniq) >= 2:
        if not val:
            val = {min(uniq, key=lambda n: _unit_hash(n, seed))}
        elif len(val) == len(uniq):
            val.discard(max(uniq, key=lambda n: _unit_hash(n, seed)))
    return val


class _Filtered(NamedTuple):
    """The pairs `_filter_pairs` keeps, and how many each rule dropped."""

    frame: pl.DataFrame
    unsafe_theorems: int
    unsafe_pairs: int
    empty_pairs: int
    duplicate_pairs: int
    too_long_pairs: int


def prepare_pairs(
    pairs: Sequence[TacticPair] | pl.DataFrame,
    val_fraction: float,
    seed: int,
    max_tokens: int,
    count_tokens: TokenCounter | None = None,
    progress: bool = False,
    val_theorems: Collection[str] | None = None,
    alpha_copies: int = 0,
) -> PreparedPairs:
    """Filter, dedup and split tactic pairs into a training set (see module doc). ``val_theorems``: the
    validation theorems of a split drawn earlier (`split_theorems`), used instead of drawing one here; every
    other theorem is for training. ``alpha_copies``: alpha-renamed copies of each training pair appended to
    the training side (`burnqed_core.data.pairs.alpha_rename`); validation pairs are never renamed."""
    if not 0 <= val_fraction < 1:
        raise DataError(f"val_fraction must be in [0, 1), got {val_fraction}")
    count = count_tokens or char_token_estimate
    df = pairs_frame(pairs)
    pairs_in, theorems_in = df.height, df["theorem"].n_unique()
    if pairs_in == 0:
        raise DataError("no tactic pairs to prepare")
    kept = _filter_pairs(df, max_tokens, count, progress)
    df = kept.frame
    if df.height == 0:
        raise DataError(f"no tactic pairs left after filtering ({pairs_in} in: {kept.unsafe_pairs} unsafe, "
                        f"{kept.duplicate_pairs} duplicate, {kept.too_long_pairs} over {max_tokens} tokens, "
                        f"{kept.empty_pairs} empty)")
    train, val = _split_by_theorem(df, seed, val_fraction, val_theorems)
    traced_train = train.height
    if alpha_copies > 0:
        from burnqed_core.data.pairs.alpha_rename import augment_frame

        train = augment_frame(train, alpha_copies, seed)
    lengths_by_thm = proof_lengths(df)
    stats = PairStats(
        seed=seed, val_fraction=val_fraction, max_tokens=max_tokens,
        pairs_in=pairs_in, theorems_in=theorems_in,
        unsafe_theorems=kept.unsafe_theorems, unsafe_pairs=kept.unsafe_pairs,
        duplicate_pairs=kept.duplicate_pairs, too_long_pairs=kept.too_long_pairs, empty_pairs=kept.empty_pairs,
        train_theorems=train["theorem"].n_unique(), val_theorems=val["theorem"].n_unique(),
        train_pairs=train.height, val_pairs=val.height, alpha_renamed_pairs=train.height - traced_train,
        depth_histogram=depth_histogram(df),
        proof_length_histogram=_histogram(list(lengths_by_thm.values())),
        mean_depth=float(df["depth"].mean() or 0.0), max_depth=int(df["depth"].max() or 0),
    )
    return PreparedPairs(train=train, val=val, stats=stats)


def _filter_pairs(df: pl.DataFrame, max_tokens: int, count: TokenCounter, progress: bool) -> _Filtered:
    """The rules of the module doc in order: the theorems with an unsafe tactic dropped whole, then the pairs
    with an empty state or tactic, then repeated ``(state_before, tactic)`` pairs (the first kept), then the
    pairs over ``max_tokens`` (counted by ``count`` on `format_example`)."""
    unsafe_names = df.filter(pl.col("tactic").str.contains(UNSAFE_TACTIC_RE))["theorem"].unique()
    unsafe = df.filter(pl.col("theorem").is_in(unsafe_names.implode()))
    df = df.filter(~pl.col("theorem").is_in(unsafe_names.implode()))

    nonempty = (pl.col("state_before").str.strip_chars() != "") & (pl.col("tactic").str.strip_chars() != "")
    empty_pairs = df.height - df.filter(nonempty).height
    df = df.filter(nonempty)

    before = df.height
    df = df.unique(subset=["state_before", "tactic"], keep="first", maintain_order=True)
    duplicates = before - df.height

    df, too_long = _drop_too_long(df, max_tokens, count, progress)
    return _Filtered(df, unsafe_names.len(), unsafe.height, empty_pairs, duplicates, too_long)


def _drop_too_long(df: pl.DataFrame, max_tokens: int, count: TokenCounter,
                   progress: bool) -> tuple[pl.DataFrame, int]:
    """The pairs whose prompt + completion (`format_example`) counts at most ``max_tokens`` tokens, and how many
    were longer."""
    examples = zip(df["state_before"], df["tactic"], strict=True)
    lengths = [count("".join(format_example(s, t)))
               for s, t in tqdm(examples, total=df.height, desc="token lengths", unit="pair", disable=not progress)]
    df = df.with_columns(pl.Series("_tokens", lengths, dtype=pl.Int64))
    too_long = df.filter(pl.col("_tokens") > max_tokens).height
    return df.filter(pl.col("_tokens") <= max_tokens).drop("_tokens"), too_long


def _split_by_theorem(df: pl.DataFrame, seed: int, val_fraction: float,
                      val_theorems: Collection[str] | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(train, val): the pairs of the theorems of ``val_theorems`` (when given, else of those `assign_split`
    draws) are validation, all others training."""
    if val_theorems is not None:
        val_names = set(val_theorems)
    else:
        val_names = assign_split(df["theorem"].to_list(), seed, val_fraction) if val_fraction > 0 else set()
    is_val = pl.col("theorem").is_in(sorted(val_names))
    return df.filter(~is_val), df.filter(is_val)


def frame_to_table(df: pl.DataFrame, model: type[Record]) -> pa.Table:
    """A frame with a record type's columns as an Arrow table with its schema."""
    schema = arrow_schema(model)
    table = df.select(schema.names).to_arrow()
    return table.cast(schema).replace_schema_metadata(schema.metadata)


def write_frame(df: pl.DataFrame, model: type[Record], path: str | Path) -> Path:
    """Write a frame as a record Parquet file (atomic), readable by `read_records`."""
    path = Path(path)
    with atomic_open(path) as f:
        pq.write_table(frame_to_table(df, model), f)
    return path


def write_prepared(prepared: PreparedPairs, out_dir: str | Path, extra: dict | None = None) -> dict[str, Path]:
    """``train.parquet``, ``val.parquet`` and ``stats.json`` in ``out_dir``
    (``extra`` is merged into the stats, e.g. mixing counts)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "train": write_frame(prepared.train, TacticPair, out / "train.parquet"),
        "val": write_frame(prepared.val, TacticPair, out / "val.parquet"),
    }
    stats = prepared.stats.model_dump(mode="json") | (extra or {})
    stats_path = out / "stats.json"
    atomic_write_text(stats_path, json.dumps(stats, indent=1) + "\n")
    paths["stats"] = stats_path
    return paths
