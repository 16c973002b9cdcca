"""Lean's own library as the theorem pool of expert iteration, split by module family.

The theorems are read from the installed library by the worker's trusted header (`burnqed_core.lean.library`):
every theorem of the ``Init`` and ``Std`` modules the worker imports, less

* meta-level and tactic-internal modules and names (`PoolRules.exclude_modules`, `PoolRules.exclude_names`:
  ``Init.Grind``, ``Init.Omega``, the ``Lean.*`` namespaces of tactic lemmas, ``Std.Tactic`` ...), and every
  name or module with an ``Internal`` component (``Std.DTreeMap.Internal.Impl...``: implementation details),
* internal, private, numbered and auxiliary names (the header drops ``_``-components, private and numbered
  names; `generated_name` drops what Lean generates: equation lemmas, ``injEq``, ``sizeOf_spec``, functional
  induction principles),
* instances, statements over `PoolRules.max_size` nodes,
* the library's true axioms,
* theorems whose type does not live in the module's imports: every constant of the type must come from a
  module its module (transitively) imports, never the module itself (the premise rule's environment, see
  `Theorem.module`, so the statement reads the same in that environment).

**Families and splits.** A theorem's family is its module's family (`module_family`: ``Init.Data.List.Lemmas``
-> ``Init.Data.List``). Whole families are held out before any result is read, by a seeded rule
(`SplitRules`, `choose_held_out`): among the families of `SplitRules.min_family` to `SplitRules.max_family`
theorems, in the order of ``sha256(f"{seed}:{family}")``, the first ones go to ``test`` until it holds
`SplitRules.test_theorems` theorems from at least `SplitRules.test_families` families in at least
`SplitRules.test_clusters` clusters, the next ones to ``dev`` likewise; every other family is ``pool``.

**Near-twins.** The library states many lemmas several times (``List.map_append``, ``Array.map_append``,
``Vector.map_append``; ``Nat.add_comm``, ``Int.add_comm``; ``ite_id`` and ``ite_self``). Two rules find them,
and a theorem is a near-twin of another when either says so:

* the **Lean key** (`near_twin_key`): the type's skeleton (binder names, universes and namespaces erased,
  instances and inductive types abstracted: computed by Lean, see ``library.lean``). It sees through namespaces
  and elaborated types (``List.map_append`` ~ ``Array.map_append``), which the text does not show;
* the **eval's near-twin check** (`burnqed_core.data.twins.near_twins`, what hygiene refuses: twins and strong
  near-twins, ``STRONG``), read on the statement as Lean prints it (`eval_theorem`: ``: <printed type>``). It
  sees through binder style and order, instance binders named or not, and library variants whose printed text
  is one (``Std.DHashMap.Const.values_empty`` and ``Std.HashMap.values_empty``: ``∅.values = []``), which the
  Lean key keeps apart.

Both are kept because neither contains the other, and the eval is the authority on what it calls a near-twin:
a held-out theorem the eval would refuse as a twin of a training theorem must not be held out beside it.
`keep_twins_apart` groups the theorems by both rules, closed transitively (union-find); a group keeps to the
side of its most held-out member (``test``, then ``dev``, then ``pool``): every other member is dropped and
counted in `PoolBuild.excluded` (``twin of a test theorem`` when the Lean key alone links it there, ``near-twin
of a test theorem (eval check)`` when the eval's check is needed). Within a split, each module is a cluster and
near-twins by either rule merge their modules' clusters (named by the smallest module); the seeded split rule
counts clusters the same way.

Known limits of the eval's check on printed types: the printed text hides what elaboration fixed, so two
statements whose text is one but whose hidden parts differ are near-twins by the check (``↑(OfNat.ofNat n)``
cast to ``Int`` or to ``Rat``; ``0 <<< n = 0`` over ``Nat`` or ``Int``; a proof printed ``⋯``): the check errs
towards dropping a pool theorem, never towards leaving a twin on both sides. A lowercase library function that
`burnqed_core.data.twins.canonical.LIBRARY_NAMES` does not list is read as a variable (the same direction). A printed
type that does not read back as Lean text is still compared as text. The check's own limits (`near_twins`
module doc: ``¬ P`` and ``P → False`` differ ...) hold here too; there it misses a twin, the Lean key may not.

The bundled files (``burnqed_core/data/sets/core/{pool,dev,test}.jsonl``, `CORE_DIR`) are written by
``burnqed data core-pool --out burnqed_core/data/sets/core`` and read by the theorem-set specs ``core:pool``,
``core:dev`` and ``core:test`` (`burnqed_core.data.theorems.load`); each line is a `PoolTheorem`. `resplit`
(``--resplit DIR``) applies the near-twin rules again to written sets without Lean or scans; it sees only the
written rows, so it misses a chain through a theorem the Lean key dropped earlier (``--scans`` sees those).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from burnqed_core.data.twins.union_find import UnionFind
from burnqed_core.errors import DataError
from burnqed_core.lean.library import (
    LibraryConstant,
    ModuleScan,
    SourceChecker,
    module_graph,
    scan_modules,
    type_statement,
)
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Split, Theorem

if TYPE_CHECKING:
    from burnqed_core.data.twins.near_twins import Forms

CORE_PREFIX = "core:"
CORE_DIR = Path(__file__).resolve().parents[1] / "sets" / "core"
SPLITS: tuple[str, ...] = ("pool", "dev", "test")
SOURCE = "lean-library"
PoolSplit = Literal["pool", "dev", "test"]
# the split of `Theorem` a pool theorem gets: the pool is searched and trained on, dev and test are held out
THEOREM_SPLIT: Mapping[str, Split] = MappingProxyType({"pool": "train", "dev": "dev", "test": "test"})

# What Lean generates for a declaration (not stated by the library's authors): equation lemmas, unfolding
# lemmas, constructor injectivity, `sizeOf` specs, functional induction and case principles.
_GENERATED = re.compile(r"^(eq_\d+|eq_def|eq_unfold|injEq|inj|sizeOf_spec|induct|induct_unfolding|mutual_induct"
                        r"|fun_cases|fun_cases_unfolding|ext_iff|match_\d+|proof_\d+|congr_simp)$")


class PoolRules(BaseModel):
    """Which library theorems enter the pool (fixed before any result is read; see the module doc)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    roots: list[str] = Field(default_factory=lambda: ["Init", "Std"], description="module roots scanned")
    exclude_modules: list[str] = Field(
        default_factory=lambda: ["Init.Grind", "Init.Omega", "Init.Meta", "Init.Tactics", "Init.Conv",
                                 "Init.Simproc", "Init.Internal", "Init.Try", "Init.MacroTrace",
                                 "Std.Tactic", "Std.Sat", "Std.Internal", "Std.Do"],
        description="module prefixes left out: meta-level and tactic-internal modules")
    exclude_names: list[str] = Field(
        default_factory=lambda: ["Lean", "Std.Tactic", "Std.Sat", "Std.Internal", "Std.Do"],
        description="name prefixes left out (namespaces of tactic-internal lemmas: Lean.Grind, Lean.Omega ...)")
    max_size: int = Field(64, ge=1, description="largest type kept, in nodes (a shared subterm counted at each "
                          "occurrence): a goal a small policy can read in its prompt with room for what intro "
                          "adds (64: about the median of the library's statements up to 400 nodes; "
                          "printed in 53 characters at the median, 124 at the 95th percentile)")


class SplitRules(BaseModel):
    """How whole families are held out (seeded; fixed before any result is read)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seed: int = 0
    min_family: int = Field(10, ge=1, description="families smaller than this are never held out")
    max_family: int = Field(400, ge=1, description="families larger than this are never held out (the pool keeps "
                            "the big ones: List, Array, Nat, Int, BitVec ...)")
    test_theorems: int = Field(300, ge=1)
    test_families: int = Field(5, ge=1)
    test_clusters: int = Field(10, ge=1, description="the eval's clusters (modules, near-twins' merged): a split "
                               "decides only with at least 10")
    dev_theorems: int = Field(150, ge=1)
    dev_families: int = Field(5, ge=1)
    dev_clusters: int = Field(10, ge=1)


class PoolTheorem(BaseModel):
    """One line of ``pool.jsonl``/``dev.jsonl``/``test.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    module: str
    family: str = Field("", description="its module's family (`module_family`; filled in when a file omits it)")
    split: PoolSplit
    cluster: str = Field(description="its module, near-twins' modules merged (the eval's cluster)")
    type: str = Field(description="the type as Lean prints it (display only: the goal is posed by its stored type)")
    size: int = 0
    universes: int = 0
    twin: str = Field("", description="near-twin key (`near_twin_key`), as a short digest")

    @model_validator(mode="after")
    def _family(self) -> PoolTheorem:
        if not self.family:
            object.__setattr__(self, "family", module_family(self.module))
        return self

    def theorem(self) -> Theorem:
        """As a `Theorem`: posed by its stored type (`burnqed_core.lean.library.type_statement`), with its module
        for the premise rule."""
        return Theorem(name=self.name, statement=type_statement(self.module, self.name),
                       split=THEOREM_SPLIT[self.split], source=SOURCE, family=self.family, module=self.module,
                       cluster=self.cluster)


class FamilyCount(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    family: str
    split: PoolSplit
    modules: int
    enumerated: int = Field(description="theorems the header enumerated (after its own rules)")
    kept: int
    clusters: int


class PoolBuild(BaseModel):
    """The pool and its splits, and what each rule left out."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    rules: PoolRules
    split_rules: SplitRules
    theorems: list[PoolTheorem]
    excluded: dict[str, int] = Field(default_factory=dict, description="reason -> theorems left out")
    families: list[FamilyCount] = Field(default_factory=list)
    modules_scanned: int = 0
    modules_unread: list[str] = Field(default_factory=list, description="modules Lean gave no answer for (their "
                                      "theorems are missing from every split)")

    def split(self, name: str) -> list[PoolTheorem]:
        return [t for t in self.theorems if t.split == name]

    def counts(self) -> dict[str, dict[str, int]]:
        """Per split: theorems, families, modules, clusters."""
        out = {}
        for s in SPLITS:
            ts = self.split(s)
            out[s] = {"theorems": len(ts), "families": len({t.family for t in ts}),
                      "modules": len({t.module for t in ts}), "clusters": len({t.cluster for t in ts})}
        return out


def module_family(module: str) -> str:
    """A module's family: three components under ``Init.Data``/``Std.Data`` (``Init.Data.List.Lemmas`` ->
    ``Init.Data.List``), else two (``Init.Core``, ``Init.Control.Lawful.Basic`` -> ``Init.Control``)."""
    parts = module.split(".")
    keep = 3 if parts[1:2] == ["Data"] else 2
    return ".".join(parts[:keep])


def generated_name(name: str) -> bool:
    """A name Lean generates for a declaration (equation, injectivity, sizeOf, induction principles)."""
    return bool(_GENERATED.match(name.rsplit(".", 1)[-1]))


def _has_prefix(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def import_closures(graph: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
    """Module -> every module it imports, directly or not (itself excluded)."""
    memo: dict[str, frozenset[str]] = {}
    for root in graph:
        if root in memo:
            continue
        # iterative post-order: a module's closure after its imports'
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            m, done = stack.pop()
            if m in memo:
                continue
            if done:
                acc: set[str] = set()
                for i in graph.get(m, ()):
                    acc.add(i)
                    acc |= memo.get(i, frozenset())
                memo[m] = frozenset(acc)
                continue
            stack.append((m, True))
            stack.extend((i, False) for i in graph.get(m, ()) if i not in memo)
    return memo


def modules_to_scan(graph: Mapping[str, Sequence[str]], rules: PoolRules) -> list[str]:
    """The worker's modules under `PoolRules.roots`, less `PoolRules.exclude_modules`, sorted."""
    return sorted(m for m in graph if _has_prefix(m, rules.roots) and not _has_prefix(m, rules.exclude_modules))


def _internal(name: str) -> bool:
    return "Internal" in name.split(".")


def exclusion(c: LibraryConstant, closure: frozenset[str], rules: PoolRules) -> str | None:
    """Why a scanned theorem stays out of the pool (None: it enters)."""
    if _has_prefix(c.name, rules.exclude_names) or _internal(c.name) or _internal(c.module):
        return "internal namespace"
    if generated_name(c.name):
        return "generated"
    if c.size > rules.max_size:
        return "size"
    outside = [m for m in c.type_modules if m not in closure]
    if outside:
        return "type outside imports"
    return None


def near_twin_key(c: LibraryConstant | PoolTheorem | str) -> str:
    """The Lean key of the near-twin rules (module doc): the Lean-computed skeleton of the type, as a digest
    (a `PoolTheorem` carries it as ``twin``)."""
    skeleton = c if isinstance(c, str) else getattr(c, "skeleton", None)
    if skeleton is None:
        assert isinstance(c, PoolTheorem)
        return c.twin
    return hashlib.sha256(skeleton.encode()).hexdigest()[:12]


def eval_theorem(t: PoolTheorem) -> Theorem:
    """The theorem as the eval's near-twin check reads it: its statement is the type as Lean prints it (the
    form a reader compares; `PoolTheorem.theorem` poses the stored type, which no text check can see)."""
    return Theorem(name=t.name, statement=f": {t.type}", split=THEOREM_SPLIT[t.split], source=SOURCE,
                   family=t.family, module=t.module)


_SIDE_RANK: Mapping[str, int] = MappingProxyType({"pool": 0, "dev": 1, "test": 2})


def _twin_groups(theorems: Sequence[PoolTheorem], eval_check: bool = True,
                 forms: Mapping[str, Forms] | None = None) -> UnionFind[str]:
    """Names grouped by the Lean key and (``eval_check``) the eval's twins and strong near-twins, closed
    transitively (``forms``: name -> the `Forms` of its `eval_theorem`, when already made)."""
    from burnqed_core.data.twins.near_twins import near_twin_groups

    uf = UnionFind([t.name for t in theorems])
    first: dict[str, str] = {}
    for t in theorems:
        if not t.twin:  # a row without its key: the eval's check alone
            continue
        if t.twin in first:
            uf.union(first[t.twin], t.name)
        else:
            first[t.twin] = t.name
    if eval_check:
        evals = [forms[t.name] for t in theorems] if forms is not None else [eval_theorem(t) for t in theorems]
        for group in near_twin_groups(evals):
            for n in group[1:]:
                uf.union(group[0], n)
    return uf


def pool_clusters(theorems: Sequence[PoolTheorem], forms: Mapping[str, Forms] | None = None) -> dict[str, str]:
    """Name -> cluster for the theorems of one split: its module, with the modules of near-twins (either rule)
    merged, named by the smallest module (``forms``: name -> the `Forms` of its `eval_theorem`, when already
    made)."""
    groups = _twin_groups(theorems, forms=forms)
    module = {t.name: t.module for t in theorems}
    uf = UnionFind(sorted(set(module.values())))
    for members in groups.groups().values():
        for n in members[1:]:
            uf.union(module[members[0]], module[n])
    return {t.name: uf.find(t.module) for t in theorems}


def keep_twins_apart(theorems: Sequence[PoolTheorem]) -> tuple[list[PoolTheorem], Counter[str]]:
    """The near-twin rules (module doc) on theorems with their provisional split: each group of near-twins (the
    Lean key and the eval's check, closed transitively) keeps only its members of its most held-out split, and
    each split's clusters are its modules with near-twins' merged. Returns the theorems kept (sorted by name,
    ``cluster`` set; the split of none changes) and the reason -> count of those dropped. No Lean: the rows'
    ``twin`` and ``type`` are all it reads."""
    from burnqed_core.data.twins.near_twins import forms_of

    names = [t.name for t in theorems]
    if len(set(names)) != len(names):
        dup = sorted(n for n, k in Counter(names).items() if k > 1)
        raise DataError(f"core pool: a theorem named twice: {', '.join(dup[:5])}")
    split = {t.name: t.split for t in theorems}
    # each theorem's forms made once, for the grouping of all and for its split's clusters
    forms = dict(zip(names, forms_of([eval_theorem(t) for t in theorems]), strict=True))

    def sides(uf: UnionFind[str]) -> dict[str, str]:
        top: dict[str, str] = {}
        for root, members in uf.groups().items():
            top[root] = max((split[n] for n in members), key=_SIDE_RANK.__getitem__)
        return {n: top[uf.find(n)] for n in names}

    by_lean = sides(_twin_groups(theorems, eval_check=False))
    by_both = sides(_twin_groups(theorems, forms=forms))
    dropped: Counter[str] = Counter()
    kept: list[PoolTheorem] = []
    for t in theorems:
        side = by_both[t.name]
        if side == t.split:
            kept.append(t)
        elif by_lean[t.name] != t.split:
            dropped[f"twin of a {by_lean[t.name]} theorem"] += 1
        else:
            dropped[f"near-twin of a {side} theorem (eval check)"] += 1
    clusters: dict[str, str] = {}
    for s in SPLITS:
        clusters |= pool_clusters([t for t in kept if t.split == s], forms)
    out = [t.model_copy(update={"cluster": clusters[t.name]}) for t in sorted(kept, key=lambda t: t.name)]
    return out, dropped


def _order(family: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{family}".encode()).hexdigest()


def choose_held_out(family_sizes: Mapping[str, int], rules: SplitRules,
                    clusters: Callable[[Collection[str]], int] | None = None) -> dict[str, PoolSplit]:
    """Family -> split by the seeded rule (module doc); families not listed are ``pool``. Depends only on the
    families' names and sizes and on ``clusters`` (the number of clusters a set of families makes; None: one
    per family). An error when the eligible families cannot fill both held-out splits."""
    eligible = sorted((f for f, n in family_sizes.items() if rules.min_family <= n <= rules.max_family),
                      key=lambda f: _order(f, rules.seed))
    count = clusters or len
    out: dict[str, PoolSplit] = {}
    for split, want, fams, clus in (("test", rules.test_theorems, rules.test_families, rules.test_clusters),
                                    ("dev", rules.dev_theorems, rules.dev_families, rules.dev_clusters)):
        chosen: list[str] = []
        got = 0
        while got < want or len(chosen) < fams or count(chosen) < clus:
            if not eligible:
                raise DataError(f"core pool: the families of {rules.min_family}-{rules.max_family} theorems cannot "
                                f"fill {split} ({got} theorems, {len(chosen)} families, {count(chosen)} clusters; "
                                f"want {want}, {fams}, {clus})")
            f = eligible.pop(0)
            chosen.append(f)
            out[f] = split  # type: ignore[assignment]
            got += family_sizes[f]
    return out


def build_pool(scans: Sequence[ModuleScan], graph: Mapping[str, Sequence[str]],
               rules: PoolRules | None = None, split_rules: SplitRules | None = None) -> PoolBuild:
    """The pool and its splits from the header's scans and the import graph (no Lean needed here)."""
    rules = rules or PoolRules()
    split_rules = split_rules or SplitRules()
    closures = import_closures(graph)
    excluded: Counter[str] = Counter()
    for s in scans:
        for reason, n in s.skipped.items():
            excluded[f"header: {reason}"] += n
    unread = sorted(s.module for s in scans if s.error)
    enumerated: Counter[str] = Counter()
    kept: list[LibraryConstant] = []
    for s in scans:
        fam = module_family(s.module)
        for c in s.theorems:
            enumerated[fam] += 1
            why = exclusion(c, closures.get(s.module, frozenset()), rules)
            if why:
                excluded[why] += 1
            else:
                kept.append(c)
    rows = [PoolTheorem(name=c.name, module=c.module, family=module_family(c.module), split="pool",
                        cluster=c.module, type=c.type, size=c.size, universes=c.universes, twin=near_twin_key(c))
            for c in kept]
    sizes = Counter(t.family for t in rows)
    by_family: dict[str, list[PoolTheorem]] = {}
    for t in rows:
        by_family.setdefault(t.family, []).append(t)

    def clusters_of(families: Collection[str]) -> int:
        return len(set(pool_clusters([t for f in families for t in by_family[f]]).values()))

    split_of = choose_held_out(sizes, split_rules, clusters_of)
    rows = [t.model_copy(update={"split": split_of.get(t.family, "pool")}) for t in rows]
    theorems, dropped = keep_twins_apart(rows)
    excluded.update(dropped)
    families = []
    for fam in sorted(set(enumerated) | set(sizes)):
        mine = [t for t in theorems if t.family == fam]
        families.append(FamilyCount(family=fam, split=split_of.get(fam, "pool"),
                                    modules=len({s.module for s in scans if module_family(s.module) == fam}),
                                    enumerated=enumerated[fam], kept=len(mine),
                                    clusters=len({t.cluster for t in mine})))
    return PoolBuild(rules=rules, split_rules=split_rules, theorems=theorems, excluded=dict(sorted(excluded.items())),
                     families=families, modules_scanned=len(scans), modules_unread=unread)


def write_pool(build: PoolBuild, out: Path) -> dict[str, Path]:
    """``pool.jsonl``, ``dev.jsonl``, ``test.jsonl`` (one `PoolTheorem` a line, by name) and ``build.json`` (the
    rules and counts) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for s in SPLITS:
        # the family is its module's and universes are mostly 0: left out of the file (under 2 MB in git)
        lines = [t.model_dump_json(exclude={"family"}, exclude_defaults=True) for t in build.split(s)]
        paths[s] = atomic_write_text(out / f"{s}.jsonl", "\n".join(lines) + ("\n" if lines else ""))
    meta = build.model_dump(mode="json", exclude={"theorems"}) | {"counts": build.counts()}
    paths["build"] = atomic_write_text(out / "build.json", json.dumps(meta, indent=1) + "\n")
    return paths


def read_build(directory: Path) -> PoolBuild:
    """The build a directory written by `write_pool` holds (``build.json`` and the three split files)."""
    try:
        meta = json.loads((directory / "build.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{directory}: no build.json (build the core pool: burnqed data core-pool --out DIR)") from None
    except ValueError as e:
        raise DataError(f"{directory / 'build.json'}: not JSON ({e})") from None
    theorems: list[PoolTheorem] = []
    for s in SPLITS:
        path = directory / f"{s}.jsonl"
        try:
            rows = read_pool_rows(path)
        except FileNotFoundError:
            raise DataError(f"{path}: no such file") from None
        except ValueError as e:
            raise DataError(f"{path}: not core pool rows ({str(e).splitlines()[0]})") from None
        if any(r.split != s for r in rows):
            raise DataError(f"{path}: a row of another split")
        theorems += rows
    meta.pop("counts", None)
    try:
        return PoolBuild.model_validate(meta | {"theorems": sorted(theorems, key=lambda t: t.name)})
    except ValueError as e:
        raise DataError(f"{directory / 'build.json'}: not a core pool build ({str(e).splitlines()[0]})") from None


def resplit(build: PoolBuild) -> PoolBuild:
    """The near-twin rules (`keep_twins_apart`) applied again to a build's theorems, without Lean: the split of
    every theorem stays (the families were drawn by the seeded rule before any result), near-twins of a more
    held-out split are dropped (added to ``excluded``) and clusters merged; the families' counts follow.
    Applying it twice changes nothing the second time."""
    theorems, dropped = keep_twins_apart(build.theorems)
    excluded = Counter(build.excluded)
    excluded.update(dropped)
    families = []
    for f in build.families:
        mine = [t for t in theorems if t.family == f.family]
        families.append(f.model_copy(update={"kept": len(mine), "clusters": len({t.cluster for t in mine})}))
    return build.model_copy(update={"theorems": theorems, "excluded": dict(sorted(excluded.items())),
                                    "families": families})


def is_pool_row(row: Mapping[str, Any]) -> bool:
    """Whether a JSON row is a `PoolTheorem` (and not a `Theorem`: it has a module and no statement)."""
    return "module" in row and "statement" not in row and "name" in row


def read_pool_jsonl(path: Path) -> list[Theorem]:
    """The theorems of a ``pool.jsonl``/``dev.jsonl``/``test.jsonl`` file, as `Theorem` records."""
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file (build the core pool: burnqed data core-pool)") from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(PoolTheorem.model_validate_json(line).theorem())
        except ValueError as e:
            raise DataError(f"{path}:{i}: not a core pool row ({str(e).splitlines()[0]})") from None
    return out


def read_pool_rows(path: Path) -> list[PoolTheorem]:
    return [PoolTheorem.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def curriculum_rank(rows: Sequence[PoolTheorem]) -> dict[str, tuple[int, int, str]]:
    """The pool's curriculum: a theorem's place is its statement's size (nodes of its type), then its printed
    length, then its name: smaller statements first, within each family (the selection's quota per family keeps
    the families spread). Read off the statements alone, never off a result."""
    return {r.name: (r.size, len(r.type), r.name) for r in rows}


def core_path(spec: str) -> Path | None:
    """The bundled file of a ``core:<split>`` spec (None: not such a spec); an unknown split is an error."""
    if not spec.startswith(CORE_PREFIX):
        return None
    split = spec[len(CORE_PREFIX):]
    if split not in SPLITS:
        sets = ", ".join(CORE_PREFIX + s for s in SPLITS)
        raise DataError(f"no theorem set {spec!r}: the core pool's sets are {sets}")
    return CORE_DIR / f"{split}.jsonl"


async def scan_library(lean: SourceChecker, rules: PoolRules, progress: Any = None
                       ) -> tuple[list[ModuleScan], dict[str, list[str]]]:
    """The scans of every module the pool rules cover, and the worker's import graph (Lean needed).
    ``progress``: a tqdm-like bar (``total`` set here, ``update(n)`` per chunk)."""
    graph = await module_graph(lean)
    modules = modules_to_scan(graph, rules)
    if progress is not None:
        progress.total = len(modules)
    scans = await scan_modules(lean, modules, rules.max_size,
                               progress=progress.update if progress is not None else None)
    return scans, graph


def split_theorems(build: PoolBuild, split: str, pool_sample: int | None = None) -> list[Theorem]:
    """The theorems of one split as `Theorem` records; the pool's as the fixed sample of ``pool_sample`` (seed 0,
    spread over families: `burnqed_core.data.theorems.sampling.stratified_sample`) when given."""
    thms = [t.theorem() for t in build.split(split)]
    if split == "pool" and pool_sample is not None:
        from burnqed_core.data.theorems.sampling import stratified_sample

        thms = stratified_sample(thms, pool_sample)
    return thms


class SavedScans(BaseModel):
    """What Lean read, saved (``burnqed data core-pool --save-scans``): rebuild the splits without Lean."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    graph: dict[str, list[str]]
    scans: list[ModuleScan]


def save_scans_file(scans: Sequence[ModuleScan], graph: Mapping[str, Sequence[str]], path: Path) -> Path:
    return atomic_write_text(path, SavedScans(graph={k: list(v) for k, v in graph.items()},
                                              scans=list(scans)).model_dump_json() + "\n")


def read_scans(path: Path) -> tuple[list[ModuleScan], dict[str, list[str]]]:
    try:
        saved = SavedScans.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except ValueError as e:
        raise DataError(f"{path}: not saved scans ({str(e).splitlines()[0]})") from None
    return saved.scans, saved.graph
