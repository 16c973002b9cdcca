"""A static check that a stage reads only the settings its model declares (issue 57).

Each stage receives a typed projection of the profile (`burnqed_core.projection.StageSettings`): a wrong read
is an ``AttributeError`` when the branch runs, and a wrong attribute for a type checker. This test finds it
before anything runs, with `ast`: in every module of burnqed_core, a name bound to settings (a parameter
annotated with a `Projection` class, or ``StageContext[S]`` whose ``.settings`` is one, and names assigned
from them: ``d = settings.data``) may only be followed by the fields of its model, nested as the model nests
them (``settings.data.corpus``), or by a method or property of the model's class (``model_copy``,
``paths.baselines_dir()``).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from typing import Any, get_args

from pydantic import BaseModel

from burnqed_core.code_graph import modules
from burnqed_core.projection import Projection

CONTEXT = "StageContext"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field annotation holds (through ``X | None``), or None for a leaf value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


class _Reads(ast.NodeVisitor):
    """Walks one function (and the functions nested in it) with the names bound to settings."""

    def __init__(self, namespace: dict[str, Any], where: str) -> None:
        self.ns = namespace
        self.where = where
        self.errors: list[str] = []

    def _resolve(self, node: ast.expr | None) -> tuple[str, type[BaseModel]] | None:
        """("model", M) for an annotation naming a Projection M, ("context", M) for StageContext[M]."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = ast.parse(node.value, mode="eval").body
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == CONTEXT:
            inner = self._resolve(node.slice)
            return ("context", inner[1]) if inner and inner[0] == "model" else None
        if isinstance(node, ast.Name):
            obj = self.ns.get(node.id)
            if isinstance(obj, type) and issubclass(obj, Projection):
                return ("model", obj)
        return None

    def check_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                       outer: dict[str, tuple[str, type[BaseModel]]]) -> None:
        bound = dict(outer)
        for arg in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
            kind = self._resolve(arg.annotation)
            if kind is not None:
                bound[arg.arg] = kind
            else:
                bound.pop(arg.arg, None)
        for stmt in fn.body:
            self._walk(stmt, bound)

    def _type_of(self, node: ast.expr, bound: dict[str, tuple[str, type[BaseModel]]]) -> type[BaseModel] | None:
        """The model an expression evaluates to (a settings object or a section of one), checking each step."""
        if isinstance(node, ast.Name):
            kind = bound.get(node.id)
            return kind[1] if kind is not None and kind[0] == "model" else None
        if not isinstance(node, ast.Attribute):
            return None
        if isinstance(node.value, ast.Name) and node.attr == "settings":
            kind = bound.get(node.value.id)
            if kind is not None and kind[0] == "context":
                return kind[1]
        model = self._type_of(node.value, bound)
        if model is None:
            return None
        if node.attr in model.model_fields:
            return _model_of(model.model_fields[node.attr].annotation)
        if hasattr(model, node.attr):  # a method or property of the model (model_copy, baselines_dir, ...)
            return None
        self.errors.append(f"{self.where}:{node.lineno}: reads .{node.attr} of {model.__qualname__}, which does not "
                           f"declare it (fields: {', '.join(model.model_fields)})")
        return None

    def _walk(self, node: ast.AST, bound: dict[str, tuple[str, type[BaseModel]]]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.check_function(node, bound)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            model = self._type_of(node.value, bound)
            self._walk_children(node.value, bound)
            if model is not None and issubclass(model, Projection):
                bound[node.targets[0].id] = ("model", model)
            else:
                bound.pop(node.targets[0].id, None)
            return
        if isinstance(node, ast.Attribute):
            self._type_of(node, bound)
            self._walk_children(node.value, bound, skip_attr_chain=True)
            return
        self._walk_children(node, bound)

    def _walk_children(self, node: ast.AST, bound: dict[str, tuple[str, type[BaseModel]]],
                       skip_attr_chain: bool = False) -> None:
        if skip_attr_chain:
            while isinstance(node, ast.Attribute):
                node = node.value
        for child in ast.iter_child_nodes(node):
            self._walk(child, bound)


def undeclared_reads(source: str, namespace: dict[str, Any], where: str) -> list[str]:
    """Every read of a setting that its model does not declare, in ``source`` (a module whose names are
    ``namespace``)."""
    checker = _Reads(namespace, where)
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            checker.check_function(node, {})
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    checker.check_function(item, {})
    return checker.errors


def _modules_with_settings() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for name, path in modules().items():
        if not name.startswith("burnqed_core"):
            continue
        source = path.read_text(encoding="utf-8")
        if "Settings" not in source and CONTEXT not in source:
            continue
        yield name, source, vars(importlib.import_module(name))


def test_every_stage_reads_only_what_its_settings_declare() -> None:
    errors: list[str] = []
    checked = []
    for name, source, ns in _modules_with_settings():
        errors += undeclared_reads(source, ns, name)
        checked.append(name)
    assert "burnqed_core.loop.stages.trajectories" in checked and "burnqed_core.eval.plan" in checked
    assert not errors, "settings read but not declared:\n" + "\n".join(errors)


BAD = '''
from burnqed_core.loop.spec import StageContext

def run(ctx: StageContext[Settings]) -> None:
    d = ctx.settings.data
    ok = d.corpus, ctx.settings.lean.tactic_timeout_s, ctx.settings.model_copy()
    wrong = d.trace_repo  # not declared

def helper(settings: Settings) -> int:
    return settings.search.max_nodes  # no search section
'''


def test_the_check_finds_a_read_of_an_undeclared_setting() -> None:
    from burnqed_core.config import DataConfig, LeanConfig
    from burnqed_core.projection import StageSettings

    class Data(Projection):
        SOURCE = DataConfig
        corpus: str

    class Settings(StageSettings):
        data: Data
        lean: LeanConfig

    errors = undeclared_reads(BAD, {"Settings": Settings, "StageContext": object}, "demo")
    assert len(errors) == 2, errors
    assert "demo:7: reads .trace_repo of" in errors[0] and "demo:10: reads .search of" in errors[1]
