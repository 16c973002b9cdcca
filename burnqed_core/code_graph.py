"""The import graph of the project's packages, read statically, and the code version of a stage.

`graph` reads every ``import`` of every module with `ast`: at top level, inside a function or under ``if
TYPE_CHECKING``, so a lazy import counts like any other (`tests/core/test_import_graph.py` refuses cycles and
imports up a layer on it). A package's ``__init__`` is the node of its package; ``from pkg import module`` is
an edge to the module.

`code_version` is what a stage's fingerprint holds of its code (`burnqed_core.loop.spec.StageSpec`): a
sha256 over the normalised source (the AST less docstrings: comments, docstrings and layout do not count) of
the stage's module and of every module of ``burnqed_core`` it imports, directly or not, lazily or not, and
of the non-Python files those modules load (`RESOURCES`). A fixed bug in `burnqed_core.data.pairs.mixing` thus
re-runs ``tactic_pairs`` and what reads it, and nothing that does not import it. Left out (`NOT_CODE`): the
modules whose effect on a result is nil or is hashed another way (`burnqed_core.config`: the validated
settings values are in the fingerprint; the markers, specs and reads: when a stage runs, not what it
computes; logging and error types).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("burnqed_core", "burnqed_pipeline")

NOT_CODE = frozenset({
    "burnqed_core.config", "burnqed_core.projection", "burnqed_core.loop.spec", "burnqed_core.loop.markers",
    "burnqed_core.reads", "burnqed_core.code_graph", "burnqed_core.logutil", "burnqed_core.errors",
})
# non-Python files a module loads (module -> paths relative to its file's directory)
RESOURCES: Mapping[str, tuple[str, ...]] = MappingProxyType({"burnqed_core.lean.judge": ("judge.lean",)})


@cache
def modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of ``packages`` by dotted name (a package by its name, from its ``__init__``)."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a body, nested ones included (imports are statements: no expression is visited)."""
    for stmt in body:
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body)


@cache
def _parsed(path: Path) -> tuple[str, ast.Module]:
    """A module's source and its AST less docstrings, read once per process (imports and digests use it)."""
    source = path.read_text(encoding="utf-8")
    return source, _strip_docstrings(ast.parse(source, filename=str(path)))


def imports(module: str, root: Path = ROOT, packages: tuple[str, ...] = PACKAGES
            ) -> Iterator[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) of every import statement of ``module``, anywhere in it
    (relative imports resolved; ``import a.b`` has no names)."""
    path = modules(root, packages)[module]
    _, tree = _parsed(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _statements(tree.body):
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


def resolve(name: str, root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> str | None:
    """The module of ``packages`` that ``name`` (a module, or a name inside one) is, or None."""
    known = modules(root, packages)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@cache
def graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, dict[str, int]]:
    """module -> {imported module of ``packages``: first line}."""
    out: dict[str, dict[str, int]] = {m: {} for m in modules(root, packages)}
    for m in modules(root, packages):
        for line, name, names in imports(m, root, packages):
            for target in [name] + [f"{name}.{n}" for n in names]:
                t = resolve(target, root, packages) if target.split(".")[0] in packages else None
                if t is not None and t != m:
                    out[m].setdefault(t, line)
    return out


def closure(start: Iterable[str], root: Path = ROOT, packages: tuple[str, ...] = PACKAGES,
            stop: frozenset[str] = frozenset()) -> set[str]:
    """``start`` and every module they import, directly or not (not through the modules of ``stop``)."""
    g = graph(root, packages)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        if m not in stop:
            todo.extend(g.get(m, {}))
    return seen


def _strip_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` without docstrings (a module's, a class's, a function's first string), in place."""
    for node in [tree, *_statements(tree.body)]:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


@cache
def source_digest(module: str, root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> str:
    """sha256 of the module's normalised source (its AST less docstrings) and of its `RESOURCES`."""
    path = modules(root, packages)[module]
    _, tree = _parsed(path)
    h = hashlib.sha256(ast.dump(tree, annotate_fields=False, include_attributes=False).encode())
    for rel in RESOURCES.get(module, ()):
        h.update((path.parent / rel).read_bytes())
    return h.hexdigest()


def code_modules(module: str, root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """The modules whose code a stage module's results depend on (`code_version`)."""
    return sorted(m for m in closure([module], root, packages, stop=NOT_CODE)
                  if m.split(".")[0] == "burnqed_core" and m not in NOT_CODE)


@cache
def code_version(module: str, root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> str:
    """The code version of a stage module (see the module docstring): 16 hex digits."""
    h = hashlib.sha256()
    for m in code_modules(module, root, packages):
        h.update(f"{m}:{source_digest(m, root, packages)}\n".encode())
    return h.hexdigest()[:16]
