"""The Python side of the library commands without Lean: the answers' format (netstrings after the nonce, as the
trusted header writes them) and a scan that survives a module Lean gives no answer for. The Lean side is
test_library.py."""

from __future__ import annotations

import re

import pytest

from burnqed_core.lean.judge import ReportError
from burnqed_core.lean.library import (
    MissingModules,
    library_command,
    parse_library,
    parse_modules,
    scan_modules,
)
from burnqed_core.lean.pool import InfraFailure
from burnqed_core.lean.types import Diagnostic, Status


def nets(fields: list[str]) -> str:
    return "".join(f"{len(f)}:{f}" for f in fields)


def info(text: str) -> Diagnostic:
    return Diagnostic(severity=3, line=0, end_line=0, message=text)


def test_parse_answers() -> None:
    ans = info("N" + nets(["v1", "M", "Init.Prelude", "", "M", "Init.Coe", "Init.Prelude", "end"]))
    assert parse_modules([ans], "N") == {"Init.Prelude": [], "Init.Coe": ["Init.Prelude"]}
    body = ["v1", "M", "A", "5", "T", "A.t", "1", "7", "∀ x, x = x", "(P S (Eq #0 #0))", "Init.Prelude Init.Core",
            "C", "name", "1", "C", "size", "1", "C", "instance", "0", "N", "B", "end"]
    scans, missing = parse_library([info("N" + nets(body))], "N")
    assert missing == ["B"] and len(scans) == 1
    s = scans[0]
    assert (s.module, s.constants, s.skipped) == ("A", 5, {"name": 1, "size": 1})
    t = s.theorems[0]
    assert (t.name, t.universes, t.size, t.type_modules) == ("A.t", 1, 7, ["Init.Core", "Init.Prelude"])
    with pytest.raises(ReportError):  # cut inside an entry
        parse_library([info("N" + nets(["v1", "M", "A", "5", "T", "A.t", "end"]))], "N")
    with pytest.raises(Exception, match="answered 0 times"):  # another nonce's answer is not this one's
        parse_modules([info("X" + nets(["v1", "end"]))], "N")
    with pytest.raises(ValueError):
        library_command("n", ["A"], 0)


class Lean:
    """Answers `burnqed_library` as the header does, except for the module ``bad`` (no answer: the pool's
    timeout)."""

    def __init__(self, bad: str) -> None:
        self.bad = bad
        self.calls: list[list[str]] = []

    async def check_source(self, text: str, timeout_s: float | None = None) -> list[Diagnostic]:
        nonce, mods = re.match(r'burnqed_library "([^"]+)" \d+ (.*)', text).groups()  # type: ignore[union-attr]
        mods_l = mods.split()
        self.calls.append(mods_l)
        if self.bad in mods_l:
            raise InfraFailure(Status.TIMEOUT, "Lean gave no answer in 900.0s")
        fields = ["v1"]
        for m in mods_l:
            if m == "Missing":
                fields += ["N", m]
            else:
                fields += ["M", m, "1", "T", f"{m}.t", "0", "3", "True", "True", "Init.Prelude"]
        return [info(nonce + nets([*fields, "end"]))]


async def test_a_module_without_answer_is_recorded_not_dropped() -> None:
    lean = Lean(bad="C")
    scans = await scan_modules(lean, ["A", "B", "C", "D", "E"], 48, chunk=4)
    assert [s.module for s in scans] == ["A", "B", "C", "D", "E"]
    c = next(s for s in scans if s.module == "C")
    assert c.error and not c.theorems
    assert all(s.theorems and not s.error for s in scans if s.module != "C")
    assert lean.calls == [["A", "B", "C", "D"], ["A"], ["B"], ["C"], ["D"], ["E"]]
    with pytest.raises(MissingModules):
        await scan_modules(Lean(bad="-"), ["A", "Missing"], 48)
