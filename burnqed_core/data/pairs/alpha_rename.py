"""Alpha-renamed copies of tactic pairs: the same step with the goal's local names changed.

A proof step such as ``induction xs`` only makes sense for the goal it was taken in: the policy has to read
the variable's name from the hypotheses (``xs : List Nat``) and copy it. With few training pairs a tiny model
memorises the names it saw instead. Renaming the hypotheses of a pair consistently in its state before, its
tactic and its state after gives another valid example of the same step (alpha-equivalence: a local name
has no meaning outside its goal), so extra copies teach the model to copy names from the goal.

Only names bound by the goal's hypothesis lines (``x y : T`` before the turnstile) are renamed, as whole
identifiers (not after a ``.``, not inside a longer name); inaccessible names (``a✝``) and names that are not
plain identifiers are left alone. The copies are deterministic in (seed, theorem, copy index). They are meant
for the training side only: the validation pairs stay as Lean printed them.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence

import polars as pl

_IDENT = re.compile(r"^[^\W\d][\w'!?]*$")
_HYP_LINE = re.compile(r"^(?P<names>[^\s:⊢][^:⊢]*?) : ")
# name pools: the shapes of local names in Lean goals (letters, greek, primes, subscripts, plural list names)
_POOL = (
    [chr(c) for c in range(ord("a"), ord("z") + 1)]
    + ["α", "β", "σ", "τ", "φ", "ψ", "ω"]
    + [f"{c}{s}" for c in "abcdklmnpqrstuvwxyz" for s in ("'", "₁", "₂", "0", "1", "2", "s")]
    + ["acc", "lst", "rest", "hd", "tl", "val", "cnt", "idx", "lo", "hi", "hh", "hk", "hx", "hy", "ih"]
)


def hypothesis_names(state: str) -> list[str]:
    """The local names bound by the hypothesis lines of a goal state (in order of first appearance)."""
    names: list[str] = []
    for line in state.splitlines():
        if line.startswith(("⊢", "case ", " ")) or not line:
            continue
        m = _HYP_LINE.match(line)
        if m is None:
            continue
        for name in m.group("names").split():
            if _IDENT.match(name) and "✝" not in name and name not in names:
                names.append(name)
    return names


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'!?.✝]){re.escape(name)}(?![\w'!?✝])")


def rename(texts: Sequence[str], mapping: dict[str, str]) -> list[str]:
    """Replace every whole-identifier occurrence of the mapping's keys in each text, simultaneously."""
    if not mapping:
        return list(texts)
    alt = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    pat = re.compile(rf"(?<![\w'!?.✝])(?:{alt})(?![\w'!?✝])")
    return [pat.sub(lambda m: mapping[m.group(0)], t) for t in texts]


def _rng(seed: int, theorem: str, state: str, copy: int) -> random.Random:
    h = hashlib.sha256(f"{seed}\0{theorem}\0{state}\0{copy}".encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def renamed_copy(state_before: str, tactic: str, state_after: str, rng: random.Random) -> tuple[str, str, str] | None:
    """One alpha-renamed copy of a pair, or None when its goal binds no renameable name."""
    names = hypothesis_names(state_before)
    if not names:
        return None
    texts = (state_before, tactic, state_after)
    taken = {n for n in _POOL if any(_pattern(n).search(t) for t in texts)}
    free = [n for n in _POOL if n not in taken]
    rng.shuffle(free)
    mapping = {old: new for old, new in zip(names, free, strict=False) if old != new}
    if not mapping:
        return None
    sb, tac, sa = rename(texts, mapping)
    return sb, tac, sa


def augment_frame(df: pl.DataFrame, copies: int, seed: int, source_tag: str = "alpha") -> pl.DataFrame:
    """``df`` (TacticPair columns) followed by up to ``copies`` alpha-renamed copies of each row; a copy's
    ``source`` gets ``+alpha`` appended, so the mix and its stats can tell them apart."""
    if copies <= 0 or df.height == 0:
        return df
    rows: list[dict[str, object]] = []
    for r in df.iter_rows(named=True):
        seen = {(r["state_before"], r["tactic"])}
        for k in range(copies):
            c = renamed_copy(r["state_before"], r["tactic"], r["state_after"] or "",
                             _rng(seed, r["theorem"], r["state_before"], k))
            if c is None or (c[0], c[1]) in seen:
                continue
            seen.add((c[0], c[1]))
            rows.append(r | {"state_before": c[0], "tactic": c[1], "state_after": c[2],
                             "source": f"{r.get('source') or ''}+{source_tag}"})
    if not rows:
        return df
    return pl.concat([df, pl.DataFrame(rows, schema=df.schema)], how="vertical")
