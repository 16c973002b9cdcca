"""Prod wiring of the policy resource against the fake SGLang server (the real one needs CUDA): attach to a
running server or launch one from the profile's python, swap in each iteration's model, check it with a
one-token generation, record what the server says it serves, and keep serving the previous model when a
swap is refused."""


import sys
from pathlib import Path
from typing import Any

import dagster as dg
import httpx
import pytest

from burnqed_core.errors import PolicyError
from burnqed_pipeline.defs.partitions import add_iteration, iterations
from burnqed_pipeline.metadata import served_metadata
from burnqed_pipeline.resources import EventLoopResource, PolicyResource, ProfileResource
from tests.core.policy.test_sglang import free_port, start_fake, stats, switch
from tests.pipeline.profiles import write_profile

pytestmark = pytest.mark.slow


@dg.asset(partitions_def=iterations)
def served(context: dg.AssetExecutionContext, profile: ProfileResource, event_loop: EventLoopResource,
           policy: PolicyResource) -> dg.MaterializeResult:
    """A stand-in for trajectories/eval: ask the run's policy for iteration N's model and generate."""
    n = int(context.partition_key)
    pol, info = event_loop.run(policy.policy(profile.load(), Path(f"/models/iter_{n}"), n))
    out = event_loop.run(pol.generate(["n : Nat\n⊢ n + 0 = n"], 2, 1.0))
    return dg.MaterializeResult(metadata={**served_metadata(info), "candidates": len(out[0])})


def _profile(tmp: Path, port: int) -> Path:
    return write_profile(tmp / "prod-like.yaml", {
        "paths.work_dir": str(tmp / "work"), "policy.backend": "sglang",
        "policy.sglang.url": f"http://127.0.0.1:{port}", "policy.sglang.port": port,
        "policy.sglang.python": sys.executable, "policy.sglang.launch_module": "tests.fake_sglang",
        "policy.sglang.retries": 2, "policy.sglang.retry_backoff_s": 0.01, "policy.sglang.startup_timeout_s": 30,
        "policy.sglang.health_timeout_s": 5, "policy.sglang.drain_timeout_s": 5,
    })


def _services(prof: Path, launch: bool = False) -> dict[str, Any]:
    loop = EventLoopResource.configure_at_launch()
    return {"profile": ProfileResource(profile=str(prof)), "event_loop": loop,
            "policy": PolicyResource(event_loop=loop, launch_sglang=launch)}


def _run(inst: dg.DagsterInstance, prof: Path, n: int, launch: bool = False) -> dg.ExecuteInProcessResult:
    add_iteration(inst, n)
    return dg.materialize([served], instance=inst, partition_key=str(n), raise_on_error=False,
                          resources=_services(prof, launch))


def _served(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    (ev,) = result.get_asset_materialization_events()
    return ev.event_specific_data.materialization.metadata["served_model"].value  # type: ignore[return-value]


def test_attached_server_is_swapped_per_iteration_and_keeps_the_last_good_model(tmp_path: Path) -> None:
    server = start_fake(tmp_path, model="/models/base")
    try:
        prof = _profile(tmp_path, server.port)
        with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
            for n in (0, 1):
                result = _run(inst, prof, n)
                assert result.success
                info = _served(result)
                assert info["model_path"] == f"/models/iter_{n}" and info["weight_version"] == f"iter_{n}"
                assert info["launched"] is False and info["restarted"] is False
            assert [e["body"]["model_path"] for e in stats(server)["events"]
                    if e["route"] == "/update_weights_from_disk"] == ["/models/iter_0", "/models/iter_1"]

            switch(server, weights="fail")  # the server refuses to load iteration 2
            result = _run(inst, prof, 2)
            assert not result.success
            assert stats(server)["model_path"] == "/models/iter_1"  # still serving the previous model
            switch(server)
            body = {"text": "x", "sampling_params": {"max_new_tokens": 1, "temperature": 0.0}}
            assert httpx.post(f"{server.url}/generate", json=body, timeout=5).status_code == 200
    finally:
        server.stop()


def test_launched_server_serves_the_model_and_stops_with_the_run(tmp_path: Path) -> None:
    port = free_port()
    prof = _profile(tmp_path, port)
    with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
        result = _run(inst, prof, 0, launch=True)
        assert result.success
        info = _served(result)
        assert info["launched"] is True and info["model_path"] == "/models/iter_0" and info["restarted"] is False
    with pytest.raises(httpx.TransportError):  # stopped at the end of the run
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    assert "fake sglang serving /models/iter_0" in (tmp_path / "work" / "sglang.log").read_text()


def test_refused_swap_on_a_launched_server_keeps_the_previous_model(tmp_path: Path) -> None:
    port = free_port()
    with dg.build_resources(_services(_profile(tmp_path, port), launch=True)) as r:
        loop, pol, prof = r.event_loop, r.policy, r.profile.load()
        loop.run(pol.policy(prof, Path("/models/iter_0"), 0))
        switch_url = f"http://127.0.0.1:{port}/_fake/config"
        httpx.post(switch_url, json={"weights": "fail"}, timeout=5).raise_for_status()
        with pytest.raises(PolicyError):
            loop.run(pol.policy(prof, Path("/models/iter_1"), 1))
        assert httpx.get(f"http://127.0.0.1:{port}/_fake/stats", timeout=5).json()["model_path"] == "/models/iter_0"
