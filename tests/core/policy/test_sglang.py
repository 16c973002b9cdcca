"""Contract tests of the SGLang client, policy and launcher.

The real server needs CUDA, so `tests/fake_sglang.py` stands in: a real HTTP
server process answering with SGLang 0.5.23's JSON shapes, started by the
real launcher (`SglangServer` with ``launch_module = tests.fake_sglang``).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from burnqed_core.config import SglangConfig, load_profile
from burnqed_core.data.pairs.prompt import format_prompt
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Candidate, Policy
from burnqed_core.policy.factory import make_policy
from burnqed_core.policy.launcher import SglangServer
from burnqed_core.policy.sglang import SglangPolicy, WeightSwapError, candidate_from_output, parse_embeddings
from tests import fake_sglang

REPO = Path(__file__).resolve().parents[3]
STATES = [f"n : Nat\n⊢ n + {k} = {k} + n" for k in range(6)]
DEFAULT_SWITCHES = {"fail_503": 0, "stuck": False, "encode_shape": "list", "old_server": False,
                    "weights": "ok", "shuffle": False, "delay_s": 0.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_config(port: int, **kw: Any) -> SglangConfig:
    base: dict[str, Any] = dict(
        url=f"http://127.0.0.1:{port}", port=port, python=sys.executable, launch_module="tests.fake_sglang",
        retries=3, retry_backoff_s=0.01, health_timeout_s=2.0, request_timeout_s=20.0, startup_timeout_s=20.0,
        drain_timeout_s=10.0, max_concurrency=4,
    )
    base.update(kw)
    return SglangConfig(**base)


def fake_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def start_fake(tmp_path: Path, model: str = "/models/iter_0", *, is_embedding: bool = False,
               extra: tuple[str, ...] = (), **cfg_kw: Any) -> SglangServer:
    port = free_port()
    server = SglangServer(fake_config(port, **cfg_kw), model, is_embedding=is_embedding,
                          log_path=tmp_path / f"fake-{port}.log", extra_args=extra, env=fake_env())
    server.start()
    return server


def switch(server: SglangServer, **kw: Any) -> None:
    httpx.post(f"{server.url}/_fake/config", json={**DEFAULT_SWITCHES, **kw}, timeout=5).raise_for_status()


def stats(server: SglangServer) -> dict[str, Any]:
    return httpx.get(f"{server.url}/_fake/stats", timeout=5).json()


def routes(server: SglangServer) -> list[str]:
    return [e["route"] for e in stats(server)["events"]]


@pytest.fixture(scope="module")
def gen_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SglangServer]:
    server = start_fake(tmp_path_factory.mktemp("sglang"))
    yield server
    server.stop()


@pytest.fixture
def server(gen_server: SglangServer) -> SglangServer:
    switch(gen_server)
    return gen_server


@pytest.fixture(scope="module")
def embed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SglangServer]:
    server = start_fake(tmp_path_factory.mktemp("sglang_embed"), is_embedding=True)
    yield server
    server.stop()


def policy_for(server: SglangServer, batch_size: int = 8, **kw: Any) -> SglangPolicy:
    cfg = SglangConfig(**{**server.cfg.model_dump(), **kw})
    return SglangPolicy(cfg, max_new_tokens=32, batch_size=batch_size, server=server)


def allowed(server: SglangServer, state: str) -> list[str]:
    from burnqed_core.data.pairs.prompt import parse_completion

    return [parse_completion(t) for t in fake_sglang.allowed_tactics(server.model_path, format_prompt(state))]


# ----------------------------------------------------------------- generation


async def test_replicated_samples_map_back_by_request_id_even_shuffled(server: SglangServer) -> None:
    switch(server, shuffle=True)
    policy = policy_for(server)
    assert isinstance(policy, Policy)
    out = await policy.generate(STATES, 3, 1.0)
    assert [len(per) for per in out] == [3] * len(STATES)
    for state, per in zip(STATES, out, strict=True):
        assert {c.tactic for c in per} <= set(allowed(server, state))
    # 18 sequences in chunks of 8: three requests, each answered shuffled.
    assert routes(server).count("/generate") >= 3
    await policy.close()


async def test_native_n_reads_the_flat_list_prompt_major(server: SglangServer) -> None:
    policy = policy_for(server, parallel_sampling="native")
    out = await policy.generate(STATES, 4, 1.0)
    assert [len(per) for per in out] == [4] * len(STATES)
    for state, per in zip(STATES, out, strict=True):
        assert {c.tactic for c in per} <= set(allowed(server, state))
    await policy.close()


async def test_greedy_returns_the_greedy_tactic_n_times(server: SglangServer) -> None:
    switch(server, shuffle=True)
    policy = policy_for(server)
    out = await policy.generate(STATES, 3, 0.0)
    for state, per in zip(STATES, out, strict=True):
        assert len(per) == 3 and per[0] == per[1] == per[2]
        assert per[0].tactic == allowed(server, state)[0]
    await policy.close()


async def test_single_prompt_object_logprob_triples_and_finish_reasons(server: SglangServer) -> None:
    policy = policy_for(server)
    body = {"text": format_prompt(STATES[0]), "sampling_params": {"max_new_tokens": 32, "temperature": 0.0},
            "return_logprob": True, "return_text_in_logprobs": True}
    items = await policy.client.generate(body)  # one prompt, n == 1: SGLang answers one object
    assert len(items) == 1
    meta = items[0]["meta_info"]
    triples = meta["output_token_logprobs"]
    assert all(len(t) == 3 for t in triples)
    c = candidate_from_output(items[0])
    assert c.logprob == pytest.approx(sum(t[0] for t in triples)) and c.logprob < 0
    assert c.num_tokens == len(triples) == meta["completion_tokens"]
    assert meta["finish_reason"]["type"] == "stop"
    # Cut by max_new_tokens: finish_reason "length", every generated token counted.
    short = await policy.generate([STATES[0]], 1, 0.0, max_new_tokens=1)
    assert short[0][0].num_tokens == 1
    await policy.close()


async def test_stop_string_is_trimmed_from_the_tactic(server: SglangServer) -> None:
    item = {"text": "trivial\n", "meta_info": {"output_token_logprobs": [[-0.5, 7, None], [-0.25, 9, None]],
                                               "finish_reason": {"type": "stop", "matched": "```"}}}
    c = candidate_from_output(item)
    assert c == Candidate(tactic="trivial", logprob=-0.75, num_tokens=2)
    # and through the server: every candidate of every state is clean of fences
    policy = policy_for(server)
    out = await policy.generate(STATES * 3, 4, 1.5)
    assert all("```" not in c.tactic and c.tactic for per in out for c in per)
    await policy.close()


async def test_unknown_sampling_param_is_a_400_not_retried(server: SglangServer) -> None:
    policy = policy_for(server)
    before = routes(server).count("/generate")
    with pytest.raises(PolicyError, match="HTTP 400"):
        await policy.client.generate({"text": "x", "sampling_params": {"max_tokens": 3}})
    assert routes(server).count("/generate") == before + 1
    await policy.close()


# --------------------------------------------------------- faults and health


async def test_503_burst_is_retried_with_backoff(server: SglangServer) -> None:
    switch(server, fail_503=3)
    policy = policy_for(server, retries=4)
    before = routes(server).count("/generate")
    out = await policy.generate(STATES[:2], 2, 1.0)
    assert [len(p) for p in out] == [2, 2]
    assert routes(server).count("/generate") == before + 4  # 3 refused, then served
    await policy.close()


async def test_503_beyond_the_retry_budget_is_an_error(server: SglangServer) -> None:
    switch(server, fail_503=10)
    policy = policy_for(server, retries=2)
    with pytest.raises(PolicyError, match="503"):
        await policy.generate(STATES[:1], 1, 1.0)
    await policy.close()


async def test_connection_refused_is_an_error_after_retries() -> None:
    cfg = fake_config(free_port(), retries=2)
    policy = SglangPolicy(cfg)
    t0 = time.monotonic()
    with pytest.raises(PolicyError, match="ConnectError"):
        await policy.generate(STATES[:1], 1, 1.0)
    assert time.monotonic() - t0 < 5
    assert not await policy.healthy()
    await policy.close()


async def test_stuck_generation_is_unhealthy_although_health_says_200(server: SglangServer) -> None:
    policy = policy_for(server, health_timeout_s=0.5)
    assert await policy.healthy()
    switch(server, stuck=True)
    try:
        assert await policy.client.health()  # GET /health: 200
        t0 = time.monotonic()
        assert not await policy.healthy()  # a real one-token generation times out
        assert time.monotonic() - t0 < 3
    finally:
        switch(server, stuck=False)
    assert await policy.healthy()
    await policy.close()


async def test_bounded_concurrency(server: SglangServer) -> None:
    switch(server, delay_s=0.2)
    policy = policy_for(server, max_concurrency=2, batch_size=1)
    base = stats(server)["max_in_flight"]
    out = await policy.generate(STATES, 1, 1.0)  # 6 requests of one sequence
    assert len(out) == 6
    assert stats(server)["max_in_flight"] <= max(2, base)
    await policy.close()


# ------------------------------------------------------------------- encode


async def test_encode_both_response_shapes(embed_server: SglangServer) -> None:
    texts = ["⊢ True", "n : Nat\n⊢ n = n", "a"]
    policy = policy_for(embed_server, batch_size=2)
    policy.is_embedding = True
    switch(embed_server, encode_shape="list")
    a = await policy.encode(texts)
    switch(embed_server, encode_shape="object")
    b = await policy.encode(texts)
    assert len(a) == 3 and all(len(v) == fake_sglang.EMBED_DIM for v in a)
    assert a == b
    assert await policy.healthy()
    switch(embed_server)
    await policy.close()


def test_parse_embeddings_shapes_and_errors() -> None:
    assert parse_embeddings({"embedding": [1, 2]}, 1) == [[1.0, 2.0]]
    assert parse_embeddings([{"embedding": [1]}, {"embedding": [2]}], 2) == [[1.0], [2.0]]
    assert parse_embeddings({"embeddings": [[1], [2]]}, 2) == [[1.0], [2.0]]
    with pytest.raises(PolicyError, match="2 vectors for 3"):
        parse_embeddings({"embeddings": [[1], [2]]}, 3)
    with pytest.raises(PolicyError, match="unexpected"):
        parse_embeddings({"error": "x"}, 1)


async def test_generate_on_an_embedding_server_is_an_error(embed_server: SglangServer) -> None:
    policy = policy_for(embed_server)
    with pytest.raises(PolicyError, match="400"):
        await policy.generate(STATES[:1], 1, 1.0)
    await policy.close()


# --------------------------------------------------------------- model info


async def test_model_info_falls_back_on_old_servers(server: SglangServer) -> None:
    policy = policy_for(server)
    assert (await policy.model_info())["model_path"] == "/models/iter_0"
    switch(server, old_server=True)
    info = await policy.model_info()
    assert info["model_path"] == "/models/iter_0" and "weight_version" in info
    assert routes(server)[-2:] == ["/model_info", "/get_model_info"]
    policy.expected_model = "/models/other"
    with pytest.raises(PolicyError, match="serves '/models/iter_0'"):
        await policy.check_model()
    await policy.close()


# ------------------------------------------------------------- weight swap


async def test_weight_swap_drains_flushes_loads_and_confirms(tmp_path: Path) -> None:
    server = start_fake(tmp_path)
    try:
        switch(server, delay_s=0.6)
        policy = policy_for(server)
        in_flight = asyncio.create_task(policy.generate(STATES[:2], 1, 1.0))
        await asyncio.sleep(0.2)  # the slow generation is running
        swap = asyncio.create_task(policy.swap_weights("/models/iter_1", weight_version="1"))
        await asyncio.sleep(0.05)
        late = asyncio.create_task(policy.generate(STATES[2:3], 1, 1.0))  # must wait for the swap
        info = await swap
        await in_flight
        await late
        assert info.model_path == "/models/iter_1" and info.weight_version == "1"
        assert info.restarted is False and info.requested == "/models/iter_1"
        assert policy.served == {"model_path": "/models/iter_1", "weight_version": "1"}
        assert policy.last_good == "/models/iter_1"
        r = routes(server)
        upd = r.index("/update_weights_from_disk")
        assert r.index("/flush_cache") < upd
        assert r.index("/generate:done") < r.index("/flush_cache")  # drained first
        assert r[upd + 1 :].count("/model_info") >= 1
        # after the update: the health generation, then the late request, admitted only now
        assert r[upd + 1 :].count("/generate") == 2
        assert server.running and server.model_path == "/models/iter_1"  # no restart; a later one loads iter_1
        await policy.close()
    finally:
        server.stop()


@pytest.mark.parametrize("bad", ["/models/iter_2-unloadable", "switch"])
async def test_refused_weight_swap_keeps_serving_the_last_good_model(tmp_path: Path, bad: str) -> None:
    """SGLang answers 400 ``success: false`` and keeps its old weights: no
    restart (same process), a clear error, the old model goes on serving,
    and the launcher keeps the good path for later restarts."""
    server = start_fake(tmp_path)
    try:
        target = bad
        if bad == "switch":
            switch(server, weights="fail")
            target = "/models/iter_2"
        old_pid = server.proc.pid if server.proc else None
        policy = policy_for(server)
        with pytest.raises(WeightSwapError, match=r"refused to load it: Failed to update weights.*still serves "
                                                  r"/models/iter_0") as err:
            await policy.swap_weights(target, weight_version="2")
        assert err.value.restarted is False and err.value.requested == target
        assert err.value.serving == {"model_path": "/models/iter_0", "weight_version": "default"}
        assert server.proc is not None and server.proc.pid == old_pid and server.running
        assert server.model_path == "/models/iter_0" and policy.last_good == "/models/iter_0"
        assert "/model_info" in routes(server)
        assert len((await policy.generate(STATES[:1], 2, 1.0))[0]) == 2  # the gate is open, old weights serve
        # a later restart (whatever its cause) loads the last good model, not the refused one
        await asyncio.to_thread(server.restart)
        assert (await policy.served_model())["model_path"] == "/models/iter_0"
        await policy.close()
    finally:
        server.stop()


async def test_swap_that_breaks_the_server_restarts_it_on_the_last_good_model(tmp_path: Path) -> None:
    """The load reports success but generation is broken afterwards: the
    server is restarted, on the last good model (never the new path)."""
    server = start_fake(tmp_path)
    try:
        switch(server, weights="break")
        old_pid = server.proc.pid if server.proc else None
        policy = policy_for(server)
        with pytest.raises(WeightSwapError, match=r"test generation failed.*restarted on the last good model "
                                                  r"/models/iter_0") as err:
            await policy.swap_weights("/models/iter_2", weight_version="2")
        assert err.value.restarted is True
        assert err.value.serving == {"model_path": "/models/iter_0", "weight_version": "default"}
        assert server.proc is not None and server.proc.pid != old_pid and server.running
        assert server.model_path == "/models/iter_0"
        assert await policy.healthy()
        assert len((await policy.generate(STATES[:1], 2, 1.0))[0]) == 2
        await policy.close()
    finally:
        server.stop()


async def test_refused_weight_swap_without_launcher_reports_and_keeps_serving(server: SglangServer) -> None:
    switch(server, weights="fail")
    policy = SglangPolicy(server.cfg, max_new_tokens=8, expected_model="/models/iter_0")  # no launcher attached
    with pytest.raises(WeightSwapError, match="still serves /models/iter_0"):
        await policy.swap_weights("/models/iter_3")
    switch(server)
    assert await policy.healthy()  # the gate is open again
    assert len((await policy.generate(STATES[:1], 1, 1.0))[0]) == 1
    await policy.close()


async def test_broken_swap_without_launcher_is_an_error(tmp_path: Path) -> None:
    server = start_fake(tmp_path)
    try:
        switch(server, weights="break")
        policy = SglangPolicy(server.cfg, max_new_tokens=8, expected_model="/models/iter_0")
        with pytest.raises(WeightSwapError, match="unhealthy; no launcher can restart it") as err:
            await policy.swap_weights("/models/iter_3")
        assert err.value.serving is None
        await policy.close()
    finally:
        server.stop()


async def test_served_model_is_what_the_server_reports(server: SglangServer) -> None:
    policy = policy_for(server)
    assert await policy.served_model() == {"model_path": "/models/iter_0", "weight_version": "default"}
    wrong = SglangPolicy(server.cfg, max_new_tokens=8, expected_model="/models/other")
    with pytest.raises(PolicyError, match="serves '/models/iter_0', not '/models/other'"):
        await wrong.served_model()
    await policy.close()
    await wrong.close()


# ----------------------------------------------------------------- launcher


def test_launcher_command_env_and_stop(tmp_path: Path) -> None:
    port = free_port()
    cfg = fake_config(port, launch_args=["--mem-fraction-static", "0.8"])
    server = SglangServer(cfg, "/models/m", is_embedding=True, log_path=tmp_path / "s.log", env=fake_env())
    cmd = server.command()
    assert cmd[:3] == [sys.executable, "-m", "tests.fake_sglang"]
    assert cmd[3:] == ["--model-path", "/models/m", "--host", "127.0.0.1", "--port", str(port), "--is-embedding",
                       "--mem-fraction-static", "0.8"]
    with server:
        assert server.running
        pid = server.proc.pid if server.proc else 0
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert environ.count(b"SGLANG_RETURN_ORIGINAL_LOGPROB=1") == 1
    assert not server.running
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
    assert not os.path.exists(f"/proc/{pid}")  # reaped, not a zombie


def test_launcher_reports_a_server_that_dies_at_start(tmp_path: Path) -> None:
    port = free_port()
    server = SglangServer(fake_config(port), "/models/bad", log_path=tmp_path / "s.log",
                          extra_args=["--fake-exit-at-start"], env=fake_env())
    with pytest.raises(PolicyError, match=r"exited with code 1.*cannot load model /models/bad"):
        server.start()
    assert not server.running


def test_launcher_keeps_the_last_good_path_when_a_restart_fails(tmp_path: Path) -> None:
    server = start_fake(tmp_path)
    try:
        with pytest.raises(PolicyError, match="cannot load model /models/x-unloadable"):
            server.restart("/models/x-unloadable")
        assert server.model_path == "/models/iter_0" and not server.running
        server.restart()  # back on the good model
        assert server.running
        assert httpx.get(f"{server.url}/model_info", timeout=5).json()["model_path"] == "/models/iter_0"
    finally:
        server.stop()


def test_launcher_times_out_and_kills_a_slow_server(tmp_path: Path) -> None:
    port = free_port()
    server = SglangServer(fake_config(port, startup_timeout_s=1.0), "/models/slow", log_path=tmp_path / "s.log",
                          extra_args=["--fake-startup-delay-s", "20"], env=fake_env())
    t0 = time.monotonic()
    with pytest.raises(PolicyError, match="did not generate within 1 s"):
        server.start()
    assert time.monotonic() - t0 < 10
    assert server.proc is None


def test_factory_builds_sglang_policy() -> None:
    profile = load_profile("prod", overrides={"policy.sglang.url": "http://127.0.0.1:1"})
    p = make_policy(profile, model_path="/models/iter_4")
    assert isinstance(p, SglangPolicy) and p.expected_model == "/models/iter_4"
    assert p.name == "sglang:http://127.0.0.1:1"
    asyncio.run(p.close())


async def test_seeded_samples_depend_only_on_their_state_and_seed(server: SglangServer) -> None:
    """One ``sampling_params`` per prompt copy, each with its own
    ``sampling_seed``: a state's samples do not depend on the other states of
    the request; the same seeds give the same samples (also with native n,
    whose copies would share one seed)."""
    switch(server, shuffle=True)
    policy = policy_for(server, batch_size=5)
    seeds = [11, 22, 33]
    a = await policy.generate(STATES[:3], 4, 1.0, seeds=seeds)
    b = await policy.generate([STATES[2], STATES[0]], 4, 1.0, seeds=[33, 11])
    assert [[c.tactic for c in per] for per in (a[2], a[0])] == [[c.tactic for c in per] for per in b]
    assert [c.logprob for c in a[2]] == [c.logprob for c in b[0]]
    native = policy_for(server, parallel_sampling="native")
    c = await native.generate(STATES[:3], 4, 1.0, seeds=seeds)
    assert [[x.tactic for x in per] for per in c] == [[x.tactic for x in per] for per in a]
    with pytest.raises(ValueError, match="one seed per state"):
        await policy.generate(STATES[:3], 4, 1.0, seeds=[1])
    await policy.close()
    await native.close()


def test_per_sample_seeds_fit_sglangs_int32() -> None:
    from burnqed_core.policy.sglang import sample_seed

    seeds = {sample_seed(2**62 + 5, j) for j in range(64)}
    assert len(seeds) == 64 and all(0 <= s < 2**31 for s in seeds)


async def test_search_run_record_names_the_model_the_server_serves(server: SglangServer, tmp_path: Path) -> None:
    """After a refused swap the server still serves iter_0: the run record
    says so (``served_model``), whatever model directory was asked for."""
    from burnqed_core.records import Theorem
    from burnqed_core.search.engine import resolve_sampling
    from burnqed_core.search.job import search_theorems
    from burnqed_core.search.trajectories import read_run_record
    from tests.core.search.test_engine import ToyEnv

    switch(server, weights="fail")
    policy = policy_for(server)
    with pytest.raises(WeightSwapError):
        await policy.swap_weights("/models/iter_5")
    switch(server)
    profile = load_profile("tiny", overrides={"search.max_nodes": 3})
    sampling = resolve_sampling(profile.search, max_new_tokens=8)
    await search_theorems(profile, policy, ToyEnv(), [Theorem(name="t1", statement="2")], tmp_path / "out",
                          sampling=sampling, model_path=tmp_path / "iter_5", progress=False, handle_signals=False)
    record = read_run_record(tmp_path / "out")
    assert record is not None
    assert record.served_model == {"model_path": "/models/iter_0", "weight_version": "default"}
    assert record.sessions[0].served_model == record.served_model
    await policy.close()


def test_generation_server_is_launched_deterministic() -> None:
    """SGLang honours ``sampling_seed`` only with deterministic inference on:
    the launcher asks for it unless the profile turns it off."""
    cfg = fake_config(free_port())
    assert "--enable-deterministic-inference" in SglangServer(cfg, "/models/m").command()
    off = cfg.model_copy(update={"deterministic": False})
    assert "--enable-deterministic-inference" not in SglangServer(off, "/models/m").command()
    assert "--enable-deterministic-inference" not in SglangServer(cfg, "/models/m", is_embedding=True).command()


async def test_a_canonical_names_model_gets_canonical_prompts(tmp_path: Path) -> None:
    from burnqed_core.data.pairs.prompt import PromptFormat, parse_completion

    canon = PromptFormat(local_names="canonical")
    model = tmp_path / "iter_1_merged"
    model.mkdir()
    canon.save(model)  # what the loop's training writes beside the weights
    server = start_fake(tmp_path, str(model))
    try:
        policy = SglangPolicy(server.cfg, max_new_tokens=32, server=server)
        assert policy.prompt_format == canon
        states = [f"x{k} : Nat\n⊢ x{k} + {k} = {k} + x{k}" for k in range(6)]
        out = await policy.generate(states, 1, 0.0)
        shown = [canon.prompt(s)[0] for s in states]
        want = [parse_completion(fake_sglang.allowed_tactics(str(model), p)[0]) for p in shown]
        plain = [parse_completion(fake_sglang.allowed_tactics(str(model), format_prompt(s))[0]) for s in states]
        assert [c[0].tactic for c in out] == want
        assert want != plain  # the answers tell the two prompts apart
        await policy.close()
    finally:
        server.stop()
