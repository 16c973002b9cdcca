"""A stand-in SGLang server for contract tests (the real one needs CUDA).

A real HTTP server process on 127.0.0.1 (stdlib ``http.server``) that
answers the routes burnqed uses with the JSON shapes of SGLang 0.5.23, read
from the wheel's source (``sglang/srt/entrypoints/http_server.py``,
``sglang/srt/managers/tokenizer_manager.py``, ``io_struct.py``,
``schedule_batch.py``):

* ``POST /generate``: body ``{text: str | [str], sampling_params: {...n...},
  return_logprob, rid?, ...}``; unknown sampling params are a 400. A single
  text with n == 1 answers one object; a list, or n > 1, a flat list,
  prompt-major (``_handle_batch_request``: ``for i in batch: for _ in
  range(n)``), each ``{"text", "output_ids", "meta_info": {"id",
  "finish_reason", "prompt_tokens", "weight_version", "num_retractions",
  "reasoning_tokens", "completion_tokens", "cached_tokens",
  "input_token_logprobs", "output_token_logprobs",
  "output_token_logprobs_length", "e2e_latency"}}``. ``finish_reason`` is
  ``{"type": "stop", "matched": <eos id | stop str>}`` or ``{"type":
  "length", "length": k}``; logprob entries are ``[logprob, token_id,
  text | null]``; a matched stop string is trimmed from ``text``. With n > 1
  SGLang regenerates request ids (uuid4 hex), so ``meta_info.id`` does not
  name the prompt; with n == 1 a list ``rid`` is kept.
* ``POST /encode`` (server started with ``--is-embedding``): ``[{"embedding":
  [...], "meta_info": {...}}, ...]`` for a list, one object for one text; the
  older wrapper ``{"embeddings": [[...], ...]}`` (other SGLang versions) with
  ``encode_shape=object``.
* ``GET /health``, ``/health_generate`` (empty 200 / 503), ``/model_info``
  and the deprecated ``/get_model_info`` (``model_path``, ``weight_version``
  ...), ``GET|POST /flush_cache`` (text, 200 or 400 while requests run),
  ``POST /update_weights_from_disk`` (``{success, message,
  num_paused_requests}``, 200 or 400).

Fault switches (command-line ``--fake-*`` flags, or ``POST /_fake/config``
at run time; ``GET /_fake/stats`` reports what happened): ``fail_503`` (the
next K generate requests answer 503), ``stuck`` (generation hangs, bounded,
while ``/health`` still says 200), ``encode_shape``, ``old_server`` (no
``/model_info``: 404), ``weights`` (``ok`` | ``fail``: 400 | ``break``:
reports success but every later generation fails), ``shuffle`` (answers a
batch in a shuffled order, to check mapping by id), ``delay_s`` (slow
generation). A model path containing ``unloadable`` stands for weights that
cannot be loaded: ``/update_weights_from_disk`` answers it 400 ``success:
false`` (and keeps the old weights, as SGLang does) and a server started on
it exits at start. Unknown launch flags (SGLang's own) are accepted and ignored,
so the launcher can start this module in place of ``sglang.launch_server``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

EOS_ID = 2
# Tactics the fake "model" emits; one ends with a fence and more text, to
# exercise stop strings.
TACTICS = ["simp", "omega", "decide", "rfl", "intro h\nexact h", "constructor", "simp_all", "trivial\n```\nnext"]
SAMPLING_KEYS = {
    "max_new_tokens", "stop", "stop_token_ids", "stop_regex", "temperature", "top_p", "top_k", "min_p",
    "frequency_penalty", "presence_penalty", "repetition_penalty", "min_new_tokens", "n", "beam_width",
    "json_schema", "regex", "ebnf", "structural_tag", "ignore_eos", "skip_special_tokens",
    "spaces_between_special_tokens", "no_stop_trim", "stream_interval", "logit_bias", "sampling_seed",
    "custom_params",
}
GENERATE_KEYS = {
    "text", "input_ids", "sampling_params", "return_logprob", "logprob_start_len", "top_logprobs_num",
    "return_text_in_logprobs", "stream", "rid", "lora_path", "log_metrics",
}
STUCK_MAX_S = 30.0  # a stuck generation still ends (bounded), so the process never hangs forever
EMBED_DIM = 8
UNLOADABLE = "unloadable"  # a model path with this in it cannot be loaded (update: 400; start: exit 1)


class FakeState:
    def __init__(self, model_path: str, is_embedding: bool) -> None:
        self.lock = threading.Lock()
        self.model_path = model_path
        self.weight_version = "default"
        self.is_embedding = is_embedding
        self.config: dict[str, Any] = {
            "fail_503": 0, "stuck": False, "encode_shape": "list", "old_server": False,
            "weights": "ok", "shuffle": False, "delay_s": 0.0,
        }
        self.broken = False
        self.in_flight = 0
        self.max_in_flight = 0
        self.events: list[dict[str, Any]] = []
        self.counter = 0

    def event(self, **kw: Any) -> None:
        with self.lock:
            self.events.append({"t": time.time(), **kw})


def _tokens(text: str) -> list[str]:
    """The fake tokenizer: words and the whitespace before them."""
    out: list[str] = []
    cur = ""
    for ch in text:
        if ch.isspace() and cur and not cur.isspace():
            out.append(cur)
            cur = ""
        cur += ch
    if cur:
        out.append(cur)
    return out


def _token_id(tok: str) -> int:
    return 3 + int(hashlib.sha256(tok.encode()).hexdigest(), 16) % 30000


def allowed_tactics(model_path: str, prompt: str) -> list[str]:
    """The tactics the fake model may emit for ``prompt`` (the first under greedy
    decoding): few and prompt-specific, so tests can tell which prompt an
    output answered."""
    h = int(hashlib.sha256((model_path + prompt).encode()).hexdigest(), 16)
    return [TACTICS[(h + k) % len(TACTICS)] for k in range(3)]


def _sample_one(state: FakeState, prompt: str, params: dict[str, Any], rid: str, logprobs: bool,
                text_in_lp: bool, rng: random.Random) -> dict[str, Any]:
    temperature = float(params.get("temperature", 1.0))
    max_new = int(params.get("max_new_tokens", 128))
    stops = params.get("stop") or []
    stops = [stops] if isinstance(stops, str) else list(stops)
    choices = allowed_tactics(state.model_path, prompt)
    tactic = choices[0] if temperature <= 0 else rng.choice(choices)
    toks = _tokens(tactic)
    finish: dict[str, Any]
    text_toks: list[str] = []
    acc = ""
    matched = None
    for t in toks[:max_new]:
        text_toks.append(t)
        acc += t
        hit = [s for s in stops if s in acc]
        if hit:
            matched = hit[0]
            break
    if matched is not None:
        finish = {"type": "stop", "matched": matched}
        text = acc[: acc.index(matched)]  # SGLang trims a matched stop string (no_stop_trim=False)
        ids = [_token_id(t) for t in text_toks]
    elif len(toks) <= max_new - 1:
        finish = {"type": "stop", "matched": EOS_ID}
        text = acc
        ids = [*[_token_id(t) for t in text_toks], EOS_ID]
        text_toks = [*text_toks, "</s>"]
    else:
        finish = {"type": "length", "length": max_new}
        text_toks = text_toks[:max_new]
        text = "".join(text_toks)
        ids = [_token_id(t) for t in text_toks]
    lps = [-round(0.05 + (_token_id(t) % 97) / 100, 4) for t in text_toks]
    meta: dict[str, Any] = {
        "id": rid,
        "finish_reason": finish,
        "prompt_tokens": len(_tokens(prompt)),
        "weight_version": state.weight_version,
        "num_retractions": 0,
        "reasoning_tokens": 0,
        "completion_tokens": len(ids),
        "cached_tokens": 0,
    }
    if logprobs:
        meta["input_token_logprobs"] = []
        meta["output_token_logprobs"] = [
            [lp, i, (tt if text_in_lp else None)] for lp, i, tt in zip(lps, ids, text_toks, strict=True)
        ]
        meta["output_token_logprobs_length"] = len(ids)
    meta["e2e_latency"] = 0.001
    return {"text": text, "output_ids": ids, "meta_info": meta}


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-sglang/0.5.23"
    state: FakeState  # set on the class by main()

    def log_message(self, format: str, *args: Any) -> None:  # quiet; the launcher keeps a log file
        return

    # -------------------------------------------------------------- helpers
    def _send(self, code: int, body: Any = None, text: str | None = None) -> None:
        if text is not None:
            data, ctype = text.encode(), "text/plain"
        elif body is None:
            data, ctype = b"", "text/plain"
        else:
            data, ctype = json.dumps(body).encode(), "application/json"
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return json.loads(raw) if raw else {}

    # --------------------------------------------------------------- routes
    def do_GET(self) -> None:
        st = self.state
        path = self.path.split("?")[0]
        if not path.startswith("/_fake/"):
            st.event(route=path)
        if path in ("/health", "/health_generate"):
            self._send(200)
        elif path == "/model_info" and st.config["old_server"]:
            self._send(404, {"detail": "Not Found"})
        elif path in ("/model_info", "/get_model_info"):
            self._send(200, {
                "model_path": st.model_path, "served_model_name": st.model_path, "tokenizer_path": st.model_path,
                "is_generation": not st.is_embedding, "preferred_sampling_params": None,
                "weight_version": st.weight_version, "load_format": "auto",
            })
        elif path == "/flush_cache":
            self._flush()
        elif path == "/_fake/stats":
            with st.lock:
                self._send(200, {"events": st.events, "max_in_flight": st.max_in_flight, "in_flight": st.in_flight,
                                 "model_path": st.model_path, "weight_version": st.weight_version})
        else:
            self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        st = self.state
        path = self.path.split("?")[0]
        try:
            body = self._body()
        except json.JSONDecodeError as e:
            self._send(400, {"error": {"message": f"invalid JSON: {e}"}})
            return
        if not path.startswith("/_fake/"):
            st.event(route=path, body=body if path != "/generate" else None)
        if path == "/generate":
            self._generate(body)
        elif path == "/encode":
            self._encode(body)
        elif path == "/flush_cache":
            self._flush()
        elif path == "/update_weights_from_disk":
            self._update_weights(body)
        elif path == "/_fake/config":
            with st.lock:
                unknown = set(body) - set(st.config)
                if unknown:
                    self._send(400, {"error": f"unknown switches {sorted(unknown)}"})
                    return
                st.config.update(body)
            self._send(200, st.config)
        else:
            self._send(404, {"detail": "Not Found"})

    def _flush(self) -> None:
        st = self.state
        with st.lock:
            busy = st.in_flight > 0
        if busy:
            self._send(400, text="Flush cache failed.\n")
        else:
            self._send(200, text="Cache flushed.\nPlease check backend logs for more details. "
                       "(When there are running or waiting requests, the operation will not be performed.)\n")

    def _update_weights(self, body: dict[str, Any]) -> None:
        st = self.state
        if "model_path" not in body:
            self._send(400, {"error": {"message": "model_path is required"}})
            return
        mode = st.config["weights"]
        if mode == "fail" or UNLOADABLE in str(body["model_path"]):
            self._send(400, {"success": False, "message": f"Failed to update weights: cannot load {body['model_path']}",
                             "num_paused_requests": 0})
            return
        with st.lock:
            st.model_path = body["model_path"]
            if body.get("weight_version") is not None:
                st.weight_version = body["weight_version"]
            st.broken = mode == "break"
        msg = "Succeeded to update model weights."
        if body.get("weight_version") is not None:
            msg += f" Weight version updated to {body['weight_version']}."
        self._send(200, {"success": True, "message": msg, "num_paused_requests": 0})

    def _generate(self, body: dict[str, Any]) -> None:
        st = self.state
        if st.is_embedding:
            self._send(400, {"error": {"message": "This model does not appear to be a generation model."}})
            return
        unknown = set(body) - GENERATE_KEYS
        raw_params = body.get("sampling_params") or {}
        # one dict for every prompt, or a list of one dict per prompt (GenerateReqInput)
        per_prompt = raw_params if isinstance(raw_params, list) else None
        params = per_prompt[0] if per_prompt else raw_params
        for p in per_prompt or [params]:
            unknown |= {f"sampling_params.{k}" for k in set(p) - SAMPLING_KEYS}
        if unknown:
            self._send(400, {"error": {"message": f"unknown fields {sorted(unknown)}"}})
            return
        with st.lock:
            if st.config["fail_503"] > 0:
                st.config["fail_503"] -= 1
                fail = True
            else:
                fail = False
            broken = st.broken
        if fail:
            self._send(503, {"error": {"message": "Service Unavailable"}})
            return
        if broken:
            self._send(500, {"error": {"message": "CUDA error: an illegal memory access was encountered"}})
            return
        text = body.get("text")
        if text is None:
            self._send(400, {"error": {"message": "Either text, input_ids or input_embeds should be provided."}})
            return
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        n = int(params.get("n", 1))
        rid = body.get("rid")
        with st.lock:
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
            st.counter += 1
            seed = params.get("sampling_seed", st.counter)
        try:
            t_end = time.time() + STUCK_MAX_S
            while st.config["stuck"] and time.time() < t_end:
                time.sleep(0.02)
            if st.config["delay_s"]:
                time.sleep(float(st.config["delay_s"]))
            rng = random.Random(f"{seed}-{st.model_path}")
            outs = []
            if per_prompt is not None and len(per_prompt) != len(texts):
                self._send(400, {"error": {"message": "sampling_params list and text differ in length"}})
                return
            for i, prompt in enumerate(texts):
                if per_prompt is not None:
                    params = per_prompt[i]
                    if "sampling_seed" in params:  # a seeded request samples alone from its seed
                        rng = random.Random(f"{params['sampling_seed']}-{st.model_path}-{prompt}")
                for _ in range(n):
                    if n > 1:
                        r = uuid.uuid4().hex  # regenerate_rid(): ids do not name the prompt
                    elif isinstance(rid, list):
                        r = rid[i]
                    elif isinstance(rid, str):
                        r = rid if single else f"{rid}_{i}"
                    else:
                        r = uuid.uuid4().hex
                    outs.append(_sample_one(st, prompt, params, r, bool(body.get("return_logprob")),
                                            bool(body.get("return_text_in_logprobs")), rng))
        finally:
            with st.lock:
                st.in_flight -= 1
            st.event(route="/generate:done")
        if st.config["shuffle"] and len(outs) > 1:
            random.Random(seed).shuffle(outs)
        self._send(200, outs[0] if single and n == 1 else outs)

    def _encode(self, body: dict[str, Any]) -> None:
        st = self.state
        if not st.is_embedding:
            self._send(400, {"error": {"message": "This model does not appear to be an embedding model by default. "
                                                  "Please add `--is-embedding` when launching the server."}})
            return
        text = body.get("text")
        single = isinstance(text, str)
        texts = [text] if single else list(text or [])
        vecs = []
        for t in texts:
            rng = random.Random(t)
            v = [rng.uniform(-1, 1) for _ in range(EMBED_DIM)]
            norm = sum(x * x for x in v) ** 0.5
            vecs.append([x / norm for x in v])  # last-token pooling, normalised (Pooler(LAST, normalize=True))
        if st.config["encode_shape"] == "object":
            self._send(200, {"embeddings": vecs})
            return
        outs = [{"embedding": v, "meta_info": {"id": uuid.uuid4().hex, "finish_reason": None,
                                               "prompt_tokens": len(_tokens(t)), "weight_version": st.weight_version,
                                               "num_retractions": 0, "e2e_latency": 0.001}}
                for v, t in zip(vecs, texts, strict=True)]
        self._send(200, outs[0] if single else outs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-path", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=30000)
    ap.add_argument("--is-embedding", action="store_true")
    ap.add_argument("--enable-deterministic-inference", action="store_true")
    ap.add_argument("--fake-fail-503", type=int, default=0)
    ap.add_argument("--fake-stuck", action="store_true")
    ap.add_argument("--fake-old-server", action="store_true")
    ap.add_argument("--fake-weights", choices=["ok", "fail", "break"], default="ok")
    ap.add_argument("--fake-startup-delay-s", type=float, default=0.0)
    ap.add_argument("--fake-exit-at-start", action="store_true", help="die like a server that cannot load its model")
    args, _ignored = ap.parse_known_args(argv)  # SGLang's own flags (--mem-fraction-static ...) are ignored
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("the fake server only binds loopback addresses")
    if args.fake_exit_at_start or UNLOADABLE in args.model_path:
        raise SystemExit(f"fake: cannot load model {args.model_path}")
    time.sleep(args.fake_startup_delay_s)
    state = FakeState(args.model_path, args.is_embedding)
    state.config.update(fail_503=args.fake_fail_503, stuck=args.fake_stuck, old_server=args.fake_old_server,
                        weights=args.fake_weights)
    Handler.state = state
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"fake sglang serving {args.model_path} on {args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
