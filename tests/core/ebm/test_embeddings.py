"""The embeddings cache with a real tiny model: one pooling (local = SGLang's),
Parquet parts, resume after SIGKILL of a real subprocess, refusal to mix."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from burnqed_core.config import EBMConfig
from burnqed_core.ebm.embeddings import (
    CacheMeta,
    EmbeddingCache,
    EmbeddingMismatchError,
    encode_states,
    encoder_text,
    model_fingerprint,
    state_key,
)
from burnqed_core.policy.local import LocalPolicy

STATES = [f"n : Nat\n⊢ n + {i} = {i} + n" for i in range(40)]


@pytest.fixture(scope="module")
def policy(tiny_model_dir: Path) -> LocalPolicy:
    return LocalPolicy(tiny_model_dir, batch_size=8)


def test_local_pooling_is_last_token_l2_like_sglang(policy: LocalPolicy) -> None:
    import torch

    assert policy.pooling == "last_l2"
    texts = [encoder_text(s) for s in STATES[:3]]
    vecs = np.array(policy.encode_sync(texts))
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # by hand: the hidden state of the text's own last token (not padding, not EOS), normalised
    ids = policy._encode_text(texts[1])
    assert ids[-1] not in policy.eos_ids
    with torch.inference_mode():
        h = policy.model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0, -1]
    assert np.allclose(vecs[1], (h / h.norm()).numpy(), atol=1e-5)
    mean = LocalPolicy(policy.model_path, pooling="mean").encode_sync(texts[:1])[0]
    assert abs(np.linalg.norm(mean) - 1.0) > 1e-3  # the other pooling really differs


def test_cache_roundtrip_dedup_and_batches(policy: LocalPolicy, tmp_path: Path) -> None:
    fp = model_fingerprint(policy.model_path)
    cache = EmbeddingCache.open(tmp_path / "c", CacheMeta(fingerprint=fp, pooling="last_l2"))
    rep = asyncio.run(encode_states(policy, STATES[:10] + STATES[:5], cache, batch_size=4, checkpoint_every=4))
    assert (rep.states, rep.encoded, rep.cached) == (10, 10, 0)
    assert rep.parts_written == 3 and len(cache.parts()) == 3  # 4 + 4 + 2
    t = pq.read_table(cache.parts()[0])
    assert set(t.column_names) == {"key", "state", "vector", "fingerprint", "pooling"}
    m = cache.matrix([state_key(s) for s in STATES[:10]])
    direct = np.array(policy.encode_sync([encoder_text(s) for s in STATES[:10]]))
    assert m.shape == (10, policy.hidden_size) and np.allclose(m, direct, atol=1e-5)
    rep2 = asyncio.run(encode_states(policy, STATES[:12], cache, batch_size=4, checkpoint_every=4))
    assert (rep2.cached, rep2.encoded) == (10, 2)


def test_mixing_poolings_or_models_is_refused(policy: LocalPolicy, tmp_path: Path) -> None:
    fp = model_fingerprint(policy.model_path)
    cache = EmbeddingCache.open(tmp_path / "c", CacheMeta(fingerprint=fp, pooling="last_l2"))
    asyncio.run(encode_states(policy, STATES[:3], cache))
    with pytest.raises(EmbeddingMismatchError, match="pooling"):
        EmbeddingCache.open(tmp_path / "c", CacheMeta(fingerprint=fp, pooling="mean"))
    with pytest.raises(EmbeddingMismatchError, match="fingerprint"):
        EmbeddingCache.open(tmp_path / "c", CacheMeta(fingerprint="other", pooling="last_l2"))
    mean_policy = LocalPolicy(policy.model_path, pooling="mean")
    with pytest.raises(EmbeddingMismatchError, match="refusing to mix poolings"):
        asyncio.run(encode_states(mean_policy, STATES[3:6], cache))
    # a part smuggled in with another pooling is caught on read
    other = EmbeddingCache(tmp_path / "c", CacheMeta(fingerprint=fp, pooling="mean", dim=cache.meta.dim))
    other.write_part(["k"], ["s"], [[0.0] * int(cache.meta.dim or 0)])
    with pytest.raises(EmbeddingMismatchError, match="refusing to mix"):
        EmbeddingCache.load(tmp_path / "c").keys()


def test_fingerprint_follows_weight_contents(tiny_model_dir: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "m"
    shutil.copytree(tiny_model_dir, copy)
    assert model_fingerprint(copy) == model_fingerprint(tiny_model_dir)
    w = copy / "model.safetensors"
    data = bytearray(w.read_bytes())
    data[-1] ^= 1  # same size, other contents (what fine-tuning does)
    w.write_bytes(bytes(data))
    assert model_fingerprint(copy) != model_fingerprint(tiny_model_dir)


ENCODE_SCRIPT = """
import asyncio, json, sys, time
from burnqed_core.config import EBMConfig
from burnqed_core.ebm.embeddings import CacheMeta, EmbeddingCache, encode_states, model_fingerprint
from burnqed_core.policy.local import LocalPolicy
from tests.core.ebm.test_embeddings import STATES
model, out, mode, log = sys.argv[1:5]
policy = LocalPolicy(model, batch_size=4)
real = policy.encode
async def encode(texts):
    with open(log, "a") as f:
        f.write(json.dumps(texts) + "\\n")
    if mode == "slow":
        await asyncio.sleep(0.3)
    return await real(texts)
policy.encode = encode
cache = EmbeddingCache.open(out, CacheMeta(fingerprint=model_fingerprint(model), pooling="last_l2"))
rep = asyncio.run(encode_states(policy, STATES, cache, batch_size=4, checkpoint_every=8))
print(rep.model_dump_json())
"""


def run_encode(model: Path, out: Path, mode: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3]), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", ENCODE_SCRIPT, str(model), str(out), mode, str(log)], env=env,
                            stdout=subprocess.PIPE)


def test_cache_resumes_after_sigkill_without_reencoding(tiny_model_dir: Path, tmp_path: Path) -> None:
    import json

    out = tmp_path / "cache"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    p = run_encode(tiny_model_dir, out, "slow", first_log)
    deadline = time.time() + 300
    while time.time() < deadline and p.poll() is None and len(list(out.glob("part-*.parquet"))) < 2:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    saved = EmbeddingCache.load(out).keys()
    assert 8 <= len(saved) < len(STATES), "the kill should land mid-run, after some parts"
    p2 = run_encode(tiny_model_dir, out, "fast", second_log)
    stdout, _ = p2.communicate(timeout=300)
    assert p2.returncode == 0
    rep = json.loads(stdout.decode().strip().splitlines()[-1])
    assert rep["cached"] == len(saved) and rep["encoded"] == len(STATES) - len(saved)
    second = [t for line in second_log.read_text().splitlines() for t in json.loads(line)]
    assert not {encoder_text(s) for s in STATES if state_key(s) in saved} & set(second)
    assert len(second) == len(STATES) - len(saved)
    cache = EmbeddingCache.load(out)
    assert cache.keys() == {state_key(s) for s in STATES}
    rows = sum(pq.read_metadata(part).num_rows for part in cache.parts())
    assert rows == len(STATES)  # nothing encoded twice
    assert not list(out.glob(".part-*"))  # no temporary left behind


def test_encode_config_defaults() -> None:
    c = EBMConfig()
    assert c.checkpoint_every >= 1 and c.encode_batch_size >= 1


async def test_sglang_policy_fills_a_last_l2_cache_and_refuses_a_mean_one(tmp_path: Path) -> None:
    """The same cache path on the SGLang backend (its wire format from tests/fake_sglang.py)."""
    from tests.core.policy.test_sglang import policy_for, start_fake

    server = start_fake(tmp_path, is_embedding=True)
    try:
        policy = policy_for(server, batch_size=4)
        policy.is_embedding = True
        assert policy.pooling == "last_l2"
        cache = EmbeddingCache.open(tmp_path / "c", CacheMeta(fingerprint="sglang", pooling=policy.pooling))
        rep = await encode_states(policy, STATES[:10], cache, batch_size=4, checkpoint_every=4)
        assert rep.encoded == 10 and cache.matrix([state_key(s) for s in STATES[:10]]).shape[0] == 10
        mean = EmbeddingCache.open(tmp_path / "m", CacheMeta(fingerprint="sglang", pooling="mean"))
        with pytest.raises(EmbeddingMismatchError, match="refusing to mix poolings"):
            await encode_states(policy, STATES[:2], mean)
        await policy.close()
    finally:
        server.stop()


def test_a_canonical_names_policy_encodes_its_own_prompts_and_refuses_a_plain_cache(tiny_model_dir: Path,
                                                                                   tmp_path: Path) -> None:
    import shutil

    from burnqed_core.data.pairs.prompt import PromptFormat

    canon = PromptFormat(local_names="canonical")
    model = shutil.copytree(tiny_model_dir, tmp_path / "m")
    canon.save(model)
    policy = LocalPolicy(model, batch_size=8)
    # the text encoded for a state is the policy's own prompt: renamed states share one embedding input
    assert encoder_text("xs : List Nat\n⊢ f xs = xs", canon) == encoder_text("ys : List Nat\n⊢ f ys = ys", canon)
    plain = EmbeddingCache.open(tmp_path / "plain", CacheMeta(fingerprint=model_fingerprint(model),
                                                              pooling="last_l2"))
    with pytest.raises(EmbeddingMismatchError, match="text formats"):
        asyncio.run(encode_states(policy, STATES[:2], plain))
    cache = EmbeddingCache.open(tmp_path / "canon", CacheMeta(fingerprint=model_fingerprint(model), pooling="last_l2",
                                                              text_format=canon.version))
    rep = asyncio.run(encode_states(policy, ["xs : List Nat\n⊢ f xs = xs"], cache))
    assert rep.states == 1
    v = asyncio.run(policy.encode([encoder_text("zz : List Nat\n⊢ f zz = zz", canon)]))[0]
    assert cache.matrix([state_key("xs : List Nat\n⊢ f xs = xs")])[0].tolist() == pytest.approx(v, abs=1e-5)
