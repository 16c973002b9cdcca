"""No function of burnqed_core is longer than `MAX_LINES` lines or more complex than `MAX_COMPLEXITY` (issue 66).

Read statically with `ast`. A function's length is its lines from ``def`` to its last line (decorators not
counted, docstring and comments counted). Its cyclomatic complexity is 1 plus one per decision point in it, nested
functions included: ``if``/``elif`` and conditional expressions, ``for``/``while`` loops, ``except`` handlers,
``assert``, ``match`` cases, each ``for`` and ``if`` of a comprehension, and each extra operand of ``and``/``or``
(``a and b and c``: two). (ruff's C901 counts fewer of these and has no rule for lines, so the test counts both.)

Two lists of functions are exempt, keyed ``<path>::<qualified name>``:

* `TABLES`: functions that are data, not logic: a table of theorem instances written out entry by entry. They
  are exempt from the line limit only, and stay straight-line (complexity at most `TABLE_COMPLEXITY`);
* `KNOWN_EXCEPTIONS`: functions over a limit today, each with the issue in which it is being cut. An entry whose
  function is within both limits (or gone) fails the test, so that the list only shrinks.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "burnqed_core"
MAX_LINES = 60
MAX_COMPLEXITY = 25
TABLE_COMPLEXITY = 3

Function = ast.FunctionDef | ast.AsyncFunctionDef

TABLES: frozenset[str] = frozenset({
    "burnqed_core/data/synthetic/techniques/generalizing.py::_generalised",
    "burnqed_core/data/synthetic/techniques/generalizing.py::_accumulators",
    "burnqed_core/data/synthetic/techniques/have.py::_have_lemma",
    "burnqed_core/data/synthetic/techniques/induction.py::_poly_fixed",
})

# Empty since issue 66 cut the last ones; it may only shrink, so a function over a limit is cut, not listed.
KNOWN_EXCEPTIONS: frozenset[str] = frozenset()


def complexity(fn: Function) -> int:
    """1 plus the decision points of ``fn`` (see the module docstring)."""
    n = 1
    for node in ast.walk(fn):
        if isinstance(node, ast.If | ast.IfExp | ast.For | ast.AsyncFor | ast.While | ast.ExceptHandler
                      | ast.Assert | ast.match_case):
            n += 1
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            n += 1 + len(node.ifs)
    return n


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, Function]]:
    """(qualified name, node) of every function in ``tree``, methods as ``Class.name``, nested functions as
    ``outer.inner``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def measured() -> dict[str, tuple[int, int]]:
    """``<path>::<qualified name>`` -> (lines, complexity) of every function of burnqed_core."""
    out: dict[str, tuple[int, int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for name, fn in functions(ast.parse(path.read_text(encoding="utf-8"), rel)):
            out[f"{rel}::{name}"] = (int(fn.end_lineno or fn.lineno) - fn.lineno + 1, complexity(fn))
    return out


def over(key: str, lines: int, cc: int) -> bool:
    if key in TABLES:
        return cc > TABLE_COMPLEXITY
    return lines > MAX_LINES or cc > MAX_COMPLEXITY


def test_no_function_is_too_long_or_too_complex() -> None:
    sizes = measured()
    offenders = {k: v for k, v in sizes.items() if over(k, *v) and k not in KNOWN_EXCEPTIONS}
    assert not offenders, "over 60 lines or complexity 25 (cut them, or track them in KNOWN_EXCEPTIONS with their " \
                          "issue):\n" + "\n".join(f"{k}: {lines} lines, complexity {cc}"
                                                  for k, (lines, cc) in sorted(offenders.items()))


def test_the_known_exceptions_are_still_exceptions() -> None:
    """An exception that was cut (or renamed) leaves the list."""
    sizes = measured()
    stale = sorted(k for k in KNOWN_EXCEPTIONS | TABLES if k not in sizes or (k in KNOWN_EXCEPTIONS
                                                                              and not over(k, *sizes[k])))
    assert not stale, "no longer over a limit (remove from KNOWN_EXCEPTIONS/TABLES): " + ", ".join(stale)


def test_the_measure_counts_lines_and_decisions() -> None:
    src = ("def f(xs):\n    if xs and xs[0] or not xs:\n        return [x for x in xs if x]\n"
           "    try:\n        pass\n    except ValueError:\n        pass\n    return 1 if xs else 2\n")
    (name, fn), = functions(ast.parse(src))
    # 1 + if + (and, or) + comprehension (for, if) + except + conditional expression
    assert (name, complexity(fn)) == ("f", 1 + 1 + 2 + 2 + 1 + 1)
    long_fn = "def g():\n" + "    x = 1\n" * 60
    (_, g), = functions(ast.parse(long_fn))
    assert over("m.py::g", int(g.end_lineno or 0) - g.lineno + 1, complexity(g))
    assert not over("m.py::g", 60, 25)
