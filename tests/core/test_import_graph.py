"""The import graph of burnqed_core and burnqed_pipeline: no cycle anywhere, no import up a layer in the core, no
stale import, no module state in either package (issues 16, 32, 57, 66).

Read statically with `ast`: every ``import`` in a module counts, at top level, inside a function or under
``if TYPE_CHECKING``, so a lazy or type-only import that only hides a cycle counts too. A package's
``__init__`` is the node of its package (``burnqed_core.search``); ``from burnqed_core.lean import checker``
is an edge to the module ``burnqed_core.lean.checker``, ``from burnqed_core.search.job import run_search`` one
to ``burnqed_core.search.job``.

Layers, from top to bottom (a module may import its own layer and the layers below it, never one above):

0. ``cli``: the command line;
1. ``loop``: the expert-iteration loop over the stages;
2. ``eval``: the evaluation;
3. ``search``, ``training``, ``ebm``: one layer. Imports across them are allowed as long as the graph of the
   three packages stays acyclic (today ``search -> ebm``: `search.job.load_scorer`; ``training -> ebm``: the
   joint policy+EBM training); a cycle between two packages is refused even when their modules do not form one;
4. ``policy``: the policies (the prompt format is data: `burnqed_core.data.pairs.prompt`);
5. ``premises``: premise retrieval under the premise rule, and premise steps;
6. ``data.synthetic``, ``data.pairs``: the generator of the bundled sets; tactic pairs and the prompt format (one
   layer, no import between them);
7. ``data.theorems``: theorem sets and their loaders;
8. ``data.twins``: twin detection (and ``data``'s own ``__init__``);
9. ``lean``: the Lean backends and the checker;
10. the bottom: every top-level module of ``burnqed_core`` (``records``, ``record_io``, ``trajectory_io``,
   ``config``, ``errors``, ``logutil``, ``verdict`` ..., and the package's own ``__init__``). They may import
   each other (acyclically: checked like everything else) and nothing above. A new top-level module is put
   here by default; a new subpackage must be given a layer in `LAYERS`.

``data`` is a package of packages (`NESTED`): each of its subpackages is a unit of its own (``data.twins``), with a
layer of its own.

Dagster (and burnqed_pipeline, which is built on it) sits above everything: no module of burnqed_core imports
it, not even lazily (`test_no_dagster_in_core` checks the top-level imports at run time).

burnqed_pipeline is read the same way (`burnqed_core.code_graph`): no cycle between its modules, lazy imports
included (``cli`` -> ``commands`` -> ``runner`` -> ``definitions``, never back). Neither package keeps module
state: no ``global`` statement, no ``globals()``, no mutable container bound at module level (constants are
tuples, frozensets or read-only mappings). What a process keeps while it runs stages lives in an object its owner
holds (`burnqed_pipeline.services.StageRuntime`), a cache in the object that uses it, never in a module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "burnqed_core"

LAYERS: dict[str, int] = {
    "cli": 0,
    "loop": 1,
    "eval": 2,
    "search": 3,
    "training": 3,
    "ebm": 3,
    "policy": 4,
    "premises": 5,
    "data.synthetic": 6,
    "data.pairs": 6,
    "data.theorems": 7,
    "data.twins": 8,
    "data": 8,
    "lean": 9,
}
NESTED = frozenset({"data"})  # packages whose subpackages are units of their own
BOTTOM = max(LAYERS.values()) + 1
FORBIDDEN = ("dagster", "dagster_", "burnqed_pipeline")


@cache
def modules() -> dict[str, Path]:
    """Every module of burnqed_core by dotted name (a package by its name, from its ``__init__``)."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(module: str) -> Iterator[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) of every import statement of ``module``, anywhere in it
    (relative imports resolved; ``import a.b`` has no names)."""
    path = modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            yield node.lineno, name, [a.name for a in node.names]


def resolve(name: str) -> str | None:
    """The module of burnqed_core that ``name`` (a module, or a name inside one) is, or None."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


@cache
def graph() -> dict[str, dict[str, int]]:
    """module -> {imported module of burnqed_core: first line}."""
    out: dict[str, dict[str, int]] = {m: {} for m in modules()}
    for m in modules():
        for line, name, names in imports(m):
            for target in [name] + [f"{name}.{n}" for n in names]:
                t = resolve(target) if target.split(".")[0] == PACKAGE else None
                if t is not None and t != m:
                    out[m].setdefault(t, line)
    return out


def unit(module: str) -> str:
    """The subpackage a module belongs to (``search``; ``data.twins`` inside a `NESTED` package), or the module
    itself at the top level (``records``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return module
    if len(parts) == 2 and modules()[module].name != "__init__.py":
        return module  # a top-level module: its own unit, in the bottom layer
    if parts[1] in NESTED and len(parts) >= 3 and (len(parts) > 3 or modules()[module].name == "__init__.py"):
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


def layer(module: str) -> int:
    u = unit(module)
    return LAYERS.get(u, BOTTOM)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def describe(comp: list[str], edges: dict[str, dict[str, int]] | None = None) -> str:
    inside = set(comp)
    if edges is None:
        return " <-> ".join(comp)
    return "; ".join(f"{a}:{line} -> {b}" for a in comp for b, line in sorted(edges[a].items()) if b in inside)


def test_no_import_cycle() -> None:
    g = graph()
    found = cycles({m: set(ts) for m, ts in g.items()})
    assert not found, "import cycles:\n" + "\n".join(describe(c, g) for c in found)


def test_no_cycle_between_packages() -> None:
    """Same-layer packages (search, training, ebm) may import each other one way only."""
    g = graph()
    units: dict[str, set[str]] = {}
    why: dict[tuple[str, str], str] = {}
    for a, ts in g.items():
        for b, line in ts.items():
            ua, ub = unit(a), unit(b)
            if ua != ub:
                units.setdefault(ua, set()).add(ub)
                units.setdefault(ub, set())
                why.setdefault((ua, ub), f"{a}:{line} -> {b}")
    found = cycles(units)
    assert not found, "cycles between packages:\n" + "\n".join(
        "; ".join(why[(x, y)] for x in c for y in c if (x, y) in why) for c in found)


def test_no_import_up_a_layer() -> None:
    up = [f"{a}:{line} -> {b} (layer {layer(a)} -> {layer(b)})"
          for a, ts in sorted(graph().items()) for b, line in sorted(ts.items()) if layer(b) < layer(a)]
    assert not up, "imports up a layer:\n" + "\n".join(up)


def test_every_subpackage_has_a_layer() -> None:
    packages = {unit(m) for m, p in modules().items() if p.name == "__init__.py" and m.count(".") >= 1}
    assert packages <= set(LAYERS), f"give these subpackages a layer in LAYERS: {sorted(packages - set(LAYERS))}"
    loose = [m for m, p in modules().items() if m.count(".") == 2 and m.split(".")[1] in NESTED
             and p.name != "__init__.py"]
    assert not loose, f"modules directly in a package of packages, in no subpackage: {loose}"


@cache
def top_level_names(module: str) -> frozenset[str]:
    """What ``from module import x`` can find statically: its top-level definitions, assignments and imports
    (also under a top-level ``if``/``try``), and its submodules if it is a package."""
    path = modules()[module]
    names: set[str] = set()
    todo = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo.extend(node.body)
            todo.extend(getattr(node, "orelse", []))
            todo.extend(getattr(node, "finalbody", []))
            for h in getattr(node, "handlers", []):
                todo.extend(h.body)
    if path.name == "__init__.py":
        names.update(m.rpartition(".")[2] for m in modules() if m.rpartition(".")[0] == module)
    return frozenset(names)


def test_every_internal_import_exists() -> None:
    """An import of a module or name of burnqed_core that is not there fails here, not at run time: a lazy
    import left behind by a move (``from burnqed_core.search.session import ...``) would otherwise break
    only when its function first runs."""
    stale = []
    for m in modules():
        for line, name, names in imports(m):
            if name.split(".")[0] != PACKAGE:
                continue
            if name not in modules():
                stale.append(f"{m}:{line}: no module {name}")
                continue
            stale += [f"{m}:{line}: {name} has no {n}" for n in names
                      if n != "*" and n not in top_level_names(name)]
    assert not stale, "imports of what burnqed_core does not have:\n" + "\n".join(stale)


def test_no_dagster_import_anywhere() -> None:
    """Not even a lazy one: burnqed_core runs where Dagster is not installed."""
    bad = [f"{m}:{line}: {name}" for m in modules() for line, name, _ in imports(m)
           if name == FORBIDDEN[0] or name.startswith(FORBIDDEN)]
    assert not bad, "burnqed_core imports Dagster or burnqed_pipeline:\n" + "\n".join(bad)


def test_the_scan_sees_lazy_and_type_only_imports() -> None:
    # search/job.py imports the policy factory inside search_job, the EBM scorer inside load_scorer
    assert "burnqed_core.policy.factory" in graph()["burnqed_core.search.job"]
    assert "burnqed_core.ebm.scorer" in graph()["burnqed_core.search.job"]
    # a package __init__ is its package's node; "from pkg import module" is an edge to the module
    assert "burnqed_core.search.job" in graph()["burnqed_core.search"]
    assert unit("burnqed_core.search") == "search" and unit("burnqed_core.records") == "burnqed_core.records"
    assert layer("burnqed_core.trajectory_io") == BOTTOM and layer("burnqed_core.cli.search") == 0
    # data's subpackages are units of their own, their own subpackages part of them
    assert unit("burnqed_core.data.twins.near_twins") == unit("burnqed_core.data.twins") == "data.twins"
    assert unit("burnqed_core.data.synthetic.techniques.have") == "data.synthetic"
    assert unit("burnqed_core.data") == "data"
    assert layer("burnqed_core.data.twins.canonical") > layer("burnqed_core.data.theorems.load") \
        > layer("burnqed_core.data.pairs.prepare") > layer("burnqed_core.policy.base")


def test_no_import_cycle_in_either_package() -> None:
    from burnqed_core.code_graph import graph as both

    g = both()
    assert any(m.startswith("burnqed_pipeline") for m in g) and any(m.startswith("burnqed_core") for m in g)
    found = cycles({m: set(ts) for m, ts in g.items()})
    assert not found, "import cycles:\n" + "\n".join(describe(c, g) for c in found)


MUTABLE_CALLS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "bytearray"})


def module_state(path: Path) -> list[str]:
    """What keeps state in a module (see the module docstring), as ``line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        call = value.func if isinstance(value, ast.Call) else None
        called = call.id if isinstance(call, ast.Name) else call.attr if isinstance(call, ast.Attribute) else ""
        if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) \
                or called in MUTABLE_CALLS:
            out.append(f"{node.lineno}: {ast.unparse(targets[0])} is a mutable container")
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            out.append(f"{node.lineno}: global {', '.join(node.names)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals":
            out.append(f"{node.lineno}: globals()")
    return out


def test_no_module_state_in_the_pipeline() -> None:
    found = [f"{p.relative_to(ROOT)}:{w}" for p in sorted((ROOT / "burnqed_pipeline").rglob("*.py"))
             for w in module_state(p)]
    assert not found, "module state in burnqed_pipeline:\n" + "\n".join(found)


def test_no_module_state_in_the_core() -> None:
    """The same rule in burnqed_core: a cache lives in the object that uses it (the checker's preamble
    declarations in the backend, `burnqed_core.lean.checker.PreambleDeclarations`), a table is a constant
    (``MappingProxyType``, tuple, frozenset), so that nothing a process did before changes a verdict or a result."""
    found = [f"{p.relative_to(ROOT)}:{w}" for p in sorted((ROOT / PACKAGE).rglob("*.py")) for w in module_state(p)]
    assert not found, "module state in burnqed_core:\n" + "\n".join(found)


def test_the_state_check_finds_state() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "m.py"
        f.write_text("X = (1, 2)\n_kept: dict = {}\nRUNS = set()\ndef f():\n    global X\n    globals()['y'] = 1\n")
        assert [w.split(": ")[1] for w in module_state(f)] == [
            "_kept is a mutable container", "RUNS is a mutable container", "global X", "globals()"]


def test_cycles_finds_a_cycle_and_only_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
