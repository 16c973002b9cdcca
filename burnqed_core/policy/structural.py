"""The structural policy: baseline (c) is the search with it instead of a learned policy
(`burnqed_core.eval.baselines.structural`).

`StructuralPolicy` proposes, for each state, the structural steps a person
would try first, read off the main goal as Lean printed it: ``intro`` the
binders of a ``∀``/``→`` target, ``induction x`` and ``cases x`` on each data
variable (``induction x generalizing y`` with each other one),
``fun_induction f`` on each function the goal applies that is not a variable
or a library name, ``cases h`` on a hypothesis that is a conjunction,
disjunction or existential, ``constructor``/``left``/``right`` on a
connective target and ``split`` on an ``if``/``match`` in it. Nothing is
learned: with the search's automation candidates (``search.automation``)
this is the same engine and budget as the prover, with the policy replaced by
an enumerator, so what the learned policy adds over structural steps plus
automation is the difference between the two evals.

Every candidate gets the same logprob (uniform over the state's list), so
the best-first order is breadth-first by depth, as for `FixedTacticsPolicy`.
With ``seeded`` (baseline (c) read at pass@k: k searches, as the prover's)
each state's steps come in an order drawn from its expansion seed, so that
the k searches differ in which equal-priority node they expand first and in
which steps a list longer than the limit keeps.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Candidate, check_seeds

# A hypothesis line: names (inaccessible ones end in ✝), " : ", its type.
_HYP = re.compile(r"^(?P<names>[^\s:][^:]*?) : (?P<type>.*)$")
_IDENT = re.compile(r"[A-Za-z_\u03b1-\u03c9][\w'\u2080-\u2089\u03b1-\u03c9.]*")
_NAME = re.compile(r"^[A-Za-z_\u03b1-\u03c9][\w'\u2080-\u2089\u03b1-\u03c9]*$")
# Symbols whose presence makes a hypothesis's type a proposition.
_PROP_SYMBOLS = ("=", "≠", "≤", "<", "≥", ">", "∧", "∨", "¬", "→", "↔", "∣", "∈", "∉", "⊆", "∀", "∃")
_SORTS = ("Prop", "Type", "Sort")
_KEYWORDS = frozenset({
    "fun", "if", "then", "else", "match", "with", "let", "have", "show", "from", "by", "do", "in", "at",
    "true", "false", "True", "False", "some", "none", "id",
})


@dataclass
class Goal:
    """The main goal of a state, as Lean printed it."""

    data: list[str] = field(default_factory=list)   # variables of a data type, in order
    props: list[tuple[str, str]] = field(default_factory=list)  # (name, type) of hypotheses
    target: str = ""


def main_goal(state: str) -> Goal:
    """Parse the first goal of a state text (goals are separated by blank
    lines; ``case`` tags and inaccessible names are skipped)."""
    first = state.strip().split("\n\n")[0]
    goal = Goal()
    target_lines: list[str] = []
    for line in first.splitlines():
        if line.startswith("⊢"):
            target_lines.append(line[1:].strip())
            continue
        if target_lines:  # a continuation of the target
            target_lines.append(line.strip())
            continue
        if line.startswith("case ") or line.startswith(" "):
            continue
        m = _HYP.match(line)
        if not m:
            continue
        names = [n for n in m["names"].split() if _NAME.match(n)]
        typ = m["type"].strip()
        if any(typ.startswith(s) for s in _SORTS) or typ.startswith("inst"):
            continue
        if any(sym in typ for sym in _PROP_SYMBOLS):
            goal.props += [(n, typ) for n in names]
        else:
            goal.data += names
    goal.target = " ".join(target_lines)
    return goal


def _binders(target: str) -> list[str]:
    """Names bound by a leading ``∀ ...,`` of the target."""
    if not target.startswith("∀"):
        return []
    head = target[1:].split(",", 1)[0]
    names: list[str] = []
    for part in re.split(r"[()\[\]{}⦃⦄]", head):
        before = part.split(":", 1)[0]
        names += [n for n in before.split() if _NAME.match(n)]
    return names


def _applied_functions(goal: Goal) -> list[str]:
    """Bare lowercase names the goal applies to an argument that are not
    variables or keywords: the user's functions (``fun_induction`` targets)."""
    text = " ".join([goal.target, *(t for _, t in goal.props)])
    out: list[str] = []
    known = set(goal.data) | {n for n, _ in goal.props}
    for m in re.finditer(r"(?<![.\w])([a-z][\w']*)\s+(?=[\w(])", text):
        name = m.group(1)
        if name in known or name in _KEYWORDS or name in out:
            continue
        out.append(name)
    return out


def structural_steps(state: str, limit: int = 24) -> list[str]:
    """The structural steps for the main goal of ``state``, at most ``limit``."""
    goal = main_goal(state)
    t = goal.target
    steps: list[str] = []
    if names := _binders(t):
        steps.append("intro " + " ".join(names))
    elif "→" in t:
        steps.append("intro h")
    for x in goal.data:
        steps += [f"induction {x}", f"cases {x}"]
        steps += [f"induction {x} generalizing {y}" for y in goal.data if y != x]
    steps += [f"fun_induction {f}" for f in _applied_functions(goal)]
    for h, typ in goal.props:
        if typ.startswith("∃") or "∧" in typ or "∨" in typ:
            steps.append(f"cases {h}")
    if t.startswith("∃") or "∧" in t or "↔" in t:
        steps.append("constructor")
    if "∨" in t:
        steps += ["left", "right"]
    if "if " in t or "match " in t:
        steps.append("split")
    return list(dict.fromkeys(steps))[:limit]


class StructuralPolicy:
    """`structural_steps` of every state, uniform logprobs (``policy.backend:
    structural``: baseline (c))."""

    name = "structural"

    def __init__(self, limit: int = 24, *, seeded: bool = False) -> None:
        if limit < 1:
            raise PolicyError("the structural policy needs a limit of at least one step")
        self.limit = limit
        self.seeded = seeded

    async def generate(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
    ) -> list[list[Candidate]]:
        """Every structural step of each state (``n``, ``temperature`` and
        ``max_new_tokens`` do not apply); with ``seeded`` and ``seeds``, in an
        order drawn from each state's seed (the same seed, the same order),
        else in their fixed order."""
        check_seeds(states, seeds)
        out = []
        for i, state in enumerate(states):
            if self.seeded and seeds is not None:
                steps = structural_steps(state, limit=10 ** 6)
                random.Random(seeds[i]).shuffle(steps)
                steps = steps[:self.limit]
            else:
                steps = structural_steps(state, self.limit)
            lp = -math.log(len(steps)) if steps else 0.0
            out.append([Candidate(tactic=s, logprob=lp, num_tokens=1) for s in steps])
        return out

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        raise PolicyError("the structural policy has no encoder: run the EBM with a model policy")

    async def close(self) -> None:
        return None
