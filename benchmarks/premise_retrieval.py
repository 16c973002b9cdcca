"""Premise retrieval: recall@k on premises that real proofs used, index build time and size, query latency.

Two sources of (goal, premise used) pairs, neither of them an evaluated set:

* the corpus (``bundled:corpus``): each theorem's known proof names the definitions and lemmas it cites
  (``simp [rotate]``, ``rw [Nat.add_comm]``); the query is the theorem's statement as its root goal, the
  premises those of its own preamble and of the library;
* found proofs (``--trajectories DIR ...``, e.g. ``runs/core/iter_*/trajectories``): every positive search step
  whose tactic names a library premise; the query is the state it was applied to, under the theorem's premise
  rule (its module, from ``core:pool``).

A pair counts as recalled at k when the premise is among the k retrieved. The library comes from the premise
cache of the installed Lean (`burnqed_core.premises.library`), a ``premise_index`` stage folder (``--library``),
or scans saved by ``burnqed data core-pool --save-scans`` (``--scans``, rules of the premise library).

    python benchmarks/premise_retrieval.py [--library DIR | --scans FILE] [--trajectories DIR ...] [-k 1 4 8 16]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.local import file_premises
from burnqed_core.premises.records import Premise
from burnqed_core.records import Theorem

_IDENT = re.compile(r"[A-Za-z_][\w'.!?]*")


def load_library(args: argparse.Namespace) -> tuple[list[Premise], dict[str, list[str]]]:
    from burnqed_core.config import default_home
    from burnqed_core.lean.install import lean_identity
    from burnqed_core.premises.library import LIBRARY_RULES, library_key, premises_of, read_library

    if args.scans is not None:
        from burnqed_core.data.theorems.core_pool import read_scans

        scans, graph = read_scans(args.scans)
        premises, _ = premises_of(scans, LIBRARY_RULES)
        return premises, graph
    directory = args.library or default_home() / "premises" / library_key(lean_identity(), LIBRARY_RULES)
    premises, graph, _ = read_library(directory)
    return premises, graph


def cited(tactics: Sequence[str], names: dict[str, str]) -> set[str]:
    """The premises (full names) that ``tactics`` name: a full name, or a short name the ``names`` map resolves."""
    out: set[str] = set()
    for t in tactics:
        for ident in _IDENT.findall(t):
            full = names.get(ident)
            if full is not None:
                out.add(full)
    return out


def recall(pairs: Sequence[tuple[Theorem, str, set[str]]], index: PremiseIndex, ks: Sequence[int]
           ) -> tuple[dict[int, float], dict[int, float], float]:
    """Per k: the share of (goal, premise) pairs recalled, the share of goals with at least one recalled; and the
    median query time (ms)."""
    hit = {k: 0 for k in ks}
    any_hit = {k: 0 for k in ks}
    total = 0
    times = []
    for thm, goal, used in pairs:
        t = time.perf_counter()
        got = [r.premise.name for r in index.retrieve(thm, goal, max(ks))]
        times.append(1000 * (time.perf_counter() - t))
        total += len(used)
        for k in ks:
            top = set(got[:k])
            hit[k] += len(used & top)
            any_hit[k] += bool(used & top)
    n = max(len(pairs), 1)
    return ({k: hit[k] / max(total, 1) for k in ks}, {k: any_hit[k] / n for k in ks},
            statistics.median(times) if times else 0.0)


def corpus_pairs(library_names: set[str]) -> list[tuple[Theorem, str, set[str]]]:
    out = []
    for thm in load_theorems("bundled:corpus"):
        if not thm.proof:
            continue
        names = {n: n for n in library_names}
        for p in file_premises(thm.preamble):
            names[p.name] = p.name
            names.setdefault(p.name.rsplit(".", 1)[-1], p.name)
        used = cited(thm.proof, names)
        if used:
            out.append((thm, "⊢ " + " ".join(thm.statement.split()), used))
    return out


def trajectory_pairs(dirs: Sequence[Path], library_names: set[str]) -> list[tuple[Theorem, str, set[str]]]:
    from burnqed_core.data.pairs.mixing import positive_steps
    from burnqed_core.trajectory_io import read_trajectories

    pool = {t.name: t for t in load_theorems("core:pool")}
    out = []
    names = {n: n for n in library_names}
    for d in dirs:
        for traj in sorted(Path(d).glob("*.traj")) or [Path(d)]:
            for step in positive_steps(read_trajectories(traj)):
                thm = pool.get(step.theorem)
                used = cited([step.tactic], names) - {step.theorem}
                if thm is not None and used:
                    out.append((thm, step.state_before, used))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, help="a premise_index stage folder (default: the cache)")
    ap.add_argument("--scans", type=Path, help="scans saved by `burnqed data core-pool --save-scans`")
    ap.add_argument("--trajectories", type=Path, nargs="*", default=[], help="trajectory folders of pool searches")
    ap.add_argument("-k", type=int, nargs="+", default=[1, 4, 8, 16])
    args = ap.parse_args(argv)
    t = time.perf_counter()
    premises, graph = load_library(args)
    load_s = time.perf_counter() - t
    index = PremiseIndex(premises, graph)
    print(f"library: {len(premises):,} premises, {len(graph)} modules; read in {load_s:.1f} s, BM25 index built in "
          f"{index.build_s:.1f} s")
    names = {p.name for p in premises}
    ks = sorted(args.k)
    corpus = corpus_pairs(names)
    of_library = [(t, g, u & names) for t, g, u in corpus if u & names]
    of_file = [(t, g, u - names) for t, g, u in corpus if u - names]
    for label, pairs in (("corpus, the file's own premises its proof cites", of_file),
                         ("corpus, the library premises its proof cites", of_library),
                         ("found pool proofs (state, premise the step names)", trajectory_pairs(args.trajectories,
                                                                                                names))):
        if not pairs:
            print(f"{label}: no pairs")
            continue
        r, a, ms = recall(pairs, index, ks)
        used = sum(len(u) for _, _, u in pairs)
        print(f"{label}: {len(pairs)} goals, {used} premises used; median query {ms:.2f} ms")
        print("  recall@k (premises): " + ", ".join(f"@{k} {100 * r[k]:.1f}%" for k in ks))
        print("  goals with one recalled: " + ", ".join(f"@{k} {100 * a[k]:.1f}%" for k in ks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
