"""LocalPolicy on a real tiny Llama built and briefly trained here.

The model learns six (state, tactic) pairs for a few dozen steps: enough
that it ends completions with EOS at different lengths (so masking after
EOS matters) while sampling at T=1 still varies.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
import torch

from burnqed_core.config import load_profile
from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Candidate, Policy, TacticScorer, dedup_candidates
from burnqed_core.policy.factory import make_policy
from burnqed_core.policy.local import LocalPolicy
from tests.fixtures_models import fine_tune_tiny

PAIRS = [
    ("n : Nat\n⊢ n + 0 = n", "simp"),
    ("a b : Nat\n⊢ a + b = b + a", "omega"),
    ("p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", "exact ⟨hp, hq⟩"),
    ("⊢ True", "trivial"),
    ("xs : List Nat\n⊢ xs ++ [] = xs", "simp"),
    ("n : Nat\n⊢ 0 + n = n", "induction n with\n| zero => rfl\n| succ k ih => omega"),
]
STATES = [s for s, _ in PAIRS]


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("policy_model")
    fine_tune_tiny(tiny_model_dir, out, PAIRS, steps=30)
    return out


@pytest.fixture(scope="module")
def policy(model_dir: Path) -> LocalPolicy:
    return LocalPolicy(model_dir, batch_size=16, max_new_tokens=20, seed=1)


def _teacher_forced(policy: LocalPolicy, state: str, completion: list[int]) -> float:
    """Sum of raw-logit logprobs of ``completion`` after the prompt, one unpadded forward pass."""
    prompt = policy._encode_text(format_prompt(state))
    ids = torch.tensor([prompt + completion])
    with torch.inference_mode():
        logits = policy.model(input_ids=ids).logits[0].float()
    lp = torch.log_softmax(logits, dim=-1)
    return float(sum(lp[len(prompt) - 1 + k, t] for k, t in enumerate(completion)))


def test_is_a_policy_and_shapes(policy: LocalPolicy) -> None:
    assert isinstance(policy, Policy)
    out = asyncio.run(policy.generate(STATES, 5, 1.0))
    assert len(out) == len(STATES)
    for per in out:
        assert len(per) == 5
        for c in per:
            assert isinstance(c, Candidate)
            assert 1 <= c.num_tokens <= 20
            assert c.logprob <= 0.0
    assert asyncio.run(policy.generate([], 3, 1.0)) == []


def test_logprobs_equal_teacher_forced_recompute_from_raw_logits(policy: LocalPolicy) -> None:
    # T=0.7: scores after temperature would differ from the raw-logit logprobs.
    samples = policy.sample_sync(STATES, 3, 0.7)
    checked = 0
    for state, per in zip(STATES, samples, strict=True):
        for s in per:
            assert s.logprob == pytest.approx(_teacher_forced(policy, state, s.token_ids), abs=2e-4)
            checked += 1
    assert checked == 18


def test_score_is_the_logprob_of_the_trained_tactic_and_ranks_it_first(policy: LocalPolicy) -> None:
    """`LocalPolicy.score` (search.rank 'policy'): a greedy sample that ended with EOS scores what generation
    gave it (its own tokens re-tokenised), and for each trained pair the trained tactic outranks the others'
    tactics; a batch scores each row as it does alone."""
    assert isinstance(policy, TacticScorer)
    greedy = policy.sample_sync(STATES, 1, 0.0)
    tactics = [t for _, t in PAIRS]
    scores = asyncio.run(policy.score(STATES, [tactics] * len(STATES)))
    compared = 0
    for i, (state, per) in enumerate(zip(STATES, greedy, strict=True)):
        s = per[0]
        if s.token_ids and s.token_ids[-1] in policy.eos_ids and "```" not in s.tactic:
            (alone,) = policy.score_sync([state], [[s.tactic]])
            assert alone[0] == pytest.approx(s.logprob, abs=1e-3)
            compared += 1
        row = scores[i]
        assert all(x <= 0.0 for x in row)
        if " " not in tactics[i]:  # the one-word tactics are learned in 30 steps: each is its state's best
            assert row[i] == max(row)
            assert sorted(row)[-2] < row[i] or tactics[row.index(sorted(row)[-2])] == tactics[i]
        assert policy.score_sync([state], [[tactics[0]]])[0][0] == pytest.approx(row[0], abs=1e-4)
    assert compared >= 3
    with pytest.raises(ValueError, match="for 2 states"):
        policy.score_sync(STATES[:2], [tactics])


def test_tokens_after_eos_are_masked(policy: LocalPolicy) -> None:
    samples = policy.sample_sync(STATES, 4, 1.0, max_new_tokens=20)
    eos = policy.eos_ids
    lengths = set()
    for per in samples:
        for s in per:
            # EOS, if present, is the last counted token: nothing after it is counted.
            assert all(t not in eos for t in s.token_ids[:-1])
            lengths.add(len(s.token_ids))
            if s.token_ids[-1] in eos:
                assert "</s>" not in s.tactic and "<pad>" not in s.tactic
    ended = [s for per in samples for s in per if s.token_ids[-1] in eos]
    # Rows of different lengths shared a batch, so short rows were padded after EOS.
    assert ended and len(lengths) > 1


def test_greedy_batched_equals_one_state_at_a_time(policy: LocalPolicy) -> None:
    batched = policy.generate_sync(STATES, 2, 0.0)
    for state, per in zip(STATES, batched, strict=True):
        assert len(per) == 2 and per[0] == per[1]
        alone = policy.generate_sync([state], 1, 0.0)[0][0]
        assert alone.tactic == per[0].tactic
        assert alone.num_tokens == per[0].num_tokens
        assert alone.logprob == pytest.approx(per[0].logprob, abs=1e-4)
    # Most trained pairs come back under greedy decoding (the prompt format round-trips).
    assert sum(per[0].tactic == t for per, (_, t) in zip(batched, PAIRS, strict=True)) >= 4


def test_chunking_does_not_change_greedy_results(model_dir: Path, policy: LocalPolicy) -> None:
    small = LocalPolicy(model_dir, batch_size=1, max_new_tokens=20)
    a = policy.generate_sync(STATES, 1, 0.0)
    b = small.generate_sync(STATES, 1, 0.0)
    assert [c[0].tactic for c in a] == [c[0].tactic for c in b]


def test_deterministic_given_seed(model_dir: Path) -> None:
    a = LocalPolicy(model_dir, max_new_tokens=10, seed=7)
    b = LocalPolicy(model_dir, max_new_tokens=10, seed=7)
    ra = [a.generate_sync(STATES, 2, 1.3) for _ in range(2)]
    rb = [b.generate_sync(STATES, 2, 1.3) for _ in range(2)]
    assert ra == rb
    # Successive calls draw new samples (the seed advances per call).
    assert ra[0] != ra[1]


def test_prompt_truncated_from_the_left_keeps_bos_and_goal(model_dir: Path) -> None:
    p = LocalPolicy(model_dir, max_prompt_tokens=24, max_new_tokens=4)
    long_state = "h : " + " ∧ ".join(f"x{i} = {i}" for i in range(200)) + "\n⊢ True"
    ids = p._encode_text(format_prompt(long_state))
    assert len(ids) == 24 and ids[0] == p.bos_id
    assert p.tokenizer.decode(ids[1:]).endswith(format_prompt(long_state)[-12:])
    out = p.generate_sync([long_state], 2, 1.0)
    assert len(out[0]) == 2


def test_encode_shape_and_padding_invariance(policy: LocalPolicy) -> None:
    texts = ["⊢ True", "n : Nat\n⊢ n + 0 = n\n" * 5, "a"]
    vecs = asyncio.run(policy.encode(texts))
    assert len(vecs) == 3 and all(len(v) == policy.hidden_size == 64 for v in vecs)
    assert all(math.isfinite(x) for v in vecs for x in v)
    for t, v in zip(texts, vecs, strict=True):
        alone = policy.encode_sync([t])[0]
        assert max(abs(x - y) for x, y in zip(alone, v, strict=True)) < 1e-5
    assert max(abs(x - y) for x, y in zip(vecs[0], vecs[2], strict=True)) > 1e-3


def test_dedup_of_generated_candidates(policy: LocalPolicy) -> None:
    per = policy.generate_sync([STATES[0]], 8, 1.0)[0]
    unique = dedup_candidates(per)
    assert 1 <= len(unique) <= len(per)
    keys = [" ".join(c.tactic.split()) for c in unique]
    assert len(set(keys)) == len(keys)
    assert [c.logprob for c in unique] == sorted((c.logprob for c in unique), reverse=True)
    for c in unique:  # each kept candidate is the best of its duplicates
        same = [d.logprob for d in per if " ".join(d.tactic.split()) == " ".join(c.tactic.split())]
        assert c.logprob == max(same)


def test_missing_model_dir_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no model"):
        LocalPolicy(tmp_path / "nope")


def test_factory_builds_local_policy(model_dir: Path) -> None:
    profile = load_profile("tiny", overrides={"policy.max_new_tokens": 8})
    p = make_policy(profile, model_path=model_dir)
    assert isinstance(p, LocalPolicy) and p.max_new_tokens == 8
    with pytest.raises(PolicyError, match="no model"):
        make_policy(profile)


def test_model_generation_config_does_not_narrow_sampling(model_dir: Path, tmp_path: Path) -> None:
    """A hub model's generation_config.json (here top_k=1, i.e. greedy in
    disguise) must not change the sampling distribution."""
    import shutil

    from transformers import GenerationConfig

    d = tmp_path / "m"
    shutil.copytree(model_dir, d)
    GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=0, do_sample=True, temperature=0.1, top_k=1,
                     repetition_penalty=5.0).save_pretrained(d)
    p = LocalPolicy(d, max_new_tokens=8, seed=3)
    per = p.generate_sync([STATES[3]] * 4, 4, 1.5)
    assert len({c.tactic for cs in per for c in cs}) > 1


def test_seeded_samples_depend_only_on_state_and_seed(model_dir: Path, policy: LocalPolicy) -> None:
    """Per-state seeds: the same samples (tokens and logprobs, byte for byte)
    whatever the other states of the call, the call order, the batch size or
    the policy object; another seed samples differently; logprobs stay the
    raw-logit ones."""
    seeds = [101, 202, 303, 404, 505, 606]
    a = policy.sample_sync(STATES, 4, 0.8, seeds=seeds)
    policy.sample_sync(STATES[:2], 3, 1.0)  # an unseeded call in between advances nothing that matters
    other = LocalPolicy(model_dir, batch_size=3, max_new_tokens=20, seed=99)
    b = other.sample_sync([STATES[4], STATES[1]], 4, 0.8, seeds=[505, 202])
    assert b == [a[4], a[1]]
    assert policy.sample_sync(STATES[1:2], 4, 0.8, seeds=[203]) != [a[1]]
    for state, per in zip(STATES[:2], a[:2], strict=True):
        for s in per:
            assert s.logprob == pytest.approx(_teacher_forced(policy, state, s.token_ids), abs=2e-4)
    assert len({tuple(s.token_ids) for per in a for s in per}) > len(STATES)  # samples differ within a state


def test_async_inference_runs_with_its_own_thread_count_and_leaves_others_alone(model_dir: Path) -> None:
    """``cpu_threads``: the async methods run in a worker thread with that many intra-op threads (seen from
    inside the model's forward), the count is restored after, the calling thread's never changes, and the
    samples are those of torch's default count (scores and vectors to rounding)."""
    seen: list[int] = []
    one = LocalPolicy(model_dir, max_new_tokens=10, seed=3, cpu_threads=1)
    default = LocalPolicy(model_dir, max_new_tokens=10, seed=3)
    hook = one.model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)

        async def calls(p: LocalPolicy) -> tuple[object, object, object]:
            return (await p.generate(STATES[:3], 2, 1.0), await p.score(STATES[:2], [["simp"], ["omega"]]),
                    await p.encode(STATES[:2]))

        got, want = asyncio.run(calls(one)), asyncio.run(calls(default))
        assert torch.get_num_threads() == 2
    finally:
        hook.remove()
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}
    # the same samples; the floats agree to rounding (a sum split over two threads adds in another order)
    assert [[c.tactic for c in per] for per in got[0]] == [[c.tactic for c in per] for per in want[0]]
    assert torch.allclose(torch.tensor([c.logprob for per in got[0] for c in per]),
                          torch.tensor([c.logprob for per in want[0] for c in per]), rtol=1e-5)
    assert torch.allclose(torch.tensor(got[1]), torch.tensor(want[1]), rtol=1e-5)
    assert torch.allclose(torch.tensor(got[2]), torch.tensor(want[2]), atol=1e-5)
    assert load_profile("tiny").policy.cpu_threads == 1
