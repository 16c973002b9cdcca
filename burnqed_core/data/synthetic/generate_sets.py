"""Generate the bundled theorem sets (``sets/corpus.jsonl``, ``sets/benchmark.jsonl``).

Run ``python -m burnqed_core.data.synthetic.generate_sets`` to rewrite both files, or
with ``--check`` to exit non-zero when the files on disk differ from what the
generator makes (CI keeps them in sync). Output is a pure function of the seed:
every family draws from its own ``random.Random`` seeded by ``(seed, family
name)``, and records are sorted by name, so neither family order nor set
iteration order can change a byte. Both modes print the number of theorems per
family, the proof-length distribution of each set, the benchmark theorems
dropped as corpus twins and the dev/test split.

Two steps follow the families:

* **twins of the hand-written benchmark leave the corpus**: the hand-written
  theorems (``bundled:handwritten``) are frozen, so a corpus theorem that is
  a twin or a strong near-twin of one of them
  (`burnqed_core.data.twins.near_twins.find_near_twins` without the partial
  relations: the same canonical statement, the same skeleton of a known proof
  of two steps or more, or the same near-twin form) is dropped from the
  corpus instead (a mechanical filter: no family is written or chosen by
  looking at them).
* **corpus twins leave the benchmark**: every benchmark theorem that is a
  twin or a strong near-twin of a corpus theorem (the same rule) is dropped;
  it goes nowhere else (it is a corpus theorem under other names).
* **dev and test by template cluster** (`assign_splits`): the remaining
  benchmark theorems are grouped by `burnqed_core.data.twins.clusters.clusters`
  (template instances, twins and strong near-twins inside the benchmark
  together, so a twin pair never sits in both splits). A split, once drawn,
  is kept: a cluster holding a theorem that was in ``dev`` on 2026-11-26
  (`FIRST_DEV`: read for diagnosis since) is ``dev``, else one holding a
  theorem that was in ``test`` then (`FIRST_TEST`) is ``test``; so a theorem
  never moves from ``dev`` to ``test``. The other clusters (of theorems
  added since) are placed per family: each cluster belongs to the family of
  its members (the smallest family name if they had several); within each
  family, its ``n`` new clusters are ordered by ``sha256(f"{seed}:{cluster}")``
  (hex digest) and the first ``round(0.4 * n)`` go to ``dev``, the rest to
  ``test``; a family with one cluster goes to ``test``, one with ``n >= 2``
  has at least one cluster in each. Every theorem takes its cluster's split.
  The rule reads only names, statements, proofs and the seed, never a search
  or eval result.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from burnqed_core.data.synthetic.catalogue import ALL_FAMILIES
from burnqed_core.data.synthetic.families import Family, SetName
from burnqed_core.data.synthetic.renaming import rename_instance
from burnqed_core.data.twins.clusters import clusters
from burnqed_core.data.twins.near_twins import NearTwin, find_near_twins, forms_of
from burnqed_core.errors import DataError
from burnqed_core.records import Split, Theorem

logger = logging.getLogger(__name__)

SEED = 20261122
SOURCE = "burnqed-generated"
SETS_DIR = Path(__file__).resolve().parents[1] / "sets"
FILE_NAMES: Mapping[SetName, str] = MappingProxyType({"train": "corpus.jsonl", "benchmark": "benchmark.jsonl"})
DEV_FRACTION = 0.4
HANDWRITTEN = "bundled:handwritten"
# The split of 2026-11-26 (issue 45), kept: dev theorems were read for diagnosis, so none may move to test.
FIRST_DEV = frozenset({
    "barith_s1_1", "barith_s1_10", "barith_s1_4", "barith_s1_7", "bexp_beval_dropNegNeg", "bexp_depth_mirrorB",
    "blist_s1_1", "blist_s1_6", "blist_s2_2", "blist_s2_7", "blogic_s0", "blogic_s1", "blogic_s5", "fork_weight_swap",
    "suit_rank_lt", "suit_red_2", "suit_red_3", "suit_red_turn", "suit_turn_rank", "weave_weave_length",
    "weave_weave_nil", "weave_weave_sum"})
FIRST_TEST = frozenset({
    "barith_s0_0", "barith_s0_3", "barith_s0_6", "barith_s2_11", "barith_s2_2", "barith_s2_5", "barith_s2_8",
    "bexp_beval_mirrorB", "bexp_mirrorB_mirrorB", "bexp_neg_tower_2", "bexp_neg_tower_4", "bexp_neg_tower_6",
    "bexp_neg_tower_8", "blist_s0_0", "blist_s0_5", "blist_s4_4", "blist_s4_9", "blogic_s2", "blogic_s3", "blogic_s4",
    "blogic_s6", "blogic_s7", "fork_tips_swap", "suit_rank_inj", "suit_turn4", "two_even_0_5_4", "two_even_0_5_6",
    "two_even_2_2_5", "two_even_5_2_2", "two_even_5_2_5", "two_odd_0_0_5", "two_odd_1_1_2", "two_odd_3_5_3",
    "two_odd_3_5_6", "two_odd_5_4_1", "weave_dup_length", "weave_dup_map_5", "weave_dup_map_6", "weave_dup_map_9",
    "weave_dup_sum", "weave_evens_dup", "wlst_len_sum_0", "wlst_len_sum_1", "wlst_len_sum_2", "wlst_len_sum_3",
    "wlst_len_sum_4", "wlst_len_sum_5", "wlst_len_sum_6", "wlst_len_sum_7"})


def family_theorems(family: Family, seed: int = SEED, rename: bool = True) -> list[Theorem]:
    """The theorems of one family, named ``<family>_<key>`` (the template's key:
    stable across seeds' renamings), each with its own names unless ``rename`` is off."""
    rng = random.Random(f"{seed}:{family.name}")
    out = []
    seen: set[str] = set()
    for inst in family.generate(rng):
        if rename:
            inst, _ = rename_instance(inst, family.name, family.split, seed)
            if inst.statement in seen:  # two preambles of a family renamed alike can give one statement
                logger.info("%s_%s dropped: its renamed statement repeats an earlier one of the family",
                            family.name, inst.key)
                continue
            seen.add(inst.statement)
        out.append(Theorem(name=f"{family.name}_{inst.key}", statement=inst.statement, preamble=inst.preamble,
                           split=family.split, source=SOURCE, family=family.name, proof=list(inst.proof)))
    return out


class Generated(NamedTuple):
    """Both sets (``benchmark`` with its twins dropped and dev/test assigned) and the dropped twins."""

    sets: dict[SetName, list[Theorem]]
    dropped: list[NearTwin]  # every (benchmark theorem, its corpus twin or strong near-twin) pair of the dropped
    dropped_corpus: tuple[NearTwin, ...] = ()  # (corpus theorem dropped, the hand-written theorem it mirrors) pairs


def _family_sets(seed: int, rename: bool) -> dict[SetName, list[Theorem]]:
    sets: dict[SetName, list[Theorem]] = {"train": [], "benchmark": []}
    for family in ALL_FAMILIES:
        sets[family.split].extend(family_theorems(family, seed, rename))
    names = Counter(t.name for ts in sets.values() for t in ts)
    # with fixed names a family's preambles share their names: a statement repeats over another preamble
    statements = Counter(t.statement if rename else (t.preamble, t.statement) for ts in sets.values() for t in ts)
    dup_names = sorted(n for n, c in names.items() if c > 1)
    dup_statements = sorted(str(s) for s, c in statements.items() if c > 1)
    if dup_names or dup_statements:
        raise DataError(f"duplicate theorem names {dup_names[:5]} or statements {dup_statements[:5]}")
    return {split: sorted(ts, key=lambda t: t.name) for split, ts in sets.items()}


def _rank(seed: int, cluster: str) -> str:
    return hashlib.sha256(f"{seed}:{cluster}".encode()).hexdigest()


def dev_count(n: int) -> int:
    """How many of a family's ``n`` clusters go to dev: ``round(0.4 * n)``, 0 for one cluster, else at least
    one and at most ``n - 1``."""
    if n <= 1:
        return 0
    return min(max(round(DEV_FRACTION * n), 1), n - 1)


def assign_splits(benchmark: Sequence[Theorem], seed: int = SEED, *, first_dev: frozenset[str] = FIRST_DEV,
                  first_test: frozenset[str] = FIRST_TEST) -> dict[str, Split]:
    """Theorem name -> ``"dev"`` or ``"test"`` by template cluster (the rule of the module docstring): a cluster
    with a theorem of ``first_dev`` is dev, else one with a theorem of ``first_test`` is test, the others by the
    hash rule per family."""
    cluster = clusters(benchmark)
    split_of: dict[str, Split] = {}
    for t in sorted(benchmark, key=lambda t: t.name not in first_dev):
        c = cluster[t.name]
        if t.name in first_dev:
            split_of[c] = "dev"
        elif t.name in first_test:
            split_of.setdefault(c, "test")
    family: dict[str, str] = {}
    for t in benchmark:
        c = cluster[t.name]
        if c not in split_of:
            family[c] = min(family.get(c, t.family), t.family)
    by_family: dict[str, list[str]] = {}
    for c, f in family.items():
        by_family.setdefault(f, []).append(c)
    for cs in by_family.values():
        ordered = sorted(cs, key=lambda c: (_rank(seed, c), c))
        k = dev_count(len(ordered))
        split_of |= {c: "dev" if i < k else "test" for i, c in enumerate(ordered)}
    return {t.name: split_of[cluster[t.name]] for t in benchmark}


def build(seed: int = SEED, rename: bool = True) -> Generated:
    """Both sets, each sorted by theorem name, the benchmark without corpus twins and split into dev/test;
    raises `DataError` on duplicates."""
    sets = _family_sets(seed, rename)
    train_forms = forms_of(sets["train"])  # each corpus theorem's forms computed once, for both steps
    frozen = find_near_twins(handwritten(), train_forms, partial=False)
    leaving = {tw.theorem for tw in frozen}
    for tw in frozen:
        logger.info("corpus theorem %s dropped: %s of hand-written %s", tw.theorem, tw.how, tw.other)
    sets["train"] = [t for t in sets["train"] if t.name not in leaving]
    twins = find_near_twins([f for f in train_forms if f.theorem.name not in leaving], sets["benchmark"],
                            partial=False)
    twin_names = {tw.theorem for tw in twins}
    for name in sorted(twin_names):
        logger.info("benchmark theorem %s dropped: twin of corpus %s", name,
                    ", ".join(f"{tw.other} ({tw.how})" for tw in twins if tw.theorem == name))
    kept = [t for t in sets["benchmark"] if t.name not in twin_names]
    split_of = assign_splits(kept, seed)
    sets["benchmark"] = [t.model_copy(update={"split": split_of[t.name]}) for t in kept]
    return Generated(sets, twins, tuple(frozen))


def handwritten() -> list[Theorem]:
    """The hand-written benchmark (`HANDWRITTEN`), frozen: a corpus theorem that is its twin leaves the corpus."""
    from burnqed_core.data.theorems.load import load_theorems

    return load_theorems(HANDWRITTEN)


def generate(seed: int = SEED, rename: bool = True) -> dict[SetName, list[Theorem]]:
    """Both sets, each sorted by theorem name (see `build`); raises `DataError` on duplicates.
    ``rename=False`` keeps the families' fixed names (for comparing the two)."""
    return build(seed, rename).sets


def render(theorems: Sequence[Theorem]) -> str:
    """The JSONL text of a set: one record per line, UTF-8, ``\\n`` endings."""
    return "".join(t.model_dump_json() + "\n" for t in theorems)


def hard_families() -> set[str]:
    """Names of the families the generator claims to be automation-resistant."""
    return {f.name for f in ALL_FAMILIES if f.hard}


def summary(sets: dict[SetName, list[Theorem]], dropped: Sequence[NearTwin] = (),
            dropped_corpus: Sequence[NearTwin] = ()) -> str:
    """Counts per family, hard fraction and proof-length distribution per set; the benchmark's dev/test
    counts (theorems and clusters per family) and the theorems dropped as corpus twins."""
    hard = hard_families()
    lines = []
    for split, ts in sets.items():
        lines += _set_lines(FILE_NAMES[split], ts, hard)
    bench = sets.get("benchmark", [])
    if bench:
        lines += _split_lines(bench)
    if dropped:
        lines += _dropped_benchmark_lines(dropped)
    if dropped_corpus:
        lines += _dropped_corpus_lines(dropped_corpus)
    return "\n".join(lines)


def _set_lines(file_name: str, ts: Sequence[Theorem], hard: set[str]) -> list[str]:
    """`summary`'s lines on one set: its theorems and the share in ``hard`` families, a line per family, the
    proof-length distribution."""
    fams = Counter(t.family for t in ts)
    n_hard = sum(1 for t in ts if t.family in hard)
    lines = [f"{file_name}: {len(ts)} theorems, {n_hard} in hard families ({n_hard / max(len(ts), 1):.0%})"]
    for fam, n in sorted(fams.items()):
        lines.append(f"  {fam:8s} {n:4d}{'  hard' if fam in hard else ''}")
    lengths = Counter(len(t.proof) for t in ts)
    dist = ", ".join(f"{k}: {lengths[k]}" for k in sorted(lengths))
    lines.append(f"  proof length (steps: theorems) {dist}")
    return lines


def _split_lines(bench: Sequence[Theorem]) -> list[str]:
    """`summary`'s lines on the benchmark's dev and test splits: theorems / clusters, in all and per family."""
    cluster = clusters(bench)
    lines = ["benchmark splits (theorems / clusters):"]
    for split in ("dev", "test"):
        ts = [t for t in bench if t.split == split]
        per_fam = Counter(t.family for t in ts)
        fam_clusters = {f: len({cluster[t.name] for t in ts if t.family == f}) for f in per_fam}
        lines.append(f"  {split}: {len(ts)} / {len({cluster[t.name] for t in ts})}  "
                     + ", ".join(f"{f} {per_fam[f]}/{fam_clusters[f]}" for f in sorted(per_fam)))
    return lines


def _twins_by_theorem(twins: Sequence[NearTwin]) -> dict[str, list[str]]:
    """Theorem -> ``"<other> (<how>)"`` of each of its ``twins``, in their order."""
    out: dict[str, list[str]] = {}
    for tw in twins:
        out.setdefault(tw.theorem, []).append(f"{tw.other} ({tw.how})")
    return out


def _dropped_benchmark_lines(dropped: Sequence[NearTwin]) -> list[str]:
    """`summary`'s lines on the benchmark theorems dropped as corpus twins: each with its first four twins."""
    by_bench = _twins_by_theorem(dropped)
    lines = [f"dropped from the benchmark as corpus twins or strong near-twins: {len(by_bench)}"]
    lines += [f"  {b}: {', '.join(cs[:4])}{f' (+{len(cs) - 4} more)' if len(cs) > 4 else ''}"
              for b, cs in sorted(by_bench.items())]
    return lines


def _dropped_corpus_lines(dropped_corpus: Sequence[NearTwin]) -> list[str]:
    """`summary`'s lines on the corpus theorems dropped as twins of hand-written theorems."""
    by_corpus = _twins_by_theorem(dropped_corpus)
    lines = [f"dropped from the corpus as twins or strong near-twins of hand-written theorems: {len(by_corpus)}"]
    lines += [f"  {c}: {', '.join(hs)}" for c, hs in sorted(by_corpus.items())]
    return lines


def write_sets(out_dir: Path = SETS_DIR, seed: int = SEED, rename: bool = True) -> dict[SetName, list[Theorem]]:
    """Generate and write both files into ``out_dir``; returns the sets."""
    return _write(generate(seed, rename), out_dir)


def _write(sets: dict[SetName, list[Theorem]], out_dir: Path) -> dict[SetName, list[Theorem]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, ts in sets.items():
        path = out_dir / FILE_NAMES[split]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(render(ts).encode("utf-8"))
        tmp.replace(path)
        logger.info("wrote %d theorems to %s", len(ts), path)
    return sets


def stale_files(out_dir: Path = SETS_DIR, seed: int = SEED, rename: bool = True,
                sets: dict[SetName, list[Theorem]] | None = None) -> list[Path]:
    """The set files in ``out_dir`` that are missing or differ from the generator's output (``sets``: that
    output when already generated)."""
    sets = generate(seed, rename) if sets is None else sets
    stale = []
    for split, ts in sets.items():
        path = out_dir / FILE_NAMES[split]
        if not path.exists() or path.read_bytes() != render(ts).encode("utf-8"):
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files differ from the generator's output")
    parser.add_argument("--out", type=Path, default=SETS_DIR, help="directory of the set files")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-rename", dest="rename", action="store_false",
                        help="keep each family's fixed definition and variable names (not the bundled sets)")
    args = parser.parse_args(argv)
    gen = build(args.seed, args.rename)
    if args.check:
        stale = stale_files(args.out, args.seed, args.rename, sets=gen.sets)
        print(summary(gen.sets, gen.dropped, gen.dropped_corpus))
        if stale:
            print("out of date: " + ", ".join(str(p) for p in stale)
                  + " (run python -m burnqed_core.data.synthetic.generate_sets)", file=sys.stderr)
            return 1
        print("theorem sets are up to date")
        return 0
    print(summary(_write(gen.sets, args.out), gen.dropped, gen.dropped_corpus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
