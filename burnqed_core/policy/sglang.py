"""The SGLang policy: an httpx client for a running SGLang server (prod).

Wire format: SGLang 0.5.23 (``sglang/srt/entrypoints/http_server.py``,
``managers/tokenizer_manager.py``, ``managers/io_struct.py``); the contract
tests run against ``tests/fake_sglang.py``, which answers with those shapes.
What this client copes with, each from a failure SGLang's users have reported:

* ``/generate`` answers one object for one prompt and a flat list for a
  list or ``n > 1``. By default (``parallel_sampling: replicate``) the n
  samples are sent as n copies of the prompt with our own request ids and
  mapped back by ``meta_info.id``, whatever the order of the answer (SGLang
  itself advises duplicating prompts over ``n`` for large batches; its radix
  cache shares the prefix anyway). With ``native``, ``sampling_params.n`` is
  used and the flat list is read prompt-major, since SGLang regenerates the
  ids of parallel samples. A ``finish_reason`` of type ``abort`` retries.
* Logprobs are ``meta_info.output_token_logprobs``: ``[logprob, token_id,
  text|null]`` triples over the generated tokens (EOS included). SGLang
  computes them AFTER temperature unless the server runs with
  ``SGLANG_RETURN_ORIGINAL_LOGPROB=1``, which the launcher sets, so that they
  match the local policy's raw-logit logprobs.
* ``/encode`` answers ``[{"embedding": [...]}, ...]`` or, on other
  versions, ``{"embeddings": [...]}``; both are read. NOTE: a
  causal LM served with ``--is-embedding`` pools the LAST token and
  L2-normalises (SGLang's ``Pooler(LAST, normalize=True)``): pooling
  ``last_l2``, which the local policy produces too (``SglangPolicy.pooling``).
* 503, 429, 5xx and connection errors are retried with exponential backoff
  (bounded); requests run under a semaphore (``max_concurrency``).
* ``healthy()`` is a real one-token generation with a short timeout:
  ``/health`` can answer 200 while generation is stuck (sgl#4191).
* A weight swap (`SglangPolicy.swap_weights`) stops admitting requests,
  waits for those in flight, flushes the cache, loads the new weights with
  ``/update_weights_from_disk`` and confirms with ``/model_info`` and a test
  generation. A refused load (400 ``success: false``: SGLang keeps serving
  the old weights) is reported as `WeightSwapError` while the server goes on
  serving the last good model; the server is restarted through its launcher
  only when it is unhealthy or serves something else, and always on the
  last good model, never on the path that failed (sgl#14062, sgl#26792).
* What the server says it serves (``/model_info`` ``model_path``,
  ``weight_version``) is kept in `SglangPolicy.served` for run records.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import httpx
from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.config import SglangConfig
from burnqed_core.data.pairs.prompt import PLAIN, PromptFormat, parse_completion
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import Candidate, Pooling, check_seeds, derive_seed, samples_per_state
from burnqed_core.policy.sglang_probe import HEALTH_PROMPT, RestartableServer, health_request, health_response_ok

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
STOP_STRINGS = ("```",)
MAX_BACKOFF_S = 30.0
__all__ = ("HEALTH_PROMPT", "SglangClient", "SglangPolicy", "SwapResult", "WeightSwapError", "health_request",
           "health_response_ok")


#: SGLang keeps per-request seeds in an int32 tensor.
SGLANG_SEED_MASK = (1 << 31) - 1


def sample_seed(state_seed: int, sample: int) -> int:
    """The ``sampling_seed`` of sample ``sample`` of a state (31 bits)."""
    return derive_seed(state_seed, sample) & SGLANG_SEED_MASK


class SwapResult(BaseModel):
    """A weight swap that took: what the server reports serving afterwards."""

    model_config = ConfigDict(frozen=True)
    requested: str
    model_path: str
    weight_version: str | None = None
    restarted: bool = False
    info: dict[str, Any] = Field(default_factory=dict, description="the whole /model_info answer")


class WeightSwapError(PolicyError):
    """A weight swap that did not take. The policy goes on with the last good
    model: ``serving`` is what the server reports now (None if unknown),
    ``restarted`` whether it had to be restarted (on the last good model)."""

    def __init__(self, message: str, *, requested: str, serving: dict[str, Any] | None, restarted: bool) -> None:
        super().__init__(message)
        self.requested = requested
        self.serving = serving
        self.restarted = restarted


def parse_embeddings(body: Any, expected: int) -> list[list[float]]:
    """Vectors of an ``/encode`` answer in either shape: ``[{"embedding": v}, ...]``
    (one object for one text) or ``{"embeddings": [v, ...]}``."""
    if isinstance(body, dict) and "embeddings" in body:
        vecs = body["embeddings"]
    elif isinstance(body, dict) and "embedding" in body:
        vecs = [body["embedding"]]
    elif isinstance(body, list) and all(isinstance(x, dict) and "embedding" in x for x in body):
        vecs = [x["embedding"] for x in body]
    elif isinstance(body, list) and all(isinstance(x, list) for x in body):
        vecs = body
    else:
        raise PolicyError(f"unexpected /encode answer: {str(body)[:200]}")
    if len(vecs) != expected:
        raise PolicyError(f"/encode returned {len(vecs)} vectors for {expected} texts")
    return [[float(x) for x in v] for v in vecs]


def candidate_from_output(item: dict[str, Any]) -> Candidate:
    """A `Candidate` from one ``/generate`` output object."""
    meta = item.get("meta_info") or {}
    lps = meta.get("output_token_logprobs")
    if lps is None:
        raise PolicyError("SGLang answered without output_token_logprobs (was return_logprob sent?)")
    logprob = float(sum(e[0] for e in lps if e and e[0] is not None))
    n_tok = len(lps) or int(meta.get("completion_tokens") or 0)
    return Candidate(tactic=parse_completion(item.get("text") or ""), logprob=logprob, num_tokens=n_tok)


class _Retryable(Exception):
    """A response worth another attempt (aborted samples, a short answer)."""


class SglangClient:
    """The HTTP routes burnqed uses, with retries and bounded concurrency."""

    def __init__(self, cfg: SglangConfig, url: str | None = None) -> None:
        self.cfg = cfg
        self.url = (url or cfg.url).rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.url, timeout=cfg.request_timeout_s)
        self._sem = asyncio.Semaphore(max(1, cfg.max_concurrency))

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        *,
        timeout: float | None = None,
        retries: int | None = None,
        ok_status: Sequence[int] = (200,),
    ) -> httpx.Response:
        """One request, retried on connection errors and `RETRY_STATUS` with
        exponential backoff; a status in ``ok_status`` is returned, any other
        is a `PolicyError`."""
        attempts = 1 + (self.cfg.retries if retries is None else retries)
        last = ""
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(min(MAX_BACKOFF_S, self.cfg.retry_backoff_s * 2 ** (attempt - 1)))
            try:
                async with self._sem:
                    resp = await self._http.request(
                        method, path, json=json, timeout=timeout or self.cfg.request_timeout_s
                    )
            except httpx.TransportError as e:
                last = f"{type(e).__name__}: {e}"
                log.warning("SGLang %s %s: %s (attempt %d/%d)", method, path, last, attempt + 1, attempts)
                continue
            if resp.status_code in ok_status:
                return resp
            last = f"HTTP {resp.status_code}: {resp.text[:300]}"
            if resp.status_code not in RETRY_STATUS:
                break
            log.warning("SGLang %s %s: %s (attempt %d/%d)", method, path, last, attempt + 1, attempts)
        raise PolicyError(f"SGLang {method} {self.url}{path} failed: {last}")

    async def generate(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """``POST /generate``; the answer as a list (one object becomes a list of one)."""
        out = (await self.request("POST", "/generate", body)).json()
        if isinstance(out, dict):
            out = [out]
        if not isinstance(out, list) or not all(isinstance(x, dict) for x in out):
            raise PolicyError(f"unexpected /generate answer: {str(out)[:200]}")
        return out

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        body = (await self.request("POST", "/encode", {"text": list(texts)})).json()
        return parse_embeddings(body, len(texts))

    async def model_info(self) -> dict[str, Any]:
        """``GET /model_info``, or ``/get_model_info`` on servers older than it."""
        resp = await self.request("GET", "/model_info", ok_status=(200, 404))
        if resp.status_code == 404:
            resp = await self.request("GET", "/get_model_info")
        info = resp.json()
        if not isinstance(info, dict):
            raise PolicyError(f"unexpected /model_info answer: {str(info)[:200]}")
        return info

    async def health(self) -> bool:
        """``GET /health``: only that the HTTP server answers (see `healthy`)."""
        try:
            resp = await self._http.get("/health", timeout=self.cfg.health_timeout_s)
        except httpx.TransportError:
            return False
        return resp.status_code == 200

    async def healthy(self, is_embedding: bool = False) -> bool:
        """A real one-token generation (or one embedding) within ``health_timeout_s``."""
        path, body = health_request(is_embedding)
        try:
            resp = await self._http.post(path, json=body, timeout=self.cfg.health_timeout_s)
            return resp.status_code == 200 and health_response_ok(is_embedding, resp.json())
        except (httpx.TransportError, ValueError):
            return False

    async def flush_cache(self) -> bool:
        resp = await self.request("POST", "/flush_cache", ok_status=(200, 400), retries=0)
        return resp.status_code == 200

    async def update_weights_from_disk(
        self, model_path: str, weight_version: str | None = None, abort_all_requests: bool = False
    ) -> dict[str, Any]:
        """``{success, message, num_paused_requests}``; a 400 is a failed load, not an error."""
        body: dict[str, Any] = {"model_path": model_path, "flush_cache": True}
        if weight_version is not None:
            body["weight_version"] = weight_version
        if abort_all_requests:
            body["abort_all_requests"] = True
        resp = await self.request("POST", "/update_weights_from_disk", body, ok_status=(200, 400), retries=0)
        try:
            out = resp.json()
        except ValueError:
            out = {"success": False, "message": resp.text[:300]}
        return out if isinstance(out, dict) else {"success": False, "message": str(out)[:300]}

    async def aclose(self) -> None:
        await self._http.aclose()


class SglangPolicy:
    """`Policy` over an SGLang server (see the module docstring)."""

    #: what ``/encode`` returns for a causal LM: the last token, L2-normalised
    pooling: Pooling = "last_l2"

    def __init__(
        self,
        cfg: SglangConfig,
        *,
        max_new_tokens: int = 48,
        batch_size: int = 64,
        server: RestartableServer | None = None,
        expected_model: str | None = None,
        is_embedding: bool = False,
    ) -> None:
        url = server.url if server is not None else cfg.url
        self.cfg = cfg
        self.client = SglangClient(cfg, url)
        self.server = server
        self.max_new_tokens = max_new_tokens
        self.batch_size = max(1, batch_size)
        self.expected_model = expected_model
        self.is_embedding = is_embedding
        self.name = f"sglang:{self.client.url}"
        self._admit = asyncio.Event()
        self._admit.set()
        self._drained = asyncio.Event()
        self._drained.set()
        self._in_flight = 0
        # the model known to work: a restart always goes back to it
        self.last_good: str | None = server.model_path if server is not None else expected_model
        self.served: dict[str, Any] | None = None  # ``model_path``/``weight_version`` the server last reported

    # ------------------------------------------------------------ admission
    @contextlib.asynccontextmanager
    async def _admitted(self) -> AsyncIterator[None]:
        """Count a request in flight; wait while a weight swap holds the gate."""
        await self._admit.wait()
        self._in_flight += 1
        self._drained.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._drained.set()

    # ----------------------------------------------------------- generation
    def _sampling_params(self, temperature: float, max_new_tokens: int, n: int = 1) -> dict[str, Any]:
        params: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "temperature": max(0.0, float(temperature)),
            "top_p": 1.0,
            "top_k": -1,
            "stop": list(STOP_STRINGS),
        }
        if n > 1:
            params["n"] = n
        return params

    async def _generate_replicated(
        self, prompts: list[str], samples: int, temperature: float, max_new: int,
        seeds: Sequence[int] | None = None,
    ) -> list[list[Candidate]]:
        batch = uuid.uuid4().hex[:12]
        rows = [(i, j) for i in range(len(prompts)) for j in range(samples)]
        out: list[list[Candidate | None]] = [[None] * samples for _ in prompts]

        async def run(chunk: list[tuple[int, int]]) -> None:
            rids = {f"bq-{batch}-{i}-{j}": (i, j) for i, j in chunk}
            params: dict[str, Any] | list[dict[str, Any]] = self._sampling_params(temperature, max_new)
            if seeds is not None:
                # one sampling_params per prompt copy, each with its own seed
                params = [{**params, "sampling_seed": sample_seed(seeds[i], j)} for i, j in chunk]
            body = {
                "text": [prompts[i] for i, _ in chunk],
                "rid": list(rids),
                "sampling_params": params,
                "return_logprob": True,
            }
            items = await self._generate_checked(body, len(chunk))
            ids = [(it.get("meta_info") or {}).get("id") for it in items]
            if all(r in rids for r in ids) and len(set(ids)) == len(chunk):
                for it, r in zip(items, ids, strict=True):
                    i, j = rids[r]
                    out[i][j] = candidate_from_output(it)
            else:  # a server that does not echo our ids: the answer is in request order
                log.debug("SGLang did not echo request ids; reading the answer in request order")
                for it, (i, j) in zip(items, chunk, strict=True):
                    out[i][j] = candidate_from_output(it)

        await asyncio.gather(*(run(rows[k : k + self.batch_size]) for k in range(0, len(rows), self.batch_size)))
        return [[c for c in per if c is not None] for per in out]

    async def _generate_native(
        self, prompts: list[str], samples: int, temperature: float, max_new: int
    ) -> list[list[Candidate]]:
        per_chunk = max(1, self.batch_size // samples)
        out: list[list[Candidate]] = [[] for _ in prompts]

        async def run(start: int) -> None:
            idx = list(range(start, min(start + per_chunk, len(prompts))))
            body = {
                "text": [prompts[i] for i in idx],
                "sampling_params": self._sampling_params(temperature, max_new, n=samples),
                "return_logprob": True,
            }
            items = await self._generate_checked(body, len(idx) * samples)
            # Prompt-major (tokenizer_manager._handle_batch_request): item k is prompt k // n.
            for k, it in enumerate(items):
                out[idx[k // samples]].append(candidate_from_output(it))

        await asyncio.gather(*(run(s) for s in range(0, len(prompts), per_chunk)))
        return out

    async def _generate_checked(self, body: dict[str, Any], expected: int) -> list[dict[str, Any]]:
        """`SglangClient.generate`, retried (bounded) when samples were aborted
        or the answer has the wrong number of outputs."""
        attempts = 1 + self.cfg.retries
        last = ""
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(min(MAX_BACKOFF_S, self.cfg.retry_backoff_s * 2 ** (attempt - 1)))
            async with self._admitted():
                items = await self.client.generate(body)
            try:
                if len(items) != expected:
                    raise _Retryable(f"{len(items)} outputs for {expected} requested")
                aborted = [
                    it["meta_info"]["finish_reason"] for it in items
                    if isinstance((it.get("meta_info") or {}).get("finish_reason"), dict)
                    and it["meta_info"]["finish_reason"].get("type") == "abort"
                ]
                if aborted:
                    raise _Retryable(f"{len(aborted)} samples aborted: {aborted[0].get('message')}")
                return items
            except _Retryable as e:
                log.warning("SGLang /generate: %s (attempt %d/%d)", e, attempt + 1, attempts)
                last = str(e)
        raise PolicyError(f"SGLang /generate at {self.client.url} failed: {last}")

    async def generate(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Candidate]]:
        """For each state, ``n`` candidates (greedy, ``temperature <= 0``: one
        generation per state, returned ``n`` times); ``premises``: per state,
        the premise lines its prompt shows when the model's format shows them. With ``seeds`` (one per
        state), sample j of state i carries ``sampling_params.sampling_seed =
        sample_seed(seeds[i], j)``; those requests are always replicated
        (SGLang's native ``n`` copies would share one seed and be identical).
        SGLang 0.5.x honours ``sampling_seed`` only on a server launched with
        ``--enable-deterministic-inference``."""
        samples = samples_per_state(n, temperature)
        check_seeds(states, seeds)
        if not states:
            return []
        greedy = temperature <= 0
        max_new = max_new_tokens or self.max_new_tokens
        fmt = self.prompt_format
        shown = [fmt.prompt(s, premises[i] if premises is not None else ()) for i, s in enumerate(states)]
        prompts = [p for p, _ in shown]
        if self.cfg.parallel_sampling == "native" and samples > 1 and seeds is None:
            out = await self._generate_native(prompts, samples, temperature, max_new)
        else:
            out = await self._generate_replicated(prompts, samples, temperature, max_new, seeds)
        if not fmt.plain:
            out = [[c.model_copy(update={"tactic": fmt.restore(c.tactic, back)}) for c in per]
                   for per, (_, back) in zip(out, shown, strict=True)]
        return [per * n for per in out] if greedy else out

    @property
    def prompt_format(self) -> PromptFormat:
        """The served model's prompt format, read from its directory when it is a local one (a model the
        loop trained records it); names as printed otherwise."""
        return PromptFormat.of_model(self.last_good) if self.last_good else PLAIN

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Embeddings from ``/encode`` (a server started with ``--is-embedding``)."""
        texts = list(texts)
        chunks = [texts[k : k + self.batch_size] for k in range(0, len(texts), self.batch_size)]

        async def run(chunk: list[str]) -> list[list[float]]:
            async with self._admitted():
                return await self.client.encode(chunk)

        parts = await asyncio.gather(*(run(c) for c in chunks))
        return [v for part in parts for v in part]

    # ------------------------------------------------------------ operations
    async def healthy(self) -> bool:
        """A real one-token generation answers within ``health_timeout_s``."""
        return await self.client.healthy(self.is_embedding)

    async def model_info(self) -> dict[str, Any]:
        """``/model_info``; what it names is remembered in `served`."""
        info = await self.client.model_info()
        self.served = {"model_path": str(info.get("model_path") or ""),
                       "weight_version": None if info.get("weight_version") is None else str(info["weight_version"])}
        return info

    async def check_model(self) -> dict[str, Any]:
        """``/model_info``; a `PolicyError` if the server serves another model than ``expected_model``."""
        info = await self.model_info()
        if self.expected_model and not _same_model(info.get("model_path"), self.expected_model):
            raise PolicyError(
                f"the SGLang server at {self.client.url} serves {info.get('model_path')!r}, "
                f"not {self.expected_model!r}"
            )
        return info

    async def served_model(self) -> dict[str, Any]:
        """What the server reports serving (``model_path``, ``weight_version``),
        checked against ``expected_model``: the model a run record names."""
        await self.check_model()
        assert self.served is not None
        return dict(self.served)

    async def swap_weights(self, model_path: str | Path, weight_version: str | None = None) -> SwapResult:
        """Load ``model_path`` into the running server (see the module docstring).

        Returns a `SwapResult` when the server serves ``model_path`` (and
        ``weight_version``) and generates. Otherwise raises `WeightSwapError`
        after making sure the server serves the last good model: as it is
        when SGLang refused the load and stayed healthy, else by restarting
        it on the last good model (never on ``model_path``). A plain
        `PolicyError` means even that failed: no usable server."""
        path = str(model_path)
        self._admit.clear()
        try:
            drained = True
            try:
                await asyncio.wait_for(self._drained.wait(), self.cfg.drain_timeout_s)
            except TimeoutError:
                drained = False
                log.warning("weight swap: %d requests still in flight after %.0f s; aborting them",
                            self._in_flight, self.cfg.drain_timeout_s)
            if not await self.client.flush_cache():
                log.warning("weight swap: /flush_cache refused (requests still running?)")
            try:
                res = await self.client.update_weights_from_disk(path, weight_version, abort_all_requests=not drained)
                if not res.get("success"):
                    problem = f"the server refused to load it: {res.get('message')}"
                else:
                    problem = await self._confirm(path, weight_version)
            except PolicyError as e:
                problem = str(e)
            if not problem:
                info = await self.model_info()
                self.last_good = path
                self.expected_model = path
                if self.server is not None:
                    self.server.model_path = path  # a later restart loads the new model
                log.info("weight swap: now serving %s (version %s)", path, info.get("weight_version"))
                return _swap_result(path, info, restarted=False)
            await self._fall_back(path, problem)
        finally:
            self._admit.set()

    async def _fall_back(self, path: str, problem: str) -> NoReturn:
        """After a failed swap to ``path``: keep (or bring back) the last good
        model and raise `WeightSwapError` saying what happened."""
        good = self.last_good
        info: dict[str, Any] | None = None
        try:
            info = await self.model_info()
        except PolicyError as e:
            log.warning("weight swap: /model_info failed after the failed swap: %s", e)
        healthy = info is not None and await self.client.healthy(self.is_embedding)
        on_good = info is not None and (good is None or _same_model(info.get("model_path"), good))
        if healthy and on_good and info is not None:
            log.warning("weight swap to %s failed (%s); still serving %s", path, problem, info.get("model_path"))
            raise WeightSwapError(
                f"weight swap to {path} failed: {problem}; the server still serves {info.get('model_path')} "
                f"(weight_version {info.get('weight_version')})",
                requested=path, serving=dict(self.served or {}), restarted=False)
        why = "is unhealthy" if not healthy else f"serves {(info or {}).get('model_path')!r}, not {good!r}"
        if self.server is None or good is None:
            raise WeightSwapError(
                f"weight swap to {path} failed ({problem}) and the server {why}; no launcher can restart it",
                requested=path, serving=dict(self.served) if healthy and self.served else None, restarted=False)
        log.warning("weight swap to %s failed (%s) and the server %s: restarting it on %s", path, problem, why, good)
        await asyncio.to_thread(self.server.restart, good)
        again = await self._confirm(good, None)
        if again:
            raise PolicyError(f"weight swap to {path} failed ({problem}); the server restarted on the last good "
                              f"model {good} is not usable: {again}")
        raise WeightSwapError(
            f"weight swap to {path} failed: {problem}; the server {why} and was restarted on the last good "
            f"model {good}", requested=path, serving=dict(self.served or {}), restarted=True)

    async def _confirm(self, path: str, weight_version: str | None) -> str:
        """'' if the server serves ``path`` (and ``weight_version``) and generates; else what is wrong."""
        info = await self.model_info()
        if not _same_model(info.get("model_path"), path):
            return f"server reports model_path {info.get('model_path')!r}"
        if weight_version is not None and str(info.get("weight_version")) != str(weight_version):
            return f"server reports weight_version {info.get('weight_version')!r}"
        if not await self.client.healthy(self.is_embedding):
            return "the test generation failed"
        return ""

    async def close(self) -> None:
        await self.client.aclose()


def _swap_result(requested: str, info: dict[str, Any], *, restarted: bool) -> SwapResult:
    version = info.get("weight_version")
    return SwapResult(requested=requested, model_path=str(info.get("model_path") or ""),
                      weight_version=None if version is None else str(version), restarted=restarted, info=info)


def _same_model(reported: Any, expected: str) -> bool:
    if reported is None:
        return False
    a, b = str(reported).rstrip("/"), str(expected).rstrip("/")
    if a == b:
        return True
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False
