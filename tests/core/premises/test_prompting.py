"""Premises in the policy's prompt (issue 65): the format shows the lines retrieved for a state before it (the
plain format is unchanged), training pairs get the lines of their theorem's rule, the trained model records how
many it shows, and the search hands a policy the lines of each expanded state (real tiny models, no Lean)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.config import SearchConfig, TinyModelConfig, TrainingConfig
from burnqed_core.data.pairs.prompt import PLAIN, PROMPT_VERSION, PromptFormat, format_prompt, split_point
from burnqed_core.policy.base import Candidate
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.prompting import PromptPremises, library_pair_lines
from burnqed_core.premises.records import Premise
from burnqed_core.records import TacticPair, Theorem
from burnqed_core.search.engine import SearchEngine
from tests.core.search.test_engine import ToyEnv, thm

LIBRARY = PremiseIndex([Premise(name="List.map_append", module="L", type="List.map f (a ++ b) = List.map f a ++ "
                                "List.map f b"),
                        Premise(name="List.length_append", module="L", type="(a ++ b).length = a.length + b.length"),
                        Premise(name="Nat.add_comm", module="L", type="n + m = m + n")], {"L": []})


def test_the_prompt_shows_premises_only_when_the_format_does() -> None:
    state = "xs ys : List Nat\n⊢ (xs ++ ys).length = ys.length + xs.length"
    lines = ["List.length_append : (a ++ b).length = a.length + b.length", "Nat.add_comm : n + m = m + n", "x : y"]
    assert PLAIN.prompt(state, lines)[0] == PLAIN.prompt(state)[0] == format_prompt(state)
    assert PLAIN.version == PROMPT_VERSION
    two = PromptFormat(premises=2)
    prompt = two.prompt(state, lines)[0]
    assert "/- premises:\nList.length_append : (a ++ b).length" in prompt and "Nat.add_comm" in prompt
    assert "x : y" not in prompt and prompt.index("/- premises:") < prompt.index("/- tactic state:")
    assert two.version == f"{PROMPT_VERSION}+premises-2"
    p, c = two.example(state, "rw [List.length_append]", lines)
    assert split_point(p + c) == len(p) and c == "rw [List.length_append]"


def test_training_pairs_get_their_theorems_lines_and_library_pairs_show_their_own() -> None:
    thm_ = Theorem(name="t", statement="(xs ys : List Nat) : (xs ++ ys).length = ys.length + xs.length")
    shown = PromptPremises(LIBRARY, {"t": thm_}, 2)
    pair = TacticPair(theorem="t", state_before="⊢ (xs ++ ys).length = ys.length + xs.length", tactic="simp",
                      state_after="", depth=0)
    assert shown.of(pair)[0].startswith("List.length_append : ")
    assert shown.of(pair.model_copy(update={"theorem": "unknown"})) == []
    fixed = library_pair_lines(LIBRARY.premises[:1], LIBRARY, 3)
    assert any(line.startswith("List.map_append : ") for line in fixed["List.map_append"])
    assert len(fixed["List.map_append"]) == 3


class PromptSpy:
    """A policy whose model shows two premises: records the lines it is handed."""

    name = "spy"
    prompt_format = PromptFormat(premises=2)

    def __init__(self) -> None:
        self.seen: list[list[str] | None] = []

    async def generate(self, states: Sequence[str], n: int, temperature: float, max_new_tokens: int | None = None,
                       seeds: Sequence[int] | None = None, premises: Sequence[Sequence[str]] | None = None
                       ) -> list[list[Candidate]]:
        assert premises is None or len(premises) == len(states)
        self.seen += [list(p) for p in premises] if premises is not None else [None] * len(states)
        return [[Candidate(tactic="dec", logprob=-0.1, num_tokens=1)] for _ in states]

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.0] for _ in texts]

    async def close(self) -> None: ...


def test_the_search_hands_the_policy_the_lines_of_each_state() -> None:
    index = PremiseIndex([Premise(name="Nat.one_dec", module="L", type="1 = 1")], {"L": []})  # toy states: digits
    spy = PromptSpy()
    out = asyncio.run(SearchEngine(spy, ToyEnv(), SearchConfig(max_nodes=10, frontier_batch=1, concurrency=1),  # type: ignore[arg-type]
                                   premises=index).search(thm(2)))
    assert out.result.proved and spy.seen
    assert all(lines is not None and len(lines) <= 2 for lines in spy.seen)
    # without an index the policy is called without lines
    spy2 = PromptSpy()
    asyncio.run(SearchEngine(spy2, ToyEnv(), SearchConfig(max_nodes=10)).search(thm(2)))  # type: ignore[arg-type]
    assert spy2.seen and all(lines is None for lines in spy2.seen)


def test_a_model_pre_trained_with_premises_records_and_shows_them(tmp_path: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy
    from burnqed_core.training.tiny_model import pretrain_base

    cfg = TrainingConfig(prompt_premises=2, device="cpu", eval_every=1000, save_every=1000,
                         tiny_model=TinyModelConfig(vocab_size=400, hidden_size=64, num_layers=1, num_heads=2,
                                                    num_kv_heads=1, intermediate_size=128,
                                                    max_position_embeddings=512, pretrain_steps=3,
                                                    pretrain_batch_size=2))
    pairs = [TacticPair(theorem="t", state_before=f"⊢ (xs ++ ys).length = {i}", tactic="rw [List.length_append]",
                        state_after="", depth=0) for i in range(6)]
    seen: list[str] = []

    def lines(p: TacticPair) -> list[str]:
        seen.append(p.state_before)
        return ["List.length_append : (a ++ b).length = a.length + b.length"]

    pretrain_base(pairs, cfg, tmp_path / "model", progress=False, premises=lines)
    assert len(seen) >= len(pairs)
    fmt = PromptFormat.of_model(tmp_path / "model")
    assert fmt.premises == 2
    policy = LocalPolicy(tmp_path / "model", device="cpu")
    assert policy.prompt_format.premises == 2
    cands = asyncio.run(policy.generate(["⊢ (a ++ b).length = 0"], 2, 1.0, 8, seeds=[1],
                                        premises=[["List.length_append : (a ++ b).length = a.length + b.length"]]))
    assert len(cands) == 1 and len(cands[0]) == 2
    asyncio.run(policy.close())
