"""Generate the bundled theorem sets (``sets/corpus.jsonl``, ``sets/benchmark.jsonl``).

Run ``python -m burnqed_core.data.generate_sets`` to rewrite both files, or
with ``--check`` to exit non-zero when the files on disk differ from what the
generator makes (CI keeps them in sync). Output is a pure function of the seed:
every family draws from its own ``random.Random`` seeded by ``(seed, family
name)``, and records are sorted by name, so neither family order nor set
iteration order can change a byte. Both modes print the number of theorems per
family and the proof-length distribution of each set.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.data.families import FAMILIES, Family, SetName
from burnqed_core.data.renaming import rename_instance
from burnqed_core.errors import DataError
from burnqed_core.records import Theorem

logger = logging.getLogger(__name__)

SEED = 20261122
SOURCE = "burnqed-generated"
SETS_DIR = Path(__file__).resolve().parent / "sets"
FILE_NAMES: dict[SetName, str] = {"train": "corpus.jsonl", "benchmark": "benchmark.jsonl"}


def family_theorems(family: Family, seed: int = SEED, rename: bool = True) -> list[Theorem]:
    """The theorems of one family, named ``<family>_<key>`` (the template's key:
    stable across seeds' renamings), each with its own names unless ``rename`` is off."""
    rng = random.Random(f"{seed}:{family.name}")
    out = []
    for inst in family.generate(rng):
        if rename:
            inst, _ = rename_instance(inst, family.name, family.split, seed)
        out.append(Theorem(name=f"{family.name}_{inst.key}", statement=inst.statement, preamble=inst.preamble,
                           split=family.split, source=SOURCE, family=family.name, proof=list(inst.proof)))
    return out


def generate(seed: int = SEED, rename: bool = True) -> dict[SetName, list[Theorem]]:
    """Both sets, each sorted by theorem name; raises `DataError` on duplicates.
    ``rename=False`` keeps the families' fixed names (for comparing the two)."""
    sets: dict[SetName, list[Theorem]] = {"train": [], "benchmark": []}
    for family in FAMILIES:
        sets[family.split].extend(family_theorems(family, seed, rename))
    names = Counter(t.name for ts in sets.values() for t in ts)
    statements = Counter(t.statement for ts in sets.values() for t in ts)
    dup_names = sorted(n for n, c in names.items() if c > 1)
    dup_statements = sorted(s for s, c in statements.items() if c > 1)
    if dup_names or dup_statements:
        raise DataError(f"duplicate theorem names {dup_names[:5]} or statements {dup_statements[:5]}")
    return {split: sorted(ts, key=lambda t: t.name) for split, ts in sets.items()}


def render(theorems: Sequence[Theorem]) -> str:
    """The JSONL text of a set: one record per line, UTF-8, ``\\n`` endings."""
    return "".join(t.model_dump_json() + "\n" for t in theorems)


def hard_families() -> set[str]:
    """Names of the families the generator claims to be automation-resistant."""
    return {f.name for f in FAMILIES if f.hard}


def summary(sets: dict[SetName, list[Theorem]]) -> str:
    """Counts per family, hard fraction and proof-length distribution per set."""
    hard = hard_families()
    lines = []
    for split, ts in sets.items():
        fams = Counter(t.family for t in ts)
        n_hard = sum(1 for t in ts if t.family in hard)
        lines.append(f"{FILE_NAMES[split]}: {len(ts)} theorems, {n_hard} in hard families "
                     f"({n_hard / max(len(ts), 1):.0%})")
        for fam, n in sorted(fams.items()):
            lines.append(f"  {fam:8s} {n:4d}{'  hard' if fam in hard else ''}")
        lengths = Counter(len(t.proof) for t in ts)
        dist = ", ".join(f"{k}: {lengths[k]}" for k in sorted(lengths))
        lines.append(f"  proof length (steps: theorems) {dist}")
    return "\n".join(lines)


def write_sets(out_dir: Path = SETS_DIR, seed: int = SEED, rename: bool = True) -> dict[SetName, list[Theorem]]:
    """Generate and write both files into ``out_dir``; returns the sets."""
    sets = generate(seed, rename)
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, ts in sets.items():
        path = out_dir / FILE_NAMES[split]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(render(ts).encode("utf-8"))
        tmp.replace(path)
        logger.info("wrote %d theorems to %s", len(ts), path)
    return sets


def stale_files(out_dir: Path = SETS_DIR, seed: int = SEED, rename: bool = True) -> list[Path]:
    """The set files in ``out_dir`` that are missing or differ from the generator's output."""
    sets = generate(seed, rename)
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
    if args.check:
        stale = stale_files(args.out, args.seed, args.rename)
        print(summary(generate(args.seed, args.rename)))
        if stale:
            print("out of date: " + ", ".join(str(p) for p in stale)
                  + " (run python -m burnqed_core.data.generate_sets)", file=sys.stderr)
            return 1
        print("theorem sets are up to date")
        return 0
    sets = write_sets(args.out, args.seed, args.rename)
    print(summary(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
