"""Each Pantograph dialect on wire messages in the real wire format: the ``frontend.process`` request line the
client writes, Pantograph's refusal of a request that lacks a required field, and ``goal.print`` answers with and
without goals. The answers are JSON lines as Pantograph writes them (the refusal text is Lean's derived
``FromJson`` error, `tests/fake_pantograph.py` says where each shape comes from); each request is decoded by the
fake's table of Protocol.lean ``FrontendProcess`` fields of that version."""

from __future__ import annotations

import json

import pytest

from burnqed_core.lean.pantograph import Dialect, ReplError, goals_of_print, render_goals
from tests import fake_pantograph

FP = fake_pantograph.FRONTEND_PROCESS
# `repl --version` -> the fake's table of FrontendProcess fields for it
DIALECTS = {"0.2.19": "0.2", "0.3.0": "0.3.1", "0.3.1": "0.3.1", "0.3.2": "0.3.4", "0.3.4": "0.3.4",
            "0.3.7/v4.21.0": "0.3.4", "0.3.8": "newest"}

# Pantograph 0.3.0 refusing a request without `invocations` (Repl.lean: the derived decoder's error text)
REFUSED_030 = ('{"error": "command", "desc": "Unable to parse json: Pantograph.Protocol.FrontendProcess.invocations: '
               'property not found: invocations"}')
# Pantograph 0.3.4 refusing `invocations: false` (an `Option String` from 0.3.2)
REFUSED_034 = ('{"error": "command", "desc": "Unable to parse json: Pantograph.Protocol.FrontendProcess.invocations?: '
               'String expected"}')
# `goal.print {"stateId": 0, "goals": true}` of a fresh `goal.start {"expr": "∀ n : Nat, n + 0 = n"}` state
PRINT_0219 = "{}"
PRINT_034 = ('{"goals": [{"name": "_uniq.101", "fragment": "tactic", "target": {"pp": "∀ (n : Nat), n + 0 = n"}, '
             '"vars": []}], "extraMVars": [], "rootHasSorry": false, "rootHasUnsafe": false, "rootHasMVar": true}')


def wire_line(dialect: Dialect, **kw: bool) -> str:
    """The request line the client writes (`PantographBackend._call`)."""
    payload = dialect.process_request("theorem x : True := trivial", sorrys=kw.get("sorrys", True),
                                      new_constants=kw.get("new_constants", False))
    return f"frontend.process {json.dumps(payload, ensure_ascii=False)}"


def decodes(line: str, proto: str) -> dict[str, object] | None:
    """Pantograph's answer to the line when it refuses it, None when it decodes."""
    cmd, _, body = line.partition(" ")
    assert cmd == "frontend.process"
    return fake_pantograph.decode_error("FrontendProcess", FP[proto], json.loads(body))


def repl_error(answer: str) -> ReplError:
    obj = json.loads(answer)
    return ReplError(obj["error"], obj["desc"])


@pytest.mark.parametrize(("version", "proto"), DIALECTS.items())
def test_the_request_of_each_dialect_decodes_in_its_version(version: str, proto: str) -> None:
    dialect = Dialect(version)
    line = wire_line(dialect)
    assert decodes(line, proto) is None
    body = json.loads(line.partition(" ")[2])
    # `invocations` is a required Bool up to 0.3.1 (0.3.0 included) and must be absent from 0.3.2
    assert ("invocations" in body) is (proto in ("0.2", "0.3.1"))
    if "invocations" in body:
        assert body["invocations"] is False


def test_pantograph_030_requires_invocations() -> None:
    """0.3.0 refuses a request without ``invocations``; the client's 0.3.0 request has it."""
    without = wire_line(Dialect("0.3.4"))
    assert decodes(without, "0.3.1") == json.loads(REFUSED_030)
    assert json.loads(wire_line(Dialect("0.3.0")).partition(" ")[2])["invocations"] is False


@pytest.mark.parametrize(("guess", "proto", "refusal"), [("0.3.4", "0.3.1", REFUSED_030),
                                                           ("0.3.0", "0.3.4", REFUSED_034)])
def test_a_wrong_guess_is_corrected_once_by_the_refusal(guess: str, proto: str, refusal: str) -> None:
    dialect = Dialect(guess)
    assert decodes(wire_line(dialect), proto) == json.loads(refusal)
    assert dialect.corrected_by(repl_error(refusal))
    assert decodes(wire_line(dialect), proto) is None


@pytest.mark.parametrize("answer", [
    '{"error": "command", "desc": "Unable to parse json: Pantograph.Protocol.FrontendProcess.typeErrorsAsGoals: '
    'property not found: typeErrorsAsGoals"}',
    '{"error": "command", "desc": "Unknown command frontend.proces"}',
    '{"error": "internal", "desc": "interrupt"}',
])
def test_other_error_objects_do_not_change_the_dialect(answer: str) -> None:
    dialect = Dialect("0.3.4")
    assert not dialect.corrected_by(repl_error(answer))
    assert dialect.invocations_bool is False


def test_goal_print_answers_goals_from_v0_2_23() -> None:
    goals = goals_of_print(json.loads(PRINT_034))
    assert goals is not None and render_goals(goals) == ("⊢ ∀ (n : Nat), n + 0 = n",)
    assert goals_of_print(json.loads(PRINT_0219)) is None
    assert goals_of_print({"goals": [], "extraMVars": []}) == []
