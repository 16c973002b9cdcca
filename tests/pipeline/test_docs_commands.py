"""Every ``burnqed ...`` command written in the README and in docs/ still parses as written: its sub-commands exist
and every option it passes is one the command takes (the ``--help``-level check: placeholders such as ``DIR`` or
``N`` are not values to run with, so values are not checked)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import typer

from burnqed_pipeline.cli import make_app

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CUT = re.compile(r"\s(?:\||;|&&|>|2>|#)\s|\)|`")


def commands(text: str) -> list[str]:
    """The ``burnqed ...`` commands of a markdown text: in code spans and in fenced blocks, each up to the end of
    its span or line (a pipe, ``;``, ``&&``, a redirection or a comment ends it too)."""
    found: list[str] = []
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    for chunk in [*spans, *(ln for block in fenced for ln in block.splitlines())]:
        for m in re.finditer(r"(?:^|[\s(=])(burnqed\s+[a-z][^\n]*)", chunk):
            cmd = CUT.split(m.group(1) + " ", maxsplit=1)[0].strip()
            found.append(cmd)
    return found


def _tokens(cmd: str) -> list[str]:
    cmd = re.sub(r"\[([^\]]*)\]", r"\1", cmd)  # optional parts: [--pass-k K]
    cmd = cmd.replace("...", "")
    try:
        return shlex.split(cmd)[1:]
    except ValueError:
        return cmd.split()[1:]


def _group(node: Any) -> bool:
    return isinstance(getattr(node, "commands", None), dict)  # typer's (vendored) click group


def check(root: Any, cmd: str) -> str | None:
    """Why ``cmd`` does not parse (an unknown sub-command or option), or None."""
    tokens = _tokens(cmd)
    node = root
    path = ["burnqed"]
    while _group(node) and tokens and not tokens[0].startswith("-"):
        name = tokens[0]
        for alt in name.split("|"):  # "encode|train|metrics": each alternative
            if alt not in node.commands:
                return f"{' '.join(path)} has no command {alt!r}"
        node, path, tokens = node.commands[name.split("|")[0]], [*path, name], tokens[1:]
        while len(tokens) > 1 and tokens[0] == "/":  # "base / sft / merge", "up / status / down"
            if tokens[1] not in getattr(root_of(path, root), "commands", {}):
                return f"{' '.join(path[:-1])} has no command {tokens[1]!r}"
            tokens = tokens[2:]
    if _group(node):
        return None if not tokens or tokens[0] in ("--help", "-h") else f"{' '.join(path)} needs a sub-command"
    known = {o for p in node.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
    for tok in tokens:
        if tok.startswith("-") and len(tok) > 1 and not re.fullmatch(r"-\d.*", tok):
            opt = tok.split("=", 1)[0]
            if opt not in known:
                return f"{' '.join(path)} has no option {opt}"
    return None


def root_of(path: list[str], root: Any) -> Any:
    """The group holding the last command of ``path``."""
    node = root
    for name in path[1:-1]:
        node = node.commands[name.split("|")[0]]
    return node


def test_every_documented_command_parses() -> None:
    root = typer.main.get_command(make_app())
    seen, bad = 0, []
    for doc in DOCS:
        for cmd in commands(doc.read_text(encoding="utf-8")):
            seen += 1
            why = check(root, cmd)
            if why is not None:
                bad.append(f"{doc.relative_to(ROOT)}: `{cmd}`: {why}")
    assert seen > 60, seen  # the docs are read
    assert not bad, "documented commands that do not parse:\n" + "\n".join(bad)


def test_the_check_finds_a_wrong_command() -> None:
    root = typer.main.get_command(make_app())
    assert check(root, "burnqed eval --model DIR --theorems SPEC --out DIR [--pass-k K]") is None
    assert check(root, "burnqed loop --iterations 0,1 --last-until eval_report") is None
    assert "no option --passk" in (check(root, "burnqed eval --passk 3") or "")
    assert "no command 'evaluate'" in (check(root, "burnqed evaluate -t x") or "")
    assert commands("run `burnqed loop -i 0,1` then\n```bash\nburnqed compare a b | tee x\n```\n") == [
        "burnqed loop -i 0,1", "burnqed compare a b"]
