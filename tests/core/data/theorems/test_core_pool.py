"""The core pool's rules, splits and files, without Lean (the scans are built here; the Lean side is
tests/core/lean/test_library.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burnqed_core.data.theorems.core_pool import (
    CORE_DIR,
    PoolRules,
    PoolTheorem,
    SplitRules,
    build_pool,
    choose_held_out,
    core_path,
    eval_theorem,
    exclusion,
    generated_name,
    import_closures,
    is_pool_row,
    keep_twins_apart,
    module_family,
    modules_to_scan,
    read_build,
    read_pool_rows,
    resplit,
    write_pool,
)
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.errors import DataError
from burnqed_core.lean.library import LibraryConstant, ModuleScan, type_statement


def const(name: str, module: str, skeleton: str = "", size: int = 10, mods: tuple[str, ...] = ()) -> LibraryConstant:
    return LibraryConstant(name=name, module=module, size=size, type=f"Nat.{name.replace('.', '_')} = 0",
                           skeleton=skeleton or f"skel {name}", type_modules=list(mods))


def test_module_family() -> None:
    assert module_family("Init.Data.List.Lemmas") == "Init.Data.List"
    assert module_family("Init.Data.Nat.Bitwise.Lemmas") == "Init.Data.Nat"
    assert module_family("Init.Data.Bool") == "Init.Data.Bool"
    assert module_family("Init.Core") == "Init.Core"
    assert module_family("Init.Control.Lawful.Basic") == "Init.Control"
    assert module_family("Std.Data.HashMap.Lemmas") == "Std.Data.HashMap"


def test_generated_names() -> None:
    for n in ["Nat.add.eq_1", "Nat.beq.eq_def", "List.cons.injEq", "List.cons.inj", "Foo.sizeOf_spec",
              "Nat.div.induct", "List.ext_iff"]:
        assert generated_name(n), n
    for n in ["Nat.add_comm", "List.map_append", "Nat.eq_of_beq_eq_true", "List.induct_fun"]:
        assert not generated_name(n), n


def test_import_closures() -> None:
    graph = {"A": [], "B": ["A"], "C": ["B"], "D": ["C", "A"], "E": []}
    c = import_closures(graph)
    assert c["A"] == frozenset()
    assert c["D"] == {"A", "B", "C"}
    assert "D" not in c["D"]  # a module never imports itself


def test_exclusion_rules() -> None:
    rules = PoolRules(max_size=20)
    closure = frozenset({"Init.Prelude", "Init.Core"})
    assert exclusion(const("Nat.foo", "M", mods=("Init.Prelude",)), closure, rules) is None
    assert exclusion(const("Lean.Grind.foo", "M"), closure, rules) == "internal namespace"
    assert exclusion(const("Std.DTreeMap.Internal.Impl.foo", "M"), closure, rules) == "internal namespace"
    assert exclusion(const("Std.foo", "Std.Data.DHashMap.Internal.Defs"), closure, rules) == "internal namespace"
    assert exclusion(const("Nat.add.eq_1", "M"), closure, rules) == "generated"
    assert exclusion(const("Nat.big", "M", size=21), closure, rules) == "size"
    # a type that uses a constant of the theorem's own module (or of a later one) does not live in its imports
    assert exclusion(const("Nat.own", "M", mods=("Init.Prelude", "M")), closure, rules) == "type outside imports"


def test_held_out_families_seeded_and_size_bounded() -> None:
    sizes = {f"F{i}": 30 + i for i in range(40)} | {"Big": 5000, "Tiny": 3}
    rules = SplitRules(test_theorems=100, test_families=3, dev_theorems=60, dev_families=2, min_family=10,
                       max_family=400, test_clusters=1, dev_clusters=1)
    a = choose_held_out(sizes, rules)
    assert a == choose_held_out(dict(reversed(list(sizes.items()))), rules)  # order of the input does not matter
    assert "Big" not in a and "Tiny" not in a
    test = [f for f, s in a.items() if s == "test"]
    dev = [f for f, s in a.items() if s == "dev"]
    assert len(test) >= 3 and sum(sizes[f] for f in test) >= 100
    assert len(dev) >= 2 and sum(sizes[f] for f in dev) >= 60
    assert choose_held_out(sizes, rules.model_copy(update={"seed": 1})) != a
    with pytest.raises(DataError, match="cannot fill"):
        choose_held_out({"A": 20}, rules)
    # clusters count too (the eval's unit): more families until test and dev have enough
    more = choose_held_out(sizes, rules.model_copy(update={"test_clusters": 10, "dev_clusters": 10}),
                           lambda fams: 2 * len(fams))
    assert sum(s == "test" for s in more.values()) >= 5 and sum(s == "dev" for s in more.values()) >= 5


def _scans() -> tuple[list[ModuleScan], dict[str, list[str]]]:
    graph = {"Init.Prelude": [], "Init.Data.A.Basic": ["Init.Prelude"], "Init.Data.A.Lemmas": ["Init.Data.A.Basic"],
             "Init.Data.B.Lemmas": ["Init.Prelude"], "Init.Data.C.Lemmas": ["Init.Prelude"],
             "Init.Data.D.Lemmas": ["Init.Prelude"]}
    scans = []
    for m in graph:
        if m == "Init.Prelude":
            continue
        letter = m.split(".")[2]
        ts = [const(f"{letter}.t{i}_{m.split('.')[-1]}", m, mods=("Init.Prelude",)) for i in range(12)]
        scans.append(ModuleScan(module=m, constants=20, theorems=ts, skipped={"name": 2}))
    # near-twins across families: B.t0 ~ C.t0 ~ D.t0 (one skeleton); within A: t0 in Basic ~ t0 in Lemmas
    twin = "(P T (Eq T #0 #0))"
    scans = [s.model_copy(update={"theorems": [t.model_copy(update={"skeleton": twin}) if t.name.split(".")[1]
                                              .startswith("t0_") and s.module != "Init.Data.A.Basic" else t
                                              for t in s.theorems]}) for s in scans]
    inner = "(P T (inner #0))"
    scans = [s.model_copy(update={"theorems": [t.model_copy(update={"skeleton": inner}) if t.name.startswith("A.t1_")
                                              else t for t in s.theorems]}) for s in scans]
    return scans, graph


def test_build_pool_splits_share_no_module_and_twins_keep_to_one_side() -> None:
    scans, graph = _scans()
    rules = SplitRules(test_theorems=10, test_families=1, dev_theorems=10, dev_families=1, min_family=1,
                       test_clusters=1, dev_clusters=1)
    b = build_pool(scans, graph, split_rules=rules)
    by_split = {s: b.split(s) for s in ("pool", "dev", "test")}
    mods = {s: {t.module for t in ts} for s, ts in by_split.items()}
    assert not (mods["pool"] & mods["dev"] or mods["pool"] & mods["test"] or mods["dev"] & mods["test"])
    fams = {s: {t.family for t in ts} for s, ts in by_split.items()}
    assert not (fams["pool"] & fams["dev"] or fams["pool"] & fams["test"] or fams["dev"] & fams["test"])
    assert by_split["test"] and by_split["dev"] and by_split["pool"]
    # every near-twin key lives in one split only
    keys: dict[str, set[str]] = {}
    for t in b.theorems:
        keys.setdefault(t.twin, set()).add(t.split)
    assert all(len(s) == 1 for s in keys.values())
    assert sum(v for k, v in b.excluded.items() if k.startswith("twin")) >= 1
    assert b.excluded["header: name"] == 2 * len(scans)
    # clusters: a module, with near-twin modules in one split merged (A's two modules share t1's skeleton)
    a = [t for t in b.theorems if t.family == "Init.Data.A"]
    assert len({t.cluster for t in a}) == 1 and a[0].cluster == "Init.Data.A.Basic"
    counts = b.counts()
    assert sum(c["theorems"] for c in counts.values()) == len(b.theorems)


def test_pool_files_read_as_theorems(tmp_path: Path) -> None:
    scans, graph = _scans()
    b = build_pool(scans, graph, split_rules=SplitRules(test_theorems=10, test_families=1, dev_theorems=10,
                                                         dev_families=1, min_family=1, test_clusters=1,
                                                         dev_clusters=1))
    paths = write_pool(b, tmp_path)
    assert set(paths) == {"pool", "dev", "test", "build"}
    rows = read_pool_rows(paths["test"])
    assert rows and all(r.split == "test" for r in rows)
    first = json.loads(paths["test"].read_text().splitlines()[0])
    assert is_pool_row(first) and {"name", "module"} <= set(first)
    thms = load_theorems(paths["test"])
    assert [t.name for t in thms] == [r.name for r in rows]
    t = thms[0]
    assert t.statement == type_statement(rows[0].module, rows[0].name)
    assert t.module == rows[0].module and t.split == "test" and t.cluster == rows[0].cluster
    assert {x.split for x in load_theorems(paths["pool"])} == {"train"}
    meta = json.loads(paths["build"].read_text())
    assert meta["counts"]["test"]["theorems"] == len(rows)


def test_core_specs() -> None:
    assert core_path("core:test") == CORE_DIR / "test.jsonl"
    assert core_path("bundled:test") is None
    with pytest.raises(DataError, match="core pool's sets"):
        core_path("core:train")


def test_type_statement_quotes_names() -> None:
    assert type_statement("Init.Data.Nat.Basic", "Nat.add_comm") == ": burnqed_type% Init.Data.Nat.Basic Nat.add_comm"
    assert type_statement("Init.Core", "ne_of_beq_false'") == ": burnqed_type% Init.Core ne_of_beq_false'"


def test_modules_to_scan() -> None:
    graph = {"Init.Core": [], "Init.Grind.Lemmas": [], "Std.Data.HashMap.Lemmas": [], "Lean.Expr": [],
             "Std.Tactic.BVDecide": []}
    assert modules_to_scan(graph, PoolRules()) == ["Init.Core", "Std.Data.HashMap.Lemmas"]


def row(name: str, module: str, split: str, type_: str, twin: str = "") -> PoolTheorem:
    return PoolTheorem(name=name, module=module, split=split, cluster=module, type=type_,  # type: ignore[arg-type]
                       twin=twin or f"key-{name}")


def test_eval_check_drops_what_the_lean_key_misses_and_merges_clusters() -> None:
    """The eval's check (`near_twins`) on the printed types, on top of the Lean key: a pool theorem that states
    a test theorem with its binders swapped and made explicit has another Lean key (binder order) but is a strong
    near-twin by the eval's check, so it leaves; a chain (pool ~eval~ pool ~Lean key~ test) leaves too; within a
    split near-twins by the check merge their modules' clusters; everything else stays, on its split."""
    rows = [
        row("T.lt_ne", "Init.Data.T.Lemmas", "test", "∀ {a b : Nat}, a < b → b ≠ a"),
        row("T.other", "Init.Data.T.Lemmas", "test", "∀ (xs : List Nat), xs.reverse.reverse = xs", twin="k-rev"),
        row("P.gt_ne", "Init.Data.P.Lemmas", "pool", "∀ (x y : Nat), y < x → x ≠ y"),  # eval twin of T.lt_ne
        row("P.rev", "Init.Data.P.Basic", "pool", "∀ {l : List Int}, l.reverse.reverse = l", twin="k-rev"),  # Lean
        row("P.rev'", "Init.Data.P.Extra", "pool", "∀ (l : List Int), l.reverse.reverse = l"),  # eval ~ P.rev
        row("D.add", "Init.Data.D.Lemmas", "dev", "∀ {n : Nat}, n + 0 = n"),
        row("P.add", "Init.Data.P.Lemmas", "pool", "∀ (m : Nat), m + 0 = m"),  # eval twin of a dev theorem
        row("P.mul", "Init.Data.P.Lemmas", "pool", "∀ (m : Nat), m * 1 = m"),
        row("Q.mul", "Init.Data.Q.Lemmas", "pool", "∀ {k : Nat}, k * 1 = k"),  # eval ~ P.mul: one cluster
        row("Q.sub", "Init.Data.Q.Lemmas", "pool", "∀ (m : Nat), m - 0 = m"),
    ]
    # by the Lean key alone, every key but k-rev is its theorem's own
    assert len({r.twin for r in rows}) == len(rows) - 1
    kept, dropped = keep_twins_apart(rows)
    names = {t.name: t for t in kept}
    assert set(names) == {"T.lt_ne", "T.other", "D.add", "P.mul", "Q.mul", "Q.sub"}
    assert dropped == {"near-twin of a test theorem (eval check)": 2, "twin of a test theorem": 1,
                       "near-twin of a dev theorem (eval check)": 1}
    assert all(t.split == next(r.split for r in rows if r.name == t.name) for t in kept)  # no split changes
    assert names["P.mul"].cluster == names["Q.mul"].cluster == names["Q.sub"].cluster == "Init.Data.P.Lemmas"
    assert names["T.lt_ne"].cluster == "Init.Data.T.Lemmas" and names["D.add"].cluster == "Init.Data.D.Lemmas"
    assert [t.name for t in kept] == sorted(names)
    # the rows apart (no test or dev twin), nothing is dropped and each module is its own cluster
    alone, none = keep_twins_apart([r for r in rows if r.split == "pool" and r.name != "P.mul"])
    assert not none and len(alone) == 6 and {t.cluster for t in alone} == {t.module for t in alone} - {
        "Init.Data.P.Extra"} | {"Init.Data.P.Basic"}
    assert next(t for t in alone if t.name == "P.rev'").cluster == "Init.Data.P.Basic"  # P.rev ~ P.rev'


def test_resplit_keeps_splits_and_is_idempotent(tmp_path: Path) -> None:
    scans, graph = _scans()
    b = build_pool(scans, graph, split_rules=SplitRules(test_theorems=10, test_families=1, dev_theorems=10,
                                                         dev_families=1, min_family=1, test_clusters=1,
                                                         dev_clusters=1))
    write_pool(b, tmp_path)
    back = read_build(tmp_path)
    assert back.theorems == b.theorems and back.excluded == b.excluded
    # a pool row of another module and Lean key that prints as a test theorem: the eval's check finds it
    t = b.split("test")[0]
    twin = row("Z.copy", "Init.Data.Z.Lemmas", "pool", t.type, twin="z-key")
    more = back.model_copy(update={"theorems": [*back.theorems, twin]})
    again = resplit(more)
    assert "Z.copy" not in {x.name for x in again.theorems}
    assert again.excluded["near-twin of a test theorem (eval check)"] == 1
    assert {x.name: x.split for x in again.theorems} == {x.name: x.split for x in b.theorems}
    assert resplit(again) == again
    with pytest.raises(DataError, match=r"build\.json"):
        read_build(tmp_path / "missing")


def test_bundled_sets_hold_no_twin_across_splits() -> None:
    """The bundled core sets: no core:pool or core:dev theorem is a twin or strong near-twin of a core:test
    theorem by the eval's check (`find_near_twins`, what hygiene refuses) or shares its Lean key, none of
    core:pool is one of core:dev, and the issue's floor holds (>= 2000 pool theorems, >= 300 core:test theorems
    over >= 5 families)."""
    from burnqed_core.data.twins.near_twins import find_near_twins, forms_of

    rows = {s: read_pool_rows(CORE_DIR / f"{s}.jsonl") for s in ("pool", "dev", "test")}
    forms = {s: forms_of([eval_theorem(r) for r in rs]) for s, rs in rows.items()}
    assert find_near_twins(forms["test"], forms["pool"] + forms["dev"], partial=False) == []
    assert find_near_twins(forms["dev"], forms["pool"], partial=False) == []
    keys = {s: {r.twin for r in rs} for s, rs in rows.items()}
    assert not (keys["test"] & (keys["pool"] | keys["dev"])) and not (keys["dev"] & keys["pool"])
    assert len(rows["pool"]) >= 2000
    assert len(rows["test"]) >= 300 and len({r.family for r in rows["test"]}) >= 5
    # the sets as written are what the rules give: applying them again drops nothing and merges nothing
    kept, dropped = keep_twins_apart([r for rs in rows.values() for r in rs])
    assert not dropped and {t.name: t.cluster for t in kept} == {r.name: r.cluster for rs in rows.values()
                                                                  for r in rs}
