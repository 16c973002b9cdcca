"""A hand-written batched decode loop for Llama-architecture causal LMs on CPU.

``model.generate`` spends most of a tiny model's step in Python (logits
processors, stopping criteria, cache bookkeeping, output dicts): for the tiny
profile's models the matmuls are a small part of its time. `LlamaDecoder`
runs the same network with a preallocated (static) KV cache and a handful of
fused matmuls per layer (q/k/v as one, gate/up as one), under
``torch.inference_mode``.

Layout: every row's tokens start at cache column 0 (prompts are padded on the
RIGHT; the generated token ``t`` of a row sits at column ``len(prompt) + t``),
and attention is an explicit masked softmax whose masked columns are all at
the end of a row. A masked column adds an exact 0 to every sum, so a row's
logits do not depend on how wide the batch is; with every matmul over at least
`MIN_ROWS` rows (MKL picks other kernels for fewer rows, which round
differently; seeded calls, ``invariant=True``), a row's logits are the
same bits alone or in any batch, and sampling with per-row uniforms
(`sample_rows`) makes its samples depend only on its own seed. A state's
prompt K/V is computed once and shared by its samples: attention is split
into the prompt part (one matmul per state for all its samples' queries) and
the row's own generated part, merged by their softmax maxima and sums. Rows
that finished keep running until every row has (their tokens are discarded by
the caller), so the batch never changes shape.

Only the plain Llama shape is supported (`supports`: default RoPE, no biases,
SiLU MLP, no LoRA wrapper); anything else goes through ``generate``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: Matmuls run over at least this many rows (padded with copies): MKL's sgemm
#: gives a row the same bits for any M >= 16 on AVX512/AVX2, not below.
MIN_ROWS = 16


def supports(model: Any) -> str | None:
    """None when `LlamaDecoder` can run ``model``, else why not (one line)."""
    cfg = getattr(model, "config", None)
    if cfg is None or getattr(cfg, "model_type", None) != "llama":
        return f"model type {getattr(cfg, 'model_type', None)!r} is not llama"
    if type(model).__name__ != "LlamaForCausalLM":
        return f"{type(model).__name__} is not a plain LlamaForCausalLM"
    rope = getattr(cfg, "rope_parameters", None) or {}
    if rope.get("rope_type", "default") != "default":
        return f"rope type {rope.get('rope_type')!r}"
    if getattr(cfg, "attention_bias", False) or getattr(cfg, "mlp_bias", False):
        return "attention or MLP biases"
    if getattr(cfg, "hidden_act", "silu") != "silu":
        return f"activation {cfg.hidden_act!r}"
    if getattr(model, "device", None) is not None and model.device.type != "cpu":
        return f"device {model.device}"
    return None


@dataclass
class _Layer:
    """One decoder layer's weights as transposed views ([in, out] of [out, in]
    storage: the layout whose MKL kernels round a row alike for any M >= 16),
    norm weights folded in."""

    wqkv: Any
    wo: Any
    wgu: Any
    wd: Any


@dataclass
class _Cache:
    """What the decode loop's steps attend to: per layer, the states' prompt K/V (`LlamaDecoder._prefill`)
    with ``prompt_mask`` over their padding, and the rows' generated K/V (filled in place, one column a step);
    ``k`` rows per state, row ``r``'s prompt ``row_lens[r]`` tokens long."""

    k: int
    row_lens: Any
    prompt_kv: list[tuple[Any, Any]]
    prompt_mask: Any
    gen_kv: list[tuple[Any, Any]]


class LlamaDecoder:
    """The weights of a `LlamaForCausalLM` (q/k/v and gate/up concatenated:
    a snapshot, taken once) and a batched decode loop over them."""

    def __init__(self, model: Any) -> None:
        import torch

        why = supports(model)
        if why is not None:
            raise ValueError(f"fast decode unavailable: {why}")
        cfg = model.config
        self.hidden = int(cfg.hidden_size)
        self.n_heads = int(cfg.num_attention_heads)
        self.n_kv = int(cfg.num_key_value_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or self.hidden // self.n_heads)
        self.eps = float(cfg.rms_norm_eps)
        self.max_positions = int(cfg.max_position_embeddings)
        inner = model.model
        with torch.no_grad():
            self.embed = inner.embed_tokens.weight.detach()
            self.dtype = self.embed.dtype
            # RMSNorm weights folded into the matmul that follows each norm, the attention scale into q.
            scale = self.head_dim ** -0.5
            self.layers = [
                _Layer(
                    wqkv=(torch.cat([layer.self_attn.q_proj.weight * scale, layer.self_attn.k_proj.weight,
                                     layer.self_attn.v_proj.weight]) * layer.input_layernorm.weight).contiguous().T,
                    wo=layer.self_attn.o_proj.weight.detach().T,
                    wgu=(torch.cat([layer.mlp.gate_proj.weight, layer.mlp.up_proj.weight])
                         * layer.post_attention_layernorm.weight).contiguous().T,
                    wd=layer.mlp.down_proj.weight.detach().T,
                )
                for layer in inner.layers
            ]
            self.lm_head = (model.lm_head.weight * inner.norm.weight).contiguous().T
            rot = inner.rotary_emb
            self._inv_freq = rot.inv_freq.detach().float().clone()
            self._rope_scaling = float(rot.attention_scaling)
        self._rope_table(self.max_positions)
        self.intermediate = int(self.layers[0].wd.shape[0]) if self.layers else 0

    # ------------------------------------------------------------------ math

    def _rope_table(self, n: int) -> None:
        """cos/sin of positions [0, n) exactly as LlamaRotaryEmbedding computes
        them (float32 angles, then cast); past max_position_embeddings it
        extrapolates as ``generate`` does."""
        import torch

        pos = torch.arange(n, dtype=torch.float32)
        freqs = pos[:, None] * self._inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos = (emb.cos() * self._rope_scaling).to(self.dtype)
        sin = emb.sin() * self._rope_scaling
        half = sin.shape[-1] // 2
        # rotate_half(x) * sin == swap_halves(x) * [-sin_lo, sin_hi]
        self.sin_signed = torch.cat((-sin[:, :half], sin[:, half:]), dim=-1).to(self.dtype)

    def _rms(self, x: Any) -> Any:
        """RMSNorm without its weight (folded into the next matmul)."""
        import torch

        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).to(self.dtype)

    def _rope(self, x: Any, cos: Any, sin: Any) -> Any:
        import torch

        half = x.shape[-1] // 2
        return x * cos + torch.cat((x[..., half:], x[..., :half]), dim=-1) * sin

    def _mlp(self, layer: _Layer, x: Any) -> Any:
        import torch

        gu = self._rms(x) @ layer.wgu
        i = self.intermediate
        return (torch.nn.functional.silu(gu[..., :i]) * gu[..., i:]) @ layer.wd

    def _logits(self, h: Any) -> Any:
        return (self._rms(h) @ self.lm_head).float()

    def _prefill(self, ids: Any, lens: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        """Run the right-padded prompts ``ids`` [S, P]: the logits at each
        prompt's last token [S, V] and, per layer, the prompts' keys (stored
        transposed, [S, kv heads, head_dim, P]) and values with a column of ones
        appended [S, kv heads, P, head_dim + 1]."""
        import torch

        s, p = ids.shape
        d, nkv, g = self.head_dim, self.n_kv, self.n_heads // self.n_kv
        cols = torch.arange(p)
        # key j visible from query i: j <= i (causal) and j < len (not padding); masked keys trail.
        visible = (cols[None, :] <= cols[:, None])[None] & (cols[None, None, :] < lens[:, None, None])
        mask = torch.zeros((s, 1, p, p), dtype=self.dtype).masked_fill_(~visible[:, None], float("-inf"))
        cos, sin = self.cos[:p][None, :, None], self.sin_signed[:p][None, :, None]
        x = self.embed[ids]
        caches = []
        for layer in self.layers:
            qkv = self._rms(x) @ layer.wqkv
            nqk = (self.n_heads + nkv) * d
            qk = self._rope(qkv[..., :nqk].view(s, p, self.n_heads + nkv, d), cos, sin)
            q = qk[:, :, : self.n_heads].transpose(1, 2)
            k = qk[:, :, self.n_heads :].transpose(1, 2)
            v = qkv[..., nqk:].view(s, p, nkv, d).transpose(1, 2)
            # values with a column of ones: one matmul gives the softmax's weighted values and its sum
            # (torch.sum over a row with trailing zeros rounds differently with the row's width; a matmul does not)
            ones = torch.ones((s, nkv, p, 1), dtype=self.dtype)
            caches.append((k.transpose(-1, -2).contiguous(), torch.cat((v, ones), dim=-1)))
            kk, vv = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            att = torch.softmax(q @ kk.transpose(-1, -2) + mask, dim=-1) @ vv
            x = x + att.transpose(1, 2).reshape(s, p, self.n_heads * d) @ layer.wo
            x = x + self._mlp(layer, x)
        last = x[torch.arange(s), lens - 1]
        return self._logits(_pad_rows(last) if s * p >= MIN_ROWS else last)[:s], caches

    def _step(self, tok: Any, pos: Any, t: int, k: int, prompt_kv: list[tuple[Any, Any]], prompt_mask: Any,
              gen_kv: list[tuple[Any, Any]]) -> Any:
        """One token per row (rows state-major, ``k`` per state), row ``r`` at
        position ``pos[r]``, its ``t``-th generated token. Attention is split:
        over the state's prompt (its K/V shared by its ``k`` rows: one matmul
        per state with k x group queries) and over the row's own generated
        tokens, merged by their softmax maxima and sums."""
        import torch

        r = tok.shape[0]
        s = r // k
        d, nkv, nh = self.head_dim, self.n_kv, self.n_heads
        g = nh // nkv
        cos, sin = self.cos[pos][:, None], self.sin_signed[pos][:, None]
        x = self.embed[tok]
        for layer, (ka, va), (kb, vb) in zip(self.layers, prompt_kv, gen_kv, strict=True):
            qkv = self._rms(x) @ layer.wqkv
            nqk = (nh + nkv) * d
            qk = self._rope(qkv[:, :nqk].view(r, nh + nkv, d), cos, sin)
            q = qk[:, :nh]
            kb[:, :, t] = qk[:, nh:]
            vb[:, :, t] = qkv[:, nqk:].view(r, nkv, d)
            # prompt part: [S, kv, k*g, D] @ [S, kv, D, P]
            qa = q.view(s, k, nkv, g, d).transpose(1, 2).reshape(s, nkv, k * g, d)
            sa = qa @ ka + prompt_mask
            ma = sa.amax(-1, keepdim=True)
            pa = torch.exp(sa - ma)
            oa_la = pa @ va
            oa, la = oa_la[..., :d], oa_la[..., d:]
            # back to rows: [S, kv, k, g, .] -> [R, kv, g, .]
            oa = oa.view(s, nkv, k, g, d).transpose(1, 2).reshape(r, nkv, g, d)
            ma = ma.view(s, nkv, k, g, 1).transpose(1, 2).reshape(r, nkv, g, 1)
            la = la.view(s, nkv, k, g, 1).transpose(1, 2).reshape(r, nkv, g, 1)
            # generated part: [R, kv, g, D] @ [R, kv, t+1, D]^T
            sb = q.view(r, nkv, g, d) @ kb[:, :, : t + 1].transpose(-1, -2)
            mb = sb.amax(-1, keepdim=True)
            pb = torch.exp(sb - mb)
            ob = pb @ vb[:, :, : t + 1]
            lb = pb.sum(-1, keepdim=True)
            m = torch.maximum(ma, mb)
            wa, wb = torch.exp(ma - m), torch.exp(mb - m)
            att = (oa * wa + ob * wb) / (la * wa + lb * wb)
            x = x + att.reshape(r, nh * d) @ layer.wo
            x = x + self._mlp(layer, x)
        return self._logits(x)

    # ------------------------------------------------------------------ loop

    def decode(
        self,
        prompts: Sequence[Sequence[int]],
        k: int,
        max_new: int,
        temperature: float,
        uniforms: Any | None,
        stop: Any,
        invariant: bool = True,
    ) -> tuple[Any, Any]:
        """``k`` continuations of each prompt (rows prompt-major).

        ``invariant``: run every matmul over at least `MIN_ROWS` rows (copies
        of the first state, discarded) so that a row's logits are the same bits
        in any batch; without it a small call (one sequence) runs unpadded.

        ``uniforms`` [rows, max_new] in [0, 1): row ``r``'s token ``t`` is drawn
        by inverse CDF from softmax(logits / T) with ``uniforms[r, t]``; None
        decodes greedily (argmax, first of ties, as ``generate``).
        ``stop(tokens [R], state) -> (finished [R] bool, state)`` says which rows
        have ended (EOS or a stop string). Returns (tokens [rows, steps], their
        raw-logit logprobs [rows, steps]); steps <= max_new, ending when every row
        has finished."""
        import torch

        s = len(prompts)
        rows = s * k
        ids, lens = _right_padded(prompts)
        if invariant:
            ids = _pad_prefill(ids)
        p = ids.shape[1]
        if p + max_new > self.cos.shape[0]:
            self._rope_table(p + max_new)
        with torch.inference_mode():
            first, prompt_kv = self._prefill(ids, lens)
            # At least MIN_ROWS rows in every decode matmul: copies of the first state (discarded).
            extra = max(0, -(-MIN_ROWS // k) - s) if invariant else 0
            if extra:
                first, prompt_kv, lens = _pad_states(first, prompt_kv, lens, extra)
                s += extra
            r_pad = s * k
            if uniforms is not None and r_pad > rows:
                uniforms = torch.cat([uniforms, uniforms[:1].expand(r_pad - rows, -1)])
            cache = self._cache(prompt_kv, lens, p, k, max_new)
            tokens, logps, steps = self._sample_loop(first.repeat_interleave(k, dim=0), cache, rows, max_new,
                                                     temperature, uniforms, stop)
        return tokens[:rows, :steps], logps[:rows, :steps]

    def _cache(self, prompt_kv: list[tuple[Any, Any]], lens: Any, p: int, k: int, max_new: int) -> _Cache:
        """The decode loop's cache for states whose prompts (``lens`` tokens each, padded to ``p``) gave
        ``prompt_kv``, ``k`` rows per state: the prompts' K/V with their padding masked, and zeroed K/V for
        ``max_new`` generated tokens of every row."""
        import torch

        s = lens.shape[0]
        prompt_mask = torch.zeros((s, 1, 1, p), dtype=self.dtype)
        prompt_mask.masked_fill_(torch.arange(p)[None, None, None, :] >= lens[:, None, None, None], float("-inf"))
        gen_kv = [(torch.zeros((s * k, self.n_kv, max_new, self.head_dim), dtype=self.dtype),
                   torch.zeros((s * k, self.n_kv, max_new, self.head_dim), dtype=self.dtype))
                  for _ in self.layers]
        return _Cache(k=k, row_lens=lens.repeat_interleave(k), prompt_kv=prompt_kv, prompt_mask=prompt_mask,
                      gen_kv=gen_kv)

    def _sample_loop(self, logits: Any, cache: _Cache, rows: int, max_new: int, temperature: float,
                     uniforms: Any | None, stop: Any) -> tuple[Any, Any, int]:
        """From the prompts' last ``logits`` (one per row, the first ``rows`` real), draw a token per row
        and step until ``max_new`` tokens or every real row has ended (`decode`'s ``uniforms`` and ``stop``):
        (tokens [R, max_new], their raw-logit logprobs [R, max_new], the steps taken)."""
        import torch

        r_pad = logits.shape[0]
        tokens = torch.zeros((r_pad, max_new), dtype=torch.long)
        logps = torch.zeros((r_pad, max_new), dtype=torch.float32)
        finished = torch.zeros(r_pad, dtype=torch.bool)
        finished[rows:] = True
        state = None
        steps = 0
        for t in range(max_new):
            tok = torch.argmax(logits, dim=-1) if uniforms is None else sample_rows(logits, temperature, uniforms[:, t])
            tokens[:, t] = tok
            logps[:, t] = torch.log_softmax(logits, dim=-1).gather(1, tok[:, None])[:, 0]
            steps = t + 1
            ended, state = stop(tok, state)
            finished |= ended
            if t == max_new - 1 or bool(finished.all()):
                break
            logits = self._step(tok, cache.row_lens + t, t, cache.k, cache.prompt_kv, cache.prompt_mask,
                                cache.gen_kv)
        return tokens, logps, steps


def _pad_rows(x: Any) -> Any:
    """``x`` [M, ...] with copies of row 0 appended up to `MIN_ROWS` rows."""
    import torch

    if x.shape[0] >= MIN_ROWS:
        return x
    return torch.cat([x, x[:1].expand(MIN_ROWS - x.shape[0], *x.shape[1:])])


def _right_padded(prompts: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    """The prompts as token ids [S, P] padded on the right with 0, and their lengths [S]; an empty prompt is
    refused."""
    import torch

    if min(len(p) for p in prompts) < 1:
        raise ValueError("empty prompt")
    lens_list = [len(p) for p in prompts]
    ids = torch.zeros((len(prompts), max(lens_list)), dtype=torch.long)
    for i, pr in enumerate(prompts):
        ids[i, : len(pr)] = torch.tensor(list(pr), dtype=torch.long)
    return ids, torch.tensor(lens_list, dtype=torch.long)


def _pad_states(first: Any, prompt_kv: list[tuple[Any, Any]], lens: Any,
                extra: int) -> tuple[Any, list[tuple[Any, Any]], Any]:
    """The prefill's last logits, prompt K/V and prompt lengths with ``extra`` copies of the first state
    appended (their rows are discarded)."""
    import torch

    first = torch.cat([first, first[:1].expand(extra, -1)])
    prompt_kv = [(torch.cat([ka, ka[:1].expand(extra, -1, -1, -1)]),
                  torch.cat([va, va[:1].expand(extra, -1, -1, -1)])) for ka, va in prompt_kv]
    return first, prompt_kv, torch.cat([lens, lens[:1].expand(extra)])


def _pad_prefill(ids: Any) -> Any:
    """Prompts [S, P] with padding columns appended until S x P >= `MIN_ROWS`
    (the prefill's matmuls run over S x P rows); the padding is masked."""
    import torch

    s, p = ids.shape
    if s * p >= MIN_ROWS:
        return ids
    extra = -(-MIN_ROWS // s) - p
    return torch.cat([ids, torch.zeros((s, extra), dtype=ids.dtype)], dim=1)


def sample_rows(logits: Any, temperature: float, u: Any) -> Any:
    """One token per row from softmax(logits / T) by inverse CDF at ``u`` [R]
    in [0, 1): the first token whose cumulative probability exceeds ``u`` times
    the total. Row ``r`` depends only on ``logits[r]`` and ``u[r]``."""
    import torch

    probs = torch.softmax(logits.float() / temperature, dim=-1)
    cdf = probs.cumsum(dim=-1)
    target = (u.to(cdf.dtype) * cdf[:, -1])[:, None]
    return torch.searchsorted(cdf, target, right=True)[:, 0].clamp_(max=logits.shape[-1] - 1)


class StopTable:
    """Which rows have ended after each token: EOS, or a completed stop
    string made of one repeated ASCII character (the closing fence ```` ``` ````),
    tracked as the length of the run of that character at each row's end.

    Per token id (precomputed from its decoded text): whether it is an EOS,
    whether its text contains the stop string, the run at its start and end,
    and whether it is that character only. A text that decodes to nothing
    (special tokens) leaves a row's run unchanged."""

    def __init__(self, tokenizer: Any, vocab: int, eos_ids: Sequence[int], stop: str) -> None:
        import torch

        if not stop or len(set(stop)) != 1:
            raise ValueError(f"stop string {stop!r} is not one repeated character")
        ch, need = stop[0], len(stop)
        self.need = need
        self.is_eos = torch.zeros(vocab, dtype=torch.bool)
        self.contains = torch.zeros(vocab, dtype=torch.bool)
        self.lead = torch.zeros(vocab, dtype=torch.long)
        self.trail = torch.zeros(vocab, dtype=torch.long)
        self.only = torch.zeros(vocab, dtype=torch.bool)
        for e in eos_ids:
            if 0 <= e < vocab:
                self.is_eos[e] = True
        n_tok = min(vocab, len(tokenizer))
        texts = tokenizer.batch_decode([[i] for i in range(n_tok)], skip_special_tokens=True)
        for i, text in enumerate(texts):
            self.contains[i] = stop in text
            self.lead[i] = len(text) - len(text.lstrip(ch))
            self.trail[i] = len(text) - len(text.rstrip(ch))
            self.only[i] = text.strip(ch) == ""

    def __call__(self, tok: Any, run: Any) -> tuple[Any, Any]:
        import torch

        if run is None:
            run = torch.zeros(tok.shape[0], dtype=torch.long)
        only = self.only[tok]
        ended = self.is_eos[tok] | self.contains[tok] | (run + self.lead[tok] >= self.need)
        run = torch.where(only, run + self.lead[tok], self.trail[tok])
        return ended, run
