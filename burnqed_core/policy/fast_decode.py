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
differently), a row's logits are the same bits alone or in any batch, and
sampling with per-row uniforms (`sample_rows`) makes its samples depend only
on its own seed. Rows that finished keep running until every row has (their
tokens are discarded by the caller), so the batch never changes shape.

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
    ln1: Any
    wqkv: Any
    wo: Any
    ln2: Any
    wgu: Any
    wd: Any


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
            self.layers = [
                _Layer(
                    ln1=layer.input_layernorm.weight.detach(),
                    wqkv=torch.cat([layer.self_attn.q_proj.weight, layer.self_attn.k_proj.weight,
                                    layer.self_attn.v_proj.weight]).detach().contiguous(),
                    wo=layer.self_attn.o_proj.weight.detach(),
                    ln2=layer.post_attention_layernorm.weight.detach(),
                    wgu=torch.cat([layer.mlp.gate_proj.weight, layer.mlp.up_proj.weight]).detach().contiguous(),
                    wd=layer.mlp.down_proj.weight.detach(),
                )
                for layer in inner.layers
            ]
            self.norm = inner.norm.weight.detach()
            self.lm_head = model.lm_head.weight.detach()
            rot = inner.rotary_emb
            self._inv_freq = rot.inv_freq.detach().float().clone()
            self._rope_scaling = float(rot.attention_scaling)
        self._rope_table(self.max_positions)
        self.scale = self.head_dim ** -0.5
        self.intermediate = int(self.layers[0].wd.shape[1]) if self.layers else 0

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
        self.sin = (emb.sin() * self._rope_scaling).to(self.dtype)

    def _rms(self, x: Any, w: Any) -> Any:
        import torch

        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return w * h.to(self.dtype)

    def _rope(self, x: Any, cos: Any, sin: Any) -> Any:
        import torch

        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def _split_qkv(self, qkv: Any) -> tuple[Any, Any, Any]:
        d = self.head_dim
        nq, nk = self.n_heads * d, self.n_kv * d
        return qkv[..., :nq], qkv[..., nq : nq + nk], qkv[..., nq + nk :]

    def _mlp(self, layer: _Layer, x: Any) -> Any:
        import torch

        gu = self._rms(x, layer.ln2) @ layer.wgu.T
        i = self.intermediate
        return (torch.nn.functional.silu(gu[..., :i]) * gu[..., i:]) @ layer.wd.T

    def _logits(self, h: Any) -> Any:
        return (self._rms(h, self.norm) @ self.lm_head.T).float()

    def _prefill(self, ids: Any, lens: Any, caches: list[tuple[Any, Any]], repeat: int) -> Any:
        """Run the right-padded prompts ``ids`` [S, P]; write their K/V, each
        repeated ``repeat`` times, into ``caches`` columns [0, P); return the
        logits at each prompt's last token, [S, V]."""
        import torch

        s, p = ids.shape
        d, nkv, g = self.head_dim, self.n_kv, self.n_heads // self.n_kv
        cols = torch.arange(p)
        # key j visible from query i: j <= i (causal) and j < len (not padding); masked keys trail.
        visible = (cols[None, :] <= cols[:, None])[None] & (cols[None, None, :] < lens[:, None, None])
        mask = torch.zeros((s, 1, p, p), dtype=self.dtype).masked_fill_(~visible[:, None], float("-inf"))
        cos, sin = self.cos[:p][None, None], self.sin[:p][None, None]
        x = self.embed[ids]
        for layer, (kc, vc) in zip(self.layers, caches, strict=True):
            q, k, v = self._split_qkv(self._rms(x, layer.ln1) @ layer.wqkv.T)
            q = self._rope(q.view(s, p, self.n_heads, d).transpose(1, 2), cos, sin)
            k = self._rope(k.view(s, p, nkv, d).transpose(1, 2), cos, sin)
            v = v.view(s, p, nkv, d).transpose(1, 2)
            kc[: s * repeat, :, :p] = k.repeat_interleave(repeat, dim=0)
            vc[: s * repeat, :, :p] = v.repeat_interleave(repeat, dim=0)
            kk, vv = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            att = torch.softmax((q @ kk.transpose(-1, -2)) * self.scale + mask, dim=-1) @ vv
            x = x + att.transpose(1, 2).reshape(s, p, self.n_heads * d) @ layer.wo.T
            x = x + self._mlp(layer, x)
        last = x[torch.arange(s), lens - 1]
        return self._logits(_pad_rows(last))[:s]

    def _step(self, tok: Any, pos: Any, width: int, mask: Any, caches: list[tuple[Any, Any]]) -> Any:
        """One token per row at its own position ``pos``; attention over cache
        columns [0, width) with the additive ``mask`` [R, 1, 1, width]."""
        import torch

        r = tok.shape[0]
        d, nkv, g = self.head_dim, self.n_kv, self.n_heads // self.n_kv
        cos, sin = self.cos[pos][:, None, None], self.sin[pos][:, None, None]
        rows = torch.arange(r)
        x = self.embed[tok]
        for layer, (kc, vc) in zip(self.layers, caches, strict=True):
            q, k, v = self._split_qkv(self._rms(x, layer.ln1) @ layer.wqkv.T)
            q = self._rope(q.view(r, nkv, g, d), cos, sin)
            k = self._rope(k.view(r, nkv, 1, d), cos, sin)
            kc[rows, :, pos] = k[:, :, 0]
            vc[rows, :, pos] = v.view(r, nkv, d)
            scores = (q @ kc[:, :, :width].transpose(-1, -2)) * self.scale + mask
            att = torch.softmax(scores, dim=-1) @ vc[:, :, :width]
            x = x + att.reshape(r, self.n_heads * d) @ layer.wo.T
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
    ) -> tuple[Any, Any]:
        """``k`` continuations of each prompt (rows prompt-major).

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
        lens_list = [len(p) for p in prompts]
        if min(lens_list) < 1:
            raise ValueError("empty prompt")
        ids = torch.zeros((s, max(lens_list)), dtype=torch.long)
        for i, pr in enumerate(prompts):
            ids[i, : len(pr)] = torch.tensor(list(pr), dtype=torch.long)
        lens = torch.tensor(lens_list, dtype=torch.long)
        ids = _pad_prefill(ids)
        p = ids.shape[1]
        if p + max_new > self.cos.shape[0]:
            self._rope_table(p + max_new)
        # At least MIN_ROWS rows in every decode matmul: pad with copies of row 0 (discarded).
        r_pad = max(rows, MIN_ROWS)
        width_max = p + max_new
        caches = [(torch.zeros((r_pad, self.n_kv, width_max, self.head_dim), dtype=self.dtype),
                   torch.zeros((r_pad, self.n_kv, width_max, self.head_dim), dtype=self.dtype))
                  for _ in self.layers]
        row_lens = lens.repeat_interleave(k)
        if r_pad > rows:
            row_lens = torch.cat([row_lens, row_lens[:1].expand(r_pad - rows)])
        with torch.inference_mode():
            first = self._prefill(ids, lens, caches, k)
            if r_pad > rows:
                for kc, vc in caches:
                    kc[rows:] = kc[:1]
                    vc[rows:] = vc[:1]
            logits = first.repeat_interleave(k, dim=0)
            if r_pad > rows:
                logits = torch.cat([logits, logits[:1].expand(r_pad - rows, -1)])
            # Additive mask over cache columns: 0 where a row has a token, -inf elsewhere (trailing).
            cols = torch.arange(width_max)
            mask = torch.zeros((r_pad, width_max), dtype=self.dtype)
            mask.masked_fill_(cols[None, :] >= row_lens[:, None], float("-inf"))
            all_rows = torch.arange(r_pad)
            tokens = torch.zeros((rows, max_new), dtype=torch.long)
            logps = torch.zeros((rows, max_new), dtype=torch.float32)
            finished = torch.zeros(rows, dtype=torch.bool)
            state = None
            steps = 0
            for t in range(max_new):
                lp = torch.log_softmax(logits[:rows], dim=-1)
                if uniforms is None:
                    tok = torch.argmax(logits[:rows], dim=-1)
                else:
                    tok = sample_rows(logits[:rows], temperature, uniforms[:, t])
                tokens[:, t] = tok
                logps[:, t] = lp.gather(1, tok[:, None])[:, 0]
                steps = t + 1
                ended, state = stop(tok, state)
                finished |= ended
                if t == max_new - 1 or bool(finished.all()):
                    break
                pos = row_lens + t
                mask[all_rows, pos] = 0.0
                step_tok = torch.cat([tok, tok[:1].expand(r_pad - rows)]) if r_pad > rows else tok
                logits = self._step(step_tok, pos, p + t + 1, mask[:, None, None, : p + t + 1], caches)
        return tokens[:, :steps], logps[:, :steps]


def _pad_rows(x: Any) -> Any:
    """``x`` [M, ...] with copies of row 0 appended up to `MIN_ROWS` rows."""
    import torch

    if x.shape[0] >= MIN_ROWS:
        return x
    return torch.cat([x, x[:1].expand(MIN_ROWS - x.shape[0], *x.shape[1:])])


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
