"""The one prompt format used by training, generation and tests.

DeepSeek-Prover-native: the tactic state is a Lean block comment inside a
``lean4`` code fence; the tactic is the completion after the closing fence
(seed 002, gotchas 13/14). No special tokens. Training masks the loss so that
only the completion (tactic + end-of-sequence) is learned: `split_point`
gives the character offset where the completion starts.

A model trained with premises (`PromptFormat.premises` > 0, issue 65) also
sees, before the state, a comment of the premises retrieved for it under the
premise rule, one ``name : type`` per line (ReProver's format, the type cut:
`burnqed_core.premises.records.Premise.prompt_line`), so that it can copy a
lemma's name from its prompt; with canonical premise names it refers to one by its place
(`burnqed_core.data.pairs.premise_refs`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.pairs.local_names import LocalNames, canonicalize, canonicalize_pair, restore
from burnqed_core.data.pairs.numerals import Numerals, canonicalize_numerals, canonicalize_numerals_pair
from burnqed_core.data.pairs.premise_refs import PremiseNames, reference_premises, reference_premises_pair

PROMPT_VERSION = "deepseek-tactic-comment-v1"
INSTRUCTION = "Complete the following Lean 4 code:\n\n"
FENCE_OPEN = "```lean4\n"
FENCE_CLOSE = "```\n"
# What the completion follows: the closing fence, then the tactic.
RESPONSE_TEMPLATE = "-/\n" + FENCE_CLOSE


def _escape_state(state: str) -> str:
    # A "-/" inside the state would close the comment early; Lean goal text
    # never needs it, so break it visibly but reversibly.
    return state.strip("\n").replace("-/", "- /")


def premises_block(premises: Sequence[str]) -> str:
    """The comment of premise lines before the state (empty without premises)."""
    lines = [_escape_state(" ".join(p.split())) for p in premises if p.strip()]
    return "/- premises:\n" + "\n".join(lines) + "\n-/\n" if lines else ""


def format_prompt(state: str, premises: Sequence[str] = ()) -> str:
    """The prompt for a proof state (goals text), after the premise lines when given."""
    return (f"{INSTRUCTION}{FENCE_OPEN}{premises_block(premises)}/- tactic state:\n{_escape_state(state)}\n"
            f"{RESPONSE_TEMPLATE}")


def normalize_tactic(tactic: str) -> str:
    """Canonical text of a tactic: trailing spaces and blank lines removed,
    surrounding whitespace stripped (inner indentation of multi-line tactics kept)."""
    lines = [line.rstrip() for line in tactic.strip().splitlines()]
    return "\n".join(line for line in lines if line)


def format_completion(tactic: str) -> str:
    """The completion text for a tactic (the tokenizer's EOS is appended by the caller)."""
    return normalize_tactic(tactic)


def format_example(state: str, tactic: str, premises: Sequence[str] = ()) -> tuple[str, str]:
    """(prompt, completion) of a training example."""
    return format_prompt(state, premises), format_completion(tactic)


def split_point(text: str) -> int:
    """Offset in a full example text where the completion begins."""
    i = text.rfind(RESPONSE_TEMPLATE)
    if i < 0:
        raise ValueError("text does not contain the prompt's response template")
    return i + len(RESPONSE_TEMPLATE)


def parse_completion(text: str) -> str:
    """The tactic in a raw generated completion: text up to a closing fence or
    a new prompt, normalised."""
    for stop in ("```", INSTRUCTION.strip()):
        j = text.find(stop)
        if j >= 0:
            text = text[:j]
    return normalize_tactic(text)


#: The file in a model directory that says how the model was trained to be prompted (`PromptFormat`).
PROMPT_FILE = "burnqed_prompt.json"


class PromptFormat(BaseModel):
    """How states are shown to one model: the prompt above, with the goal's local names as Lean printed
    them or made canonical (`burnqed_core.data.pairs.local_names`), and its numerals as printed or as
    placeholders (`burnqed_core.data.pairs.numerals`). A model is trained and prompted with ONE format:
    training writes it into the model directory (`PROMPT_FILE`), every policy reads it from there, and
    records that depend on the text (EBM embeddings, run records) carry its `version`."""

    model_config = ConfigDict(frozen=True)
    local_names: LocalNames = "as_printed"
    numerals: Numerals = "as_printed"
    premises: int = Field(0, ge=0, description="premise lines shown before the state (0: none, the plain prompt)")
    premise_names: PremiseNames = Field("as_printed", description="the shown premises named in a tactic as "
                                        "printed, or by references p1, p2, ... (mapped back)")

    @property
    def plain(self) -> bool:
        """True when the prompt shows the state as printed (nothing to map back in a tactic)."""
        return (self.local_names == "as_printed" and self.numerals == "as_printed"
                and (self.premise_names == "as_printed" or not self.premises))

    @property
    def version(self) -> str:
        v = PROMPT_VERSION if self.local_names == "as_printed" else f"{PROMPT_VERSION}+canonical-names"
        v = v if self.numerals == "as_printed" else f"{v}+canonical-numerals"
        if not self.premises:
            return v
        v = f"{v}+premises-{self.premises}"
        return v if self.premise_names == "as_printed" else f"{v}+premise-refs"

    def shown(self, premises: Sequence[str]) -> list[str]:
        """The premise lines this format shows: the first `premises` of them (none when 0)."""
        return list(premises[:self.premises]) if self.premises else []

    def prompt(self, state: str, premises: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
        """(the prompt for a state, the mapping that `restore` needs for its tactics); ``premises``: the lines
        retrieved for it, of which the format shows its first `premises`."""
        back: dict[str, str] = {}
        if self.local_names == "canonical":
            state, back = canonicalize(state)
        if self.numerals == "canonical":
            state, lits = canonicalize_numerals(state)   # placeholders are fresh in the renamed state
            back = {**back, **lits}
        lines = self.shown(premises)
        if lines and self.premise_names == "canonical":
            lines, refs = reference_premises(state, lines)
            back = {**back, **refs}
        return format_prompt(state, lines), back

    def prompt_text(self, state: str) -> str:
        return self.prompt(state)[0]

    def example(self, state: str, tactic: str, premises: Sequence[str] = ()) -> tuple[str, str]:
        """(prompt, completion) of a training example."""
        if self.local_names == "canonical":
            state, tactic = canonicalize_pair(state, tactic)
        if self.numerals == "canonical":
            state, tactic = canonicalize_numerals_pair(state, tactic)
        lines = self.shown(premises)
        if lines and self.premise_names == "canonical":
            lines, tactic = reference_premises_pair(state, tactic, lines)
        return format_example(state, tactic, lines)

    @staticmethod
    def restore(tactic: str, back: Mapping[str, str]) -> str:
        """A generated tactic in the goal's own names and numerals."""
        return restore(tactic, back)

    def save(self, model_dir: str | Path) -> None:
        Path(model_dir, PROMPT_FILE).write_text(json.dumps(self.model_dump()) + "\n", encoding="utf-8")

    @classmethod
    def of_model(cls, model_dir: str | Path | None, default: PromptFormat | None = None) -> PromptFormat:
        """The format a model directory records; ``default`` (names as printed) when it records none
        (a model from a hub, a remote server's model)."""
        path = Path(model_dir, PROMPT_FILE) if model_dir else None
        if path is None or not path.is_file():
            return default or PLAIN
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ValueError(f"{path}: not a prompt format record ({e})") from None


PLAIN = PromptFormat()


def format_of(policy: object) -> PromptFormat:
    """The prompt format a policy prompts its model with (names as printed for a policy that has none)."""
    fmt = getattr(policy, "prompt_format", None)
    return fmt if isinstance(fmt, PromptFormat) else PLAIN
