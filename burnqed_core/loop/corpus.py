"""The base corpus as the loop sees it: its theorems (less excluded families), the base pairs, the one
theorem split drawn before pre-training, the withheld exercises, and the files the base stages keep them in."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burnqed_core.config import Profile
from burnqed_core.data.pairs.prepare import SPLIT_FILE
from burnqed_core.data.theorems.load import corpus_theorems
from burnqed_core.errors import DataError
from burnqed_core.record_io import read_parquet
from burnqed_core.records import TacticPair

if TYPE_CHECKING:
    from burnqed_core.data.pairs.prepare import TheoremSplit

log = logging.getLogger(__name__)

PAIRS_FILE = "pairs.parquet"
BASE_MODEL_FILE = "base_model.json"


def base_pairs(layout_traced: Path) -> list[TacticPair]:
    return read_parquet(layout_traced / PAIRS_FILE, TacticPair)


def frame_pairs(df: Any) -> list[TacticPair]:
    """The rows of a pair frame (`burnqed_core.data.pairs.prepare.pairs_frame` columns) as records."""
    return [TacticPair(**row) for row in df.iter_rows(named=True)]


def base_split(profile: Profile, pairs: Sequence[TacticPair]) -> TheoremSplit:
    """The one theorem-level split of the base pairs (``data.seed``, ``data.val_fraction``), drawn before
    pre-training: `base_model` saves it as ``split.json``, `tactic_pairs` reuses it. With
    ``data.withhold_fraction``, that share of the theorems the search could select (no single automation tactic
    closes them, by the corpus's automation map, and their proofs have two steps or more) is withheld: search-only
    exercises whose proofs the loop must find."""
    from burnqed_core.data.pairs.prepare import pairs_frame, proof_lengths, split_theorems
    from burnqed_core.data.theorems.load import automation_map

    d = profile.data
    candidates: set[str] = set()
    if d.withhold_fraction > 0:
        hard = {k for k, v in (automation_map(d.corpus) or {}).items() if v is None}
        lengths = proof_lengths(pairs_frame(pairs))
        candidates = {t for t in hard if lengths.get(t, 0) >= 2}
    families: set[str] = set()
    if d.withhold_families:
        wanted = set(d.withhold_families)
        families = {t.name for t in corpus_theorems(profile) if t.family in wanted}
        if not families:  # another corpus than the one the profile was written for: say so, withhold nothing
            log.warning("data.withhold_families %s: no theorem of %s is in them; nothing is withheld",
                        sorted(wanted), d.corpus)
    return split_theorems((p.theorem for p in pairs), d.seed, d.val_fraction, withhold_from=candidates,
                          withhold_fraction=d.withhold_fraction, withhold=families)


def read_base_split(model_dir: Path) -> TheoremSplit:
    """The split `base_model` saved; an error naming the asset when it is missing (a base of an older run)."""
    from burnqed_core.data.pairs.prepare import read_split

    try:
        return read_split(model_dir / SPLIT_FILE)
    except DataError as e:
        raise DataError(f"{e}: re-materialise base_model (it draws the train/validation split before "
                        "pre-training)") from None


def search_withheld(profile: Profile, model_dir: Path) -> list[str]:
    """The withheld exercises of the base split (``data.withhold_fraction`` or ``data.withhold_families``),
    which the search selection draws first; none when the profile withholds nothing."""
    d = profile.data
    if not (d.withhold_fraction or d.withhold_families):
        return []
    return read_base_split(model_dir).withheld


def leandojo_corpus(spec: str) -> list[Path] | None:
    """The LeanDojo Benchmark 4 files ``data.corpus`` names (train/val, never test), or None."""
    from burnqed_core.data.theorems.external import leandojo_split_files
    from burnqed_core.data.theorems.load import resolve_spec

    if spec.startswith("bundled:"):
        return None
    path = resolve_spec(spec)
    if path.is_dir() and any((path / f"{s}.json").exists() for s in ("train", "val", "test")):
        return [f for f in leandojo_split_files(path) if f.stem != "test"]
    return [path] if path.suffix.lower() == ".json" else None


def base_model_path(out_dir: Path) -> str:
    """What `base_model` produced: the tiny model dir, or the Hugging Face model it names."""
    ref = out_dir / BASE_MODEL_FILE
    if ref.is_file():
        return str(json.loads(ref.read_text(encoding="utf-8"))["model"])
    return str(out_dir)


def benchmark_slug(spec: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_") or "benchmark"


def held_out_families(benchmark: str, also: Sequence[str], search_pool: str | None) -> set[str]:
    """The module families of every library theorem of the eval's sets (``benchmark``, ``also``: the whole
    sets) and, for a ``core:*`` search pool, of the core pool's held-out splits: nothing of them reaches the
    loop's pool searches (their premise index) or pre-training (issue 65)."""
    from burnqed_core.data.theorems.core_pool import module_family
    from burnqed_core.data.theorems.load import load_theorems

    specs = [benchmark, *also]
    if search_pool is not None and search_pool.startswith("core:"):
        specs += ["core:dev", "core:test"]
    return {module_family(t.module) for spec in dict.fromkeys(specs) for t in load_theorems(spec) if t.module}


def training_premises(k: int, premises_dir: Path | None, *, corpus: str, benchmark: str, also: Sequence[str],
                      search_pool: str | None, library: Sequence[Any] = ()) -> Any:
    """The premise lines of a training pair's prompt (`burnqed_core.premises.prompting.PromptPremises`) when the
    model's prompt shows ``k`` > 0 of them, else None: retrieved for each pair's theorem (a corpus or search-pool
    theorem) from the premise index less every held-out module family (nothing of them reaches training);
    ``library``: the premises of the (type -> name) pairs, each shown among others retrieved for its type."""
    if k <= 0:
        return None
    if premises_dir is None:
        raise DataError("training.prompt_premises needs the premise index")
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.premises.library import load_index
    from burnqed_core.premises.prompting import PromptPremises, library_pair_lines

    index = load_index(premises_dir).without_families(held_out_families(benchmark, also, search_pool))
    theorems = {t.name: t for spec in [corpus] + ([search_pool] if search_pool else []) for t in load_theorems(spec)}
    return PromptPremises(index, theorems, k, fixed=library_pair_lines(library, index, k))
