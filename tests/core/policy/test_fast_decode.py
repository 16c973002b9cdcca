"""The hand-written Llama decode loop (`fast_decode`) against ``model.generate``.

Same tiny model as tests/core/policy/test_local.py (a few dozen steps on six
pairs, so that completions end with EOS at different lengths), plus the
untrained fixture model for long, full-length generations.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from burnqed_core.policy.fast_decode import LlamaDecoder, StopTable, sample_rows, supports
from burnqed_core.policy.local import LocalPolicy
from tests.core.policy.test_local import PAIRS, STATES, _teacher_forced
from tests.fixtures_models import fine_tune_tiny

OTHER_STATES = [
    "x y : Nat\nh : x = y\n⊢ y = x",
    "p : Prop\n⊢ p → p",
    "⊢ 2 + 2 = 4",
    "xs ys : List Nat\n⊢ (xs ++ ys).length = xs.length + ys.length",
    "b : Bool\n⊢ (!!b) = b",
]


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fast_decode_model")
    fine_tune_tiny(tiny_model_dir, out, PAIRS, steps=30)
    return out


def test_fast_decoder_is_used_for_the_tiny_llama_and_can_be_turned_off(model_dir: Path) -> None:
    fast = LocalPolicy(model_dir, max_new_tokens=8)
    slow = LocalPolicy(model_dir, max_new_tokens=8, fast_decode=False)
    assert supports(fast.model) is None
    assert isinstance(fast._decoder, LlamaDecoder) and slow._decoder is None


@pytest.mark.parametrize("which", ["trained", "untrained"])
def test_fast_greedy_equals_generate_greedy(which: str, model_dir: Path, tiny_model_dir: Path) -> None:
    """Same tokens, same cut, same logprobs (to float rounding) as the
    transformers ``generate`` path, batched over prompts of different lengths."""
    d = model_dir if which == "trained" else tiny_model_dir
    fast = LocalPolicy(d, batch_size=16, max_new_tokens=20)
    ref = LocalPolicy(d, batch_size=16, max_new_tokens=20, fast_decode=False)
    states = STATES + OTHER_STATES
    a = fast.sample_sync(states, 1, 0.0)
    b = ref.sample_sync(states, 1, 0.0)
    assert [[s.token_ids for s in per] for per in a] == [[s.token_ids for s in per] for per in b]
    assert [[s.tactic for s in per] for per in a] == [[s.tactic for s in per] for per in b]
    for pa, pb in zip(a, b, strict=True):
        assert pa[0].logprob == pytest.approx(pb[0].logprob, abs=1e-4)
    if which == "untrained":  # random weights: every row runs the full 20 tokens
        assert sum(len(per[0].token_ids) == 20 for per in a) >= len(states) // 2
    else:
        assert sum(per[0].tactic == t for per, (_, t) in zip(a[: len(PAIRS)], PAIRS, strict=True)) >= 4


def test_fast_sampled_logprobs_are_raw_logit_teacher_forced(model_dir: Path) -> None:
    p = LocalPolicy(model_dir, batch_size=16, max_new_tokens=20)
    assert p._decoder is not None
    samples = p.sample_sync(STATES, 3, 0.7, seeds=[1, 2, 3, 4, 5, 6])
    for state, per in zip(STATES, samples, strict=True):
        for s in per:
            assert s.logprob == pytest.approx(_teacher_forced(p, state, s.token_ids), abs=2e-4)


def test_seeded_batched_samples_are_reproducible_per_row_whatever_the_batch(model_dir: Path) -> None:
    """A state's seeded samples are the same tokens alone, inside a batch of
    other states (other prompt lengths, so other padding), in chunks of
    another size, and on another policy object; logprobs agree to rounding."""
    big = LocalPolicy(model_dir, batch_size=64, max_new_tokens=20, seed=5)
    small = LocalPolicy(model_dir, batch_size=4, max_new_tokens=20, seed=9)
    states = OTHER_STATES + STATES
    seeds = list(range(1000, 1000 + len(states)))
    together = big.sample_sync(states, 4, 0.9, seeds=seeds)
    chunked = small.sample_sync(list(reversed(states)), 4, 0.9, seeds=list(reversed(seeds)))[::-1]
    for i in (0, 5, 7, len(states) - 1):
        alone = big.sample_sync([states[i]], 4, 0.9, seeds=[seeds[i]])[0]
        for runs in (alone, chunked[i]):
            assert [s.token_ids for s in runs] == [s.token_ids for s in together[i]]
            for x, y in zip(runs, together[i], strict=True):
                assert x.logprob == pytest.approx(y.logprob, abs=1e-5)
    # the samples of a state are not all alike, and another seed draws others
    assert len({tuple(s.token_ids) for per in together for s in per}) > len(states)
    assert big.sample_sync([states[0]], 4, 0.9, seeds=[seeds[0] + 1]) != [together[0]]


def test_inverse_cdf_sampling_follows_softmax_over_temperature() -> None:
    torch.manual_seed(0)
    logits = torch.randn(1, 12) * 2
    t = 0.7
    n = 40_000
    u = torch.rand(n)
    toks = sample_rows(logits.expand(n, -1), t, u)
    freq = torch.bincount(toks, minlength=12).float() / n
    probs = torch.softmax(logits[0] / t, dim=-1)
    assert (freq - probs).abs().max() < 0.01
    # greedy-like edge: a uniform of 0 takes the first token with non-zero probability
    assert int(sample_rows(torch.tensor([[-1e9, 0.0, 0.0]]), 1.0, torch.zeros(1))[0]) == 1


def test_stop_table_ends_a_row_on_the_closing_fence_across_tokens(model_dir: Path) -> None:
    p = LocalPolicy(model_dir, max_new_tokens=8)
    tok = p.tokenizer
    table = StopTable(tok, len(tok), p.eos_ids, "```")
    ids = tok("simp ``", add_special_tokens=False)["input_ids"] + tok("`\n", add_special_tokens=False)["input_ids"]
    rows = torch.tensor([ids])
    state = None
    ended_at = None
    for t in range(rows.shape[1]):
        ended, state = table(rows[:, t], state)
        if bool(ended[0]) and ended_at is None:
            ended_at = t
    assert ended_at is not None
    # it ends exactly where the decoded text first contains the fence (what _completion_end cuts at)
    assert p._completion_end(ids) == ended_at + 1
    eos_row = torch.tensor([p.eos_ids[0]])
    assert bool(table(eos_row, None)[0][0])
    assert not bool(table(torch.tensor([ids[0]]), None)[0][0])
