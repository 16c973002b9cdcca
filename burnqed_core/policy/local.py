"""The local policy: any causal-LM directory run by transformers, on CPU or GPU.

One batched ``generate`` call covers many states x n samples (rows are
prompt-major, states sorted by prompt length so that a chunk of
``batch_size`` sequences carries little padding, and each prompt's KV cache
is computed once and shared by its n samples): far faster than one
sequence per call (``benchmarks/generate_batching.py``). The traps this
module avoids:

* prompts are padded on the LEFT (a decoder-only model continues the last
  column) and truncated from the left, keeping BOS;
* the candidate logprob is computed from the RAW logits
  (``output_logits``), not from ``scores``, which are post-temperature and
  differ by up to 0.45 nats (stack-ml.md); it is the sum over the generated
  tokens up to and including EOS (or the token that completes a closing
  fence), so it equals a teacher-forced recompute of exactly those tokens;
* after EOS a row holds padding with non-zero scores: those are masked;
* with per-state ``seeds`` (what the search passes: one seed per
  expansion), sample ``j`` of a state draws its tokens from uniforms of its
  own ``torch.Generator`` seeded from (seed, j): a state's samples do not
  depend on the other states of the call or on earlier calls. Without seeds
  the uniforms come from a per-call stream. Generation runs in a worker
  thread so the event loop keeps serving Lean meanwhile.

Two decoders produce the same distribution (greedy = argmax; else softmax of
the raw logits / T, nothing else): for a plain Llama on CPU (the tiny
profile's models) the hand-written loop of `fast_decode.LlamaDecoder`
(static KV cache, a few fused matmuls per layer, states batched across the
call, seeded or not; in a seeded call a row's logits are the same bits in any
batch); for any
other model ``model.generate`` (a seeded call then runs state by state, each
state's samples in one chunk with one unpadded prompt, so that nothing else
in the call changes its logits). ``fast_decode=False`` forces ``generate``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from burnqed_core.config import PolicyConfig
from burnqed_core.data.pairs.prompt import PromptFormat, parse_completion
from burnqed_core.errors import PolicyError
from burnqed_core.policy.base import POOLINGS, Candidate, Pooling, check_seeds, derive_seed, samples_per_state
from burnqed_core.policy.fast_decode import LlamaDecoder, StopTable, supports
from burnqed_core.torch_threads import intra_op_threads

log = logging.getLogger(__name__)
T = TypeVar("T")

#: A completion never legitimately contains a closing fence: the model has
#: started a new code block, so the tactic ends there.
STOP_STRINGS = ("```",)


@dataclass(frozen=True)
class Sample:
    """One generated sequence: its completion tokens (up to and including EOS or
    the end of a stop string), their raw-logit logprob sum, and the tactic."""

    token_ids: list[int]
    logprob: float
    tactic: str

    def candidate(self) -> Candidate:
        return Candidate(tactic=self.tactic, logprob=self.logprob, num_tokens=len(self.token_ids))


def pool_hidden(hidden: Any, mask: Any, pooling: Pooling) -> Any:
    """Pool right-padded hidden states ``[B, T, H]`` with ``mask`` ``[B, T]``:
    ``last_l2`` takes each row's last real token and L2-normalises it (SGLang's
    causal-LM ``/encode``), ``mean`` averages the real tokens. Differentiable."""
    import torch

    if pooling == "last_l2":
        last = (mask.sum(1) - 1).clamp(min=0)
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        return torch.nn.functional.normalize(hidden[rows, last].float(), dim=-1)
    if pooling == "mean":
        m = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1)
    raise PolicyError(f"unknown pooling {pooling!r}: one of {', '.join(POOLINGS)}")


def _torch_dtype(name: str) -> Any:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


class _GeneratorSampler:
    """A logits processor that samples the next token of every row from
    softmax(scores / T) with its own ``torch.Generator`` and leaves only that
    token finite, so that greedy decoding picks it. The sampling happens on
    CPU in float32 whatever the model's device, so a seed gives the same
    tokens for the same logits."""

    def __init__(self, temperature: float, generator: Any) -> None:
        self.temperature = temperature
        self.generator = generator

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        probs = torch.softmax(scores.detach().float().cpu() / self.temperature, dim=-1)
        tokens = torch.multinomial(probs, 1, generator=self.generator).to(scores.device)
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, tokens, 0.0)
        return out


def seeded_uniforms(seed: int, sample: int, max_new: int) -> Any:
    """The ``max_new`` uniforms that sample ``sample`` of a state with ``seed``
    draws its tokens with (inverse CDF, `fast_decode.sample_rows`)."""
    import torch

    gen = torch.Generator(device="cpu")
    gen.manual_seed(derive_seed("sample", seed, sample))
    return torch.rand(max_new, generator=gen)


def _check_settings(path: Path, pooling: str, batch_size: int, max_prompt_tokens: int, max_new_tokens: int) -> None:
    """Refuse a directory without a model and settings out of range, before anything loads."""
    if not (path / "config.json").is_file():
        raise PolicyError(f"no model at {path}: expected a causal-LM directory with config.json")
    if pooling not in POOLINGS:
        raise PolicyError(f"unknown pooling {pooling!r}: one of {', '.join(POOLINGS)}")
    if batch_size < 1 or max_prompt_tokens < 2 or max_new_tokens < 1:
        raise PolicyError("policy batch_size, max_new_tokens must be >= 1 and max_prompt_tokens >= 2")


def _eos_ids(tokenizer: Any, model: Any, path: Path) -> list[int]:
    """Every token that ends a generation, sorted: the tokenizer's EOS and the model's generation_config's;
    a model with none is refused (its generation could not stop)."""
    eos: set[int] = set()
    if tokenizer.eos_token_id is not None:
        eos.add(int(tokenizer.eos_token_id))
    gen_eos = model.generation_config.eos_token_id
    if isinstance(gen_eos, int):
        eos.add(gen_eos)
    elif gen_eos:
        eos.update(int(e) for e in gen_eos)
    if not eos:
        raise PolicyError(f"the tokenizer at {path} has no EOS token: generation could not stop")
    return sorted(eos)


def _fast_decoder(model: Any) -> LlamaDecoder | None:
    """`LlamaDecoder` over ``model`` when it can run it; else None (logged), and ``model.generate`` decodes."""
    why = supports(model)
    if why is None:
        return LlamaDecoder(model)
    log.info("fast decode not used (%s): generating with model.generate", why)
    return None


class LocalPolicy:
    """A transformers causal LM as a `Policy` (see the module docstring)."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        dtype: str = "float32",
        batch_size: int = 64,
        max_prompt_tokens: int = 1024,
        max_new_tokens: int = 48,
        seed: int = 0,
        pooling: Pooling = "last_l2",
        fast_decode: bool = True,
        cpu_threads: int | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(model_path)
        _check_settings(path, pooling, batch_size, max_prompt_tokens, max_new_tokens)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModelForCausalLM.from_pretrained(path, dtype=_torch_dtype(dtype))
            self.prompt_format = PromptFormat.of_model(path)
        except (OSError, ValueError) as e:
            raise PolicyError(f"cannot load the model at {path}: {e}") from None
        self.model.to(device)
        self.model.eval()
        self.device = torch.device(device)
        self.name = f"local:{path.resolve()}"
        self.model_path = path
        self.batch_size = batch_size
        self.max_prompt_tokens = max_prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.seed = seed
        self.pooling: Pooling = pooling
        self.cpu_threads = cpu_threads if self.device.type == "cpu" else None
        self._calls = 0
        self._lock = threading.Lock()

        tok = self.tokenizer
        self.eos_ids = _eos_ids(tok, self.model, path)
        self.pad_id = int(tok.pad_token_id) if tok.pad_token_id is not None else self.eos_ids[0]
        self.bos_id = tok.bos_token_id
        self._decoder: LlamaDecoder | None = _fast_decoder(self.model) if fast_decode else None
        self._stop_table: StopTable | None = None

    @classmethod
    def from_config(cls, cfg: PolicyConfig, model_path: str | Path | None = None, seed: int = 0) -> LocalPolicy:
        path = model_path or cfg.model_path
        if path is None:
            raise PolicyError("no model given: pass --model DIR or set policy.model_path")
        return cls(
            path,
            device=cfg.device,
            dtype=cfg.dtype,
            batch_size=cfg.batch_size,
            max_prompt_tokens=cfg.max_prompt_tokens,
            max_new_tokens=cfg.max_new_tokens,
            seed=seed,
            cpu_threads=cfg.cpu_threads,
        )

    def _threaded(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` with ``cpu_threads`` intra-op threads in the calling thread (a worker thread of the async
        methods; torch's thread count is per thread, `burnqed_core.torch_threads`), restored after; unchanged
        when ``cpu_threads`` is None."""
        with intra_op_threads(self.cpu_threads):
            return fn(*args)

    # ------------------------------------------------------------------ tokens

    def _encode_text(self, text: str) -> list[int]:
        """Token ids of ``text`` (with the tokenizer's special tokens), cut from
        the left to ``max_prompt_tokens`` but keeping a leading BOS: the end of
        a prompt (the goal and the response template) is what matters."""
        ids = list(self.tokenizer(text, add_special_tokens=True)["input_ids"])
        limit = self.max_prompt_tokens
        if len(ids) > limit:
            if self.bos_id is not None and ids[0] == self.bos_id:
                ids = [ids[0], *ids[len(ids) - (limit - 1):]]
            else:
                ids = ids[len(ids) - limit:]
        return ids

    def _pad(self, rows: Sequence[list[int]], left: bool) -> tuple[Any, Any]:
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            if left:
                ids[i, width - len(r):] = torch.tensor(r)
                mask[i, width - len(r):] = 1
            else:
                ids[i, : len(r)] = torch.tensor(r)
                mask[i, : len(r)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _completion_end(self, tokens: list[int]) -> int:
        """Number of generated tokens that belong to the completion: up to and
        including the first EOS, or up to the token that completes a stop string."""
        end = len(tokens)
        for k, t in enumerate(tokens):
            if t in self.eos_ids:
                end = k + 1
                break
        text = self.tokenizer.decode(tokens[:end], skip_special_tokens=True)
        if any(s in text for s in STOP_STRINGS):
            for k in range(1, end + 1):
                if any(s in self.tokenizer.decode(tokens[:k], skip_special_tokens=True) for s in STOP_STRINGS):
                    return k
        return end

    # -------------------------------------------------------------- generation

    def generate_sync(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Candidate]]:
        """Blocking `generate`. ``temperature <= 0`` decodes greedily once per
        state and returns that candidate ``n`` times (identical anyway)."""
        return [[s.candidate() for s in per]
                for per in self.sample_sync(states, n, temperature, max_new_tokens, seeds, premises)]

    def sample_sync(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Sample]]:
        """`generate_sync` with the generated token ids kept (tests, analysis). Tactics come back in the
        states' own local names (the model may see them renamed: `PromptFormat`). ``premises``: per state, the
        premise lines retrieved for it (shown when the model's format shows premises)."""
        check_seeds(states, seeds)
        if not states:
            return []
        if premises is not None and len(premises) != len(states):
            raise ValueError(f"{len(premises)} premise lists for {len(states)} states")
        shown = [self.prompt_format.prompt(s, premises[i] if premises is not None else ())
                 for i, s in enumerate(states)]
        result = self._sample_prompts([self._encode_text(p) for p, _ in shown], n, temperature, max_new_tokens, seeds)
        if self.prompt_format.plain:
            return result
        return [[dataclasses.replace(x, tactic=self.prompt_format.restore(x.tactic, back)) for x in per]
                for per, (_, back) in zip(result, shown, strict=True)]

    def _sample_prompts(
        self,
        prompts: list[list[int]],
        n: int,
        temperature: float,
        max_new_tokens: int | None,
        seeds: Sequence[int] | None,
    ) -> list[list[Sample]]:
        samples = samples_per_state(n, temperature)
        greedy = temperature <= 0
        max_new = max_new_tokens or self.max_new_tokens
        if seeds is not None:
            result = self._sample_seeded(prompts, list(seeds), samples, temperature, max_new)
            return [per * n for per in result] if greedy else result
        # States sorted by prompt length so that a chunk pads little; a chunk is
        # up to batch_size sequences (states x k samples), one generate() call.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        k_max = min(samples, self.batch_size)
        per_chunk = max(1, self.batch_size // k_max)
        out: list[list[Sample | None]] = [[None] * samples for _ in prompts]
        with self._lock:
            self._calls += 1
            call_seed = self.seed * 1_000_003 + self._calls
            chunk_no = 0
            for start in range(0, len(order), per_chunk):
                idx = order[start : start + per_chunk]
                for j0 in range(0, samples, k_max):
                    k = min(k_max, samples - j0)
                    chunk_no += 1
                    cands = self._generate_chunk([prompts[i] for i in idx], k, temperature, max_new,
                                                 call_seed * 7919 + chunk_no)
                    for r, c in enumerate(cands):  # prompt-major rows
                        out[idx[r // k]][j0 + r % k] = c
        result = [[c for c in per if c is not None] for per in out]
        if greedy:
            result = [per * n for per in result]
        return result

    def _sample_seeded(
        self, prompts: list[list[int]], seeds: list[int], samples: int, temperature: float, max_new: int
    ) -> list[list[Sample]]:
        """Reproducible per (state, seed, temperature, max_new_tokens): with the
        fast decoder, states batched (sorted by prompt length, up to
        ``batch_size`` rows a chunk), each row sampled from its own uniforms;
        else each state alone, all its samples in one chunk (one unpadded
        prompt, so nothing else in the call, nor ``batch_size``, changes its
        logits) with a generator seeded from its seed."""
        import torch

        out: list[list[Sample]] = [[] for _ in prompts]
        with self._lock:
            if self._decoder is not None:
                order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
                per_chunk = max(1, self.batch_size // samples)
                for start in range(0, len(order), per_chunk):
                    idx = order[start : start + per_chunk]
                    uniforms = None
                    if temperature > 0:
                        uniforms = torch.stack([seeded_uniforms(seeds[i], j, max_new)
                                                for i in idx for j in range(samples)])
                    cands = self._decode_fast([prompts[i] for i in idx], samples, temperature, max_new, uniforms)
                    for r, c in enumerate(cands):
                        out[idx[r // samples]].append(c)
                return out
            for i, (prompt, seed) in enumerate(zip(prompts, seeds, strict=True)):
                gen = torch.Generator(device="cpu")
                gen.manual_seed(derive_seed("state", seed))
                out[i] = self._generate_chunk([prompt], samples, temperature, max_new, 0, generator=gen)
        return out

    def _shared_prefill(self, input_ids: Any, mask: Any, k: int) -> Any:
        """The KV cache of the prompts but their last token, computed once per
        prompt and repeated for its ``k`` samples (what SGLang's radix cache does
        on a server): the prompt is most of the tokens of a tactic-sized
        generation. None when it does not apply (one sample, one-token prompts)
        or the model's cache cannot be repeated."""
        import torch
        from transformers import DynamicCache

        if k < 2 or input_ids.shape[1] < 2:
            return None
        # The positions generate() derives from a left-padded mask.
        pos = (mask.long().cumsum(-1) - 1).clamp(min=0)
        try:
            with torch.inference_mode():
                cache = DynamicCache(config=self.model.config)
                res = self.model(input_ids=input_ids[:, :-1], attention_mask=mask[:, :-1],
                                 position_ids=pos[:, :-1], past_key_values=cache, use_cache=True)
                cache = res.past_key_values
                cache.batch_repeat_interleave(k)
        except (TypeError, ValueError, AttributeError, NotImplementedError) as e:
            if not getattr(self, "_warned_prefill", False):
                log.warning("prompt KV sharing unavailable for this model (%s); prefilling every sample", e)
                self._warned_prefill = True
            return None
        return cache

    def _generate_chunk(
        self, prompts: list[list[int]], k: int, temperature: float, max_new: int, seed: int,
        generator: Any = None,
    ) -> list[Sample]:
        """``k`` samples of each prompt, rows prompt-major. With ``generator``,
        sampling draws from it (not from torch's global RNG): HF decodes
        greedily over scores on which `_GeneratorSampler` has already chosen
        the token."""
        import torch
        from transformers import LogitsProcessorList

        if self._decoder is not None and generator is None:
            uniforms = None
            if temperature > 0:
                gen = torch.Generator(device="cpu")
                gen.manual_seed(seed)
                uniforms = torch.rand((len(prompts) * k, max_new), generator=gen)
            return self._decode_fast(prompts, k, temperature, max_new, uniforms, invariant=False)
        unique_ids, unique_mask = self._pad(prompts, left=True)
        cache = self._shared_prefill(unique_ids, unique_mask, k)
        input_ids = unique_ids.repeat_interleave(k, dim=0)
        mask = unique_mask.repeat_interleave(k, dim=0)
        greedy = temperature <= 0
        seeded = generator is not None and not greedy
        gen_cfg = self._generation_config(max_new, temperature, sampled=not (greedy or seeded))
        processors = LogitsProcessorList([_GeneratorSampler(float(temperature), generator)] if seeded else [])
        if not seeded:
            torch.manual_seed(seed)
        with torch.inference_mode():
            res = self.model.generate(
                input_ids=input_ids, attention_mask=mask, past_key_values=cache, generation_config=gen_cfg,
                tokenizer=self.tokenizer, logits_processor=processors,
            )
        gen = res.sequences[:, input_ids.shape[1]:]
        # log-softmax of the raw logits, one step at a time (a 7B vocabulary x
        # steps x rows would not fit at once), gathered at the sampled tokens.
        steps = [
            torch.log_softmax(logits.float(), dim=-1).gather(1, gen[:, t : t + 1]).squeeze(1)
            for t, logits in enumerate(res.logits)
        ]
        token_lp = torch.stack(steps, dim=1).cpu()
        return self._samples(gen.cpu().tolist(), token_lp)

    def _generation_config(self, max_new: int, temperature: float, sampled: bool) -> Any:
        """The ``GenerationConfig`` of a ``generate`` call: ``model.generate`` samples at ``temperature`` when
        ``sampled``, else decodes greedily (over the scores `_GeneratorSampler` set, in a seeded call). Values
        left None would be filled from the model's generation_config (a hub model often ships top_p / top_k /
        repetition_penalty): every knob that changes the distribution is set to its neutral value."""
        from transformers import GenerationConfig

        return GenerationConfig(
            max_new_tokens=max_new,
            do_sample=sampled,
            temperature=float(temperature) if sampled else 1.0,
            top_k=0,
            top_p=1.0,
            min_p=0.0,
            typical_p=1.0,
            epsilon_cutoff=0.0,
            eta_cutoff=0.0,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            num_beams=1,
            use_cache=True,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            bos_token_id=self.bos_id,
            return_dict_in_generate=True,
            output_logits=True,
            stop_strings=list(STOP_STRINGS),
        )

    def _decode_fast(
        self, prompts: list[list[int]], k: int, temperature: float, max_new: int, uniforms: Any,
        invariant: bool = True,
    ) -> list[Sample]:
        """``k`` samples of each prompt (rows prompt-major) with `LlamaDecoder`;
        ``invariant``: each row's logits the same bits in any batch (seeded calls)."""
        assert self._decoder is not None
        if self._stop_table is None:
            self._stop_table = StopTable(self.tokenizer, self._decoder.embed.shape[0], self.eos_ids, STOP_STRINGS[0])
        tokens, token_lp = self._decoder.decode(prompts, k, max_new, temperature, uniforms, self._stop_table,
                                                invariant=invariant)
        return self._samples(tokens.tolist(), token_lp)

    def _samples(self, gen_list: list[list[int]], token_lp: Any) -> list[Sample]:
        """Samples from generated rows and their per-token raw-logit logprobs:
        each cut after its completion (`_completion_end`)."""
        cands = []
        for r, toks in enumerate(gen_list):
            end = self._completion_end(toks)
            text = self.tokenizer.decode(toks[:end], skip_special_tokens=True)
            lp = float(token_lp[r, :end].sum())
            cands.append(Sample(token_ids=toks[:end], logprob=lp, tactic=parse_completion(text)))
        return cands

    async def generate(
        self,
        states: Sequence[str],
        n: int,
        temperature: float,
        max_new_tokens: int | None = None,
        seeds: Sequence[int] | None = None,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Candidate]]:
        """For each state, ``n`` candidates (worker thread); see `generate_sync`."""
        return await asyncio.to_thread(self._threaded, self.generate_sync, list(states), n, temperature, max_new_tokens,
                                       None if seeds is None else list(seeds),
                                       None if premises is None else [list(p) for p in premises])

    # ---------------------------------------------------------------- scoring

    def score_sync(
        self,
        states: Sequence[str],
        tactics: Sequence[Sequence[str]],
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[float]]:
        """Blocking `score` (`burnqed_core.policy.base.TacticScorer`): teacher-forced log-probabilities of each
        tactic's completion tokens and EOS after the state's prompt (the training example's own text, so in
        the model's names when its format renames them). Rows are padded on the right and sorted by length."""
        import torch

        if len(tactics) != len(states) or (premises is not None and len(premises) != len(states)):
            raise ValueError(f"{len(tactics)} tactic lists and {len(premises or states)} premise lists "
                             f"for {len(states)} states")
        eos = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else self.eos_ids[0]
        rows: list[tuple[int, int, list[int], int]] = []  # (state, tactic, ids, prompt length)
        for i, state in enumerate(states):
            shown = premises[i] if premises is not None else ()
            for j, tactic in enumerate(tactics[i]):
                prompt, completion = self.prompt_format.example(state, tactic, shown)
                p_ids = self._encode_text(prompt)
                c_ids = list(self.tokenizer(completion, add_special_tokens=False)["input_ids"])
                rows.append((i, j, [*p_ids, *c_ids, int(eos)], len(p_ids)))
        out = [[0.0] * len(ts) for ts in tactics]
        order = sorted(range(len(rows)), key=lambda k: len(rows[k][2]))
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                ids, mask = self._pad([rows[k][2] for k in idx], left=False)
                logits = self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits.float()
                token_lp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
                for r, k in enumerate(idx):
                    i, j, seq, plen = rows[k]
                    out[i][j] = float(token_lp[r, plen - 1 : len(seq) - 1].sum())
        return out

    async def score(
        self,
        states: Sequence[str],
        tactics: Sequence[Sequence[str]],
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[float]]:
        """Per state, the model's log-probability of each given tactic (worker thread); see `score_sync`."""
        return await asyncio.to_thread(self._threaded, self.score_sync, list(states), [list(t) for t in tactics],
                                       None if premises is None else [list(p) for p in premises])

    # --------------------------------------------------------------- encoding

    def encode_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text from the last hidden states, pooled as ``self.pooling``
        says (`POOLINGS`): by default the LAST token's state, L2-normalised, which is
        what SGLang's ``/encode`` returns for a causal LM (``Pooler(LAST,
        normalize=True)``), so that an EBM trained on one backend scores on the
        other. Rows are padded on the RIGHT: with causal attention a real token
        never sees the padding and positions start at 0, so a text embeds the same
        alone or in a batch, and the last real token is at ``mask.sum() - 1`` (the
        text's own last token: the tokenizer adds BOS, never EOS)."""
        import torch

        if not texts:
            return []
        encoded = [self._encode_text(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        vecs: list[list[float] | None] = [None] * len(texts)
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                ids, mask = self._pad([encoded[i] for i in idx], left=False)
                hidden = self._last_hidden(ids, mask)
                pooled = pool_hidden(hidden, mask, self.pooling).float().cpu()
                for k, i in enumerate(idx):
                    vecs[i] = pooled[k].tolist()
        return [v for v in vecs if v is not None]

    def _last_hidden(self, ids: Any, mask: Any) -> Any:
        """The final hidden states (after the last norm), without the LM head:
        the decoder alone when the model exposes it (``base_model``), else the
        last of ``hidden_states``."""
        base = getattr(self.model, "base_model", None)
        if base is not None and base is not self.model:
            out = base(input_ids=ids, attention_mask=mask, use_cache=False)
            hidden = getattr(out, "last_hidden_state", None)
            if hidden is not None:
                return hidden
        return self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[-1]

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._threaded, self.encode_sync, list(texts))

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    async def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        self.model = None  # type: ignore[assignment]
