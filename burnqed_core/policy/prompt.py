"""The one prompt format used by training, generation and tests.

DeepSeek-Prover-native: the tactic state is a Lean block comment inside a
``lean4`` code fence; the tactic is the completion after the closing fence
(seed 002, gotchas 13/14). No special tokens. Training masks the loss so that
only the completion (tactic + end-of-sequence) is learned: `split_point`
gives the character offset where the completion starts.
"""

from __future__ import annotations

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


def format_prompt(state: str) -> str:
    """The prompt for a proof state (goals text)."""
    return f"{INSTRUCTION}{FENCE_OPEN}/- tactic state:\n{_escape_state(state)}\n{RESPONSE_TEMPLATE}"


def normalize_tactic(tactic: str) -> str:
    """Canonical text of a tactic: trailing spaces and blank lines removed,
    surrounding whitespace stripped (inner indentation of multi-line tactics kept)."""
    lines = [line.rstrip() for line in tactic.strip().splitlines()]
    return "\n".join(line for line in lines if line)


def format_completion(tactic: str) -> str:
    """The completion text for a tactic (the tokenizer's EOS is appended by the caller)."""
    return normalize_tactic(tactic)


def format_example(state: str, tactic: str) -> tuple[str, str]:
    """(prompt, completion) of a training example."""
    return format_prompt(state), format_completion(tactic)


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
