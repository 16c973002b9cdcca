"""Settings for every stage, loaded from one YAML profile.

A profile (``configs/tiny.yaml``, ``configs/small.yaml``, ``configs/prod.yaml``, or any file) holds one
section per stage. Values are validated by pydantic models that forbid unknown keys, so a typo is an error
naming the key and the file it was written in. Nothing here is a module-level singleton: load a `Profile`
and pass it (or a section) down.

Settings are immutable (every model is ``frozen``): a loaded profile may be shared by the loop, the
pipeline's stages and tests, so a change is a copy (``model_copy(update=...)``, or
`burnqed_core.cli.common.with_changes` to validate it), never an assignment.

Layered files: a profile file may start with ``extends: <parent>`` and then holds only what it changes.
The parent is a bundled name (``base`` -> ``configs/base.yaml``) or a path (with a ``.yaml``/``.yml``
suffix or a ``/``), relative to the extending file's directory. The parent's settings are deep-merged
under the child's: mappings merge key by key and the child's value wins; anything else, lists included,
is replaced whole. Parents may extend further (a chain, base first); a cycle is an error naming the
files. ``extends`` is a key of the file, not of `Profile`. The bundled profiles::

    base.yaml   (layer)  shared by every profile
    cpu.yaml    (layer)  extends base: CPU, embedded Lean, local policy, bundled theorem sets
    tiny.yaml            extends cpu: the default, a ~1 M parameter model
    small.yaml           extends cpu: a ~5 M parameter model, larger budgets
    prod.yaml            extends base: a GPU box, SGLang, Pantograph, Mathlib

A file that says ``layer: true`` (not inherited) is a layer: only extended, never run. Loading it as a
profile is an error, so that its defaults (name ``tiny``, work_dir ``runs/tiny``) are never mistaken for
a profile of their own; it is not listed among the bundled profiles either.

Environment overrides (applied after the files, before validation):

* ``BURNQED_HOME``      -> ``paths.home`` (caches: Lean install, tiny models)
* ``BURNQED_WORK_DIR``  -> ``paths.work_dir`` (runs, checkpoints, trajectories)
* ``BURNQED_SGLANG_URL`` -> ``policy.sglang.url``
* ``BURNQED_MODEL_PATH`` -> ``policy.model_path``
* ``BURNQED_PANTOGRAPH`` -> ``lean.pantograph.executable``
* ``BURNQED_LEAN_PATH`` -> ``lean.pantograph.lean_path``
* any key: ``BURNQED__SECTION__KEY=value`` (double underscores; the value is
  parsed as YAML, so ``BURNQED__SEARCH__MAX_NODES=200`` is an int).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from burnqed_core.errors import ProfileError

REPO_CONFIGS = Path(__file__).resolve().parent.parent / "configs"

# value types a stage's settings model repeats (`burnqed_core.projection.Projection`)
NameFormat = Literal["as_printed", "canonical"]
LrSchedule = Literal["cosine", "linear", "constant"]
AutomationSteps = Literal["include", "exclude"]
Curriculum = Literal["random", "size"]


class Section(BaseModel):
    """Base of every settings model: unknown keys are errors, and a settings object never changes after it
    is built (assigning a field raises pydantic's ``ValidationError``): change a copy,
    ``model_copy(update=...)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def machine(default: Any = ..., **kwargs: Any) -> Any:
    """A field of the machine, not of the results: where files go, how many workers, which server, how often to
    checkpoint. No stage's fingerprint holds it; a stage that reads it declares it in its settings model like any
    other field (`burnqed_core.projection`)."""
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    return Field(default, json_schema_extra={**extra, MACHINE: True}, **kwargs)


MACHINE = "machine"


def is_machine(field: Any) -> bool:
    """Whether a pydantic ``FieldInfo`` was declared with `machine`."""
    extra = field.json_schema_extra
    return isinstance(extra, dict) and bool(extra.get(MACHINE))


def default_home() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "burnqed" if xdg else Path.home() / ".cache" / "burnqed"


class PathsConfig(Section):
    home: Path = Field(default_factory=default_home, description="caches: Lean install, built tiny models")
    work_dir: Path = Field(Path("runs/tiny"), description="outputs of the loop: data, models, trajectories")
    trace_cache: Path | None = Field(None, description="traced corpus theorems by theorem and Lean "
                                     "(`burnqed_core.lean.trace_cache`); default <home>/trace-cache")
    baselines: Path | None = Field(None, description="measured baselines (a), (b), (c) by theorem set, settings "
                                   "and Lean (`burnqed_core.eval.baselines`); default <home>/baselines. Another "
                                   "directory measures afresh without deleting what other runs share")

    def baselines_dir(self) -> Path:
        """Where measured baselines are cached: ``baselines``, else ``<home>/baselines``."""
        return self.baselines if self.baselines is not None else self.home / "baselines"


class EmbeddedLeanConfig(Section):
    """Lean 4 compiled to WebAssembly, run by Node 26 (both from npm)."""

    install_dir: Path | None = Field(None, description="default: <paths.home>/lean-wasm")
    report_delay_ms: int = 0
    request_timeout_s: float = 120.0
    start_timeout_s: float = 180.0
    elab_async: bool = Field(True, description="Lean's parallel proof elaboration: ~2.5x batched throughput; "
                             "off for streams of changing preambles (tracing), where it piles up threads")


class PantographConfig(Section):
    executable: str = machine("repl")
    modules: list[str] = Field(default_factory=lambda: ["Init"])
    lean_path: str | None = machine(None)
    ready_timeout_s: float = machine(120.0)
    memory_limit_mb: int | None = machine(16000)
    trusted_checker: bool = Field(
        True, description="verdicts by the trusted checker (judge.lean, run through frontend.process; needs a "
                          "Lean with the module system, 4.22+); false: `#print axioms` appended to the "
                          "document (weaker: the document can change how that query is read)")


class LeanConfig(Section):
    backend: Literal["embedded", "pantograph"] = "embedded"
    num_workers: int | None = machine(None, description="None: sized from cores and memory")
    tactic_timeout_s: float = 30.0
    max_requests_per_worker: int = machine(1000)
    worker_ttl_s: float = machine(1800.0)
    worker_rss_limit_mb: int = machine(8000)
    batch_size: int = machine(32, ge=1, description="(state, tactic) pairs elaborated per document edit")
    max_tactic_chars: int = 2000
    verdict_cache: int = machine(200_000, ge=0, description="tactic verdicts kept per pool for reuse where a "
                                 "state is its text (embedded backend; `burnqed_core.lean.verdict_cache`); 0: off")
    self_test: bool = machine(True)
    embedded: EmbeddedLeanConfig = machine(default_factory=EmbeddedLeanConfig)
    pantograph: PantographConfig = Field(default_factory=PantographConfig)


class SglangConfig(Section):
    url: str = machine("http://127.0.0.1:30000")
    python: str = machine("python")
    port: int = machine(30000)
    launch_args: list[str] = machine(default_factory=list)
    max_concurrency: int = machine(8)
    request_timeout_s: float = machine(300.0)
    retries: int = machine(5)
    startup_timeout_s: float = machine(900.0)
    launch_module: str = machine("sglang.launch_server", description="module run by `<python> -m` to start a server")
    parallel_sampling: Literal["replicate", "native"] = Field(
        "replicate",
        description="n samples as n copies of the prompt with our own request ids (mapped back by id), "
        "or as SGLang's sampling_params.n (flat prompt-major list)",
    )
    retry_backoff_s: float = machine(0.5, description="first retry delay; doubles each retry")
    health_timeout_s: float = machine(20.0, description="timeout of the one-token health generation")
    drain_timeout_s: float = machine(120.0, description="weight swap: wait this long for in-flight requests")
    return_original_logprob: bool = Field(
        True, description="launch with SGLANG_RETURN_ORIGINAL_LOGPROB=1: logprobs from raw logits, not T-scaled"
    )
    deterministic: bool = Field(
        True, description="launch with --enable-deterministic-inference: SGLang honours the per-request "
        "sampling_seed (reproducible search and eval) only in this mode"
    )


class PolicyConfig(Section):
    backend: Literal["local", "sglang", "fixed", "structural"] = Field(
        "local", description="'structural': no learned policy, the structural steps of each goal (baseline (c), "
                             "with search.automation on)")
    fixed_tactics: list[str] = Field(
        default_factory=lambda: ["rfl", "decide", "trivial", "simp", "simp_all", "omega", "grind", "assumption"],
        description="backend 'fixed': the tactics proposed for every state (automation-only baseline)",
    )
    model_path: Path | None = Field(None, description="None: the model trained by the loop")
    device: str = machine("cpu")
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    max_new_tokens: int = 48
    max_prompt_tokens: int = 1024
    batch_size: int = machine(64, description="sequences per generate() call")
    cpu_threads: int | None = machine(1, ge=1, description="torch intra-op threads of the local policy's "
                                      "inference on CPU during a search (decoding, scoring, encoding; set in the "
                                      "worker thread that runs it, training untouched): it runs beside the Lean "
                                      "worker, and with one thread per core each small op waits for a core Lean "
                                      "holds; None: torch's default")
    sglang: SglangConfig = Field(default_factory=SglangConfig)


def with_placeholder(templates: list[str], placeholder: str, what: str) -> list[str]:
    """``templates`` when each holds ``placeholder``, else a `ValueError` naming those that do not."""
    bad = [t for t in templates if placeholder not in t]
    if bad:
        raise ValueError(f"{what} need a {placeholder} placeholder: {bad}")
    return templates


class AutomationConfig(Section):
    """Automation tactics added to the policy's samples at every expansion
    (`burnqed_core.search.automation`): plain ones, and definition-aware
    templates whose ``{defs}`` becomes the user definitions (of the theorem's
    preamble) that the expanded goal names; a template is skipped when the
    goal names none. A tactic the policy also sampled is kept once (source
    ``both``, the higher of its logprob and ``prior_logprob``)."""

    enabled: bool = Field(False, description="add the automation candidates (off: the policy's samples only)")
    tactics: list[str] = Field(default_factory=lambda: ["simp_all", "omega", "decide", "grind"],
                               description="plain automation tactics, tried as they are")
    defaware: list[str] = Field(default_factory=lambda: ["simp [{defs}]", "simp_all [{defs}]", "grind [{defs}]"],
                                description="templates; {defs} = the goal's user definitions, comma-separated")
    prior_logprob: float = Field(-2.0, le=0, description="the candidate's log-probability in the node priority "
                                 "(-2.0: as likely as a policy sample of probability 0.14)")
    at: Literal["root", "all"] = Field("all", description="at the root only, or at every expansion")
    partial: Literal["keep", "drop"] = Field(
        "keep", description="below the root, an automation-only candidate (one the policy did not sample) whose "
        "result closes no goal: 'keep' it as a node, or 'drop' it (tried, recorded as a failed edge, no node): "
        "automation then only finishes goals and the node budget goes to the policy's steps")
    max_defs: int = Field(8, ge=1, description="at most this many definitions in one template (first named first)")
    baseline_at_root: bool = Field(
        False, description="at the root, also try every tactic of baseline (b) (`simp [defs]`, `grind [defs]`, "
        "`induction x <;> simp_all [defs]`, `induction x <;> grind [defs]` for each variable x of the statement): "
        "policy + automation then proves what baseline (b) proves, and its excess over (b) is what the policy adds")

    @field_validator("defaware")
    @classmethod
    def _templates(cls, v: list[str]) -> list[str]:
        return with_placeholder(v, "{defs}", "definition-aware templates")


class StructuralStepsConfig(Section):
    """Baseline (c)'s structural steps as candidates of the prover's search (`burnqed_core.policy.structural`):
    with them, the prover's candidates at a state contain (c)'s, so (c) is exactly the prover's search with the
    policy removed and what the prover adds over it is the policy's own."""

    enabled: bool = Field(False, description="add the structural steps of each state (intro, induction x, cases "
                          "x, constructor ...) to the policy's samples, source 'structural'")
    limit: int = Field(64, ge=1, description="at most this many per state (baseline (c) takes 24 of the same list)")


class PremiseStepsConfig(Section):
    """Retrieved premises as candidates (`burnqed_core.premises.steps`): for each of the top ``k`` premises the
    premise rule allows at the theorem, the ``templates`` with ``{p}`` its name, and the ``joint`` templates with
    ``{ps}`` all of them. Source 'premise'."""

    enabled: bool = Field(False, description="add premise steps (needs the premise index: the premise_index stage's "
                          "folder; `burnqed search --premises DIR`)")
    k: int = Field(4, ge=1, description="premises retrieved per expanded state")
    templates: list[str] = Field(default_factory=lambda: ["rw [{p}]", "simp only [{p}]", "exact {p}", "apply {p}"],
                                 description="steps per premise; {p} = its name")
    joint: list[str] = Field(default_factory=lambda: ["simp [{ps}]"],
                             description="steps with every retrieved premise; {ps} = their names, comma-separated")
    prior_logprob: float = Field(-2.5, le=0, description="the best premise's steps' log-probability in the node "
                                 "priority")
    rank_penalty: float = Field(0.25, ge=0, description="subtracted per rank below the best premise")

    @field_validator("templates")
    @classmethod
    def _one_premise(cls, v: list[str]) -> list[str]:
        return with_placeholder(v, "{p}", "premise templates")

    @field_validator("joint")
    @classmethod
    def _all_premises(cls, v: list[str]) -> list[str]:
        return with_placeholder(v, "{ps}", "joint premise templates")


class SearchConfig(Section):
    max_nodes: int = 100
    max_depth: int = 50
    num_candidates: int = 4
    collect_candidates: int = 8
    timeout_s: float = 120.0
    temperature: float = 0.8
    noise_temperature: float = 1.2
    noisy_pass: bool = Field(True, description="iteration 0 searches its selection a second time at "
                             "noise_temperature (more diverse data for the first EBM and SFT)")
    ebm_temperature: float = 1.0
    ebm_num_candidates: int = 8
    alpha: float = 1.0
    beta: float = 0.0
    frontier_batch: int = 8
    concurrency: int = Field(8, ge=1, description="theorems searched at once; each gets frontier_batch // "
                             "concurrency nodes per batch, so it changes which nodes a search expands: a result "
                             "setting, not the machine's")
    flush_every: int = machine(10)
    seed: int = 0
    resample_rounds: int = Field(
        0, ge=0, description="when a theorem's frontier runs dry with node budget left, expand its expanded "
        "nodes again with fresh samples, up to this many times (0: the search ends 'exhausted')")
    resample_temperature_step: float = Field(
        0.2, ge=0, description="round r samples at the search temperature + r x this (more diverse each round)")
    automation: AutomationConfig = Field(default_factory=AutomationConfig)
    structural: StructuralStepsConfig = Field(default_factory=StructuralStepsConfig)
    premises: PremiseStepsConfig = Field(default_factory=PremiseStepsConfig)
    max_checks: int | None = Field(
        None, ge=1, description="per theorem: at most this many Lean tactic checks (every candidate sent to Lean, "
        "closing or not); the compute measure searchers are compared at (None: only max_nodes and timeout_s bind)")
    rank: Literal["prior", "policy"] = Field(
        "prior", description="what orders an expansion's candidates and gives each child its log-probability: "
        "'prior' (the policy's samples their own, the other sources fixed priors: automation, structural, premise "
        "rank) or 'policy' (every candidate scored by the policy's model at the state, `TacticScorer`: what the "
        "policy learned ranks the automation, structural and premise steps too). A search without a policy that "
        "scores (baseline (c)) ranks by 'prior'")
    max_width: int | None = Field(
        None, ge=1, description="at most this many candidates per expansion, the best ranked; a node with "
        "candidates left goes back on the frontier at the priority its next candidate's child would have, and its "
        "next expansion tries the next ones (None: every candidate at once)")


class LoraConfig(Section):
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )


class TinyModelConfig(Section):
    vocab_size: int = 1024
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    intermediate_size: int = 704
    max_position_embeddings: int = 1024
    pretrain_steps: int = 600
    pretrain_lr: float = 1e-3
    pretrain_batch_size: int = 32
    split_digits: bool = Field(False, description="the tokenizer keeps every digit a token of its own, so that "
                               "copying a number from the goal (a witness, a bound) is copying digits the model "
                               "has seen everywhere, not one learned token per number")


class TrainingConfig(Section):
    base_model: str = Field("tiny", description="'tiny' (built from tiny_model) or a HF model dir/name")
    tiny_model: TinyModelConfig = Field(default_factory=TinyModelConfig)
    local_names: NameFormat = Field(
        "as_printed", description="the goal's local names in the prompt: as Lean printed them, or renamed "
        "v1, v2, ... in order of appearance (tactics mapped back; `burnqed_core.policy.local_names`). Used for a "
        "base model that records no format; the trained model records it (burnqed_prompt.json)")
    prompt_premises: int = Field(
        0, ge=0, description="premise lines the model's prompt shows before the state: the top ones retrieved under "
        "the premise rule (issue 65: the policy learns to copy a lemma's name from its prompt; needs the premise "
        "index). Recorded in the trained model like local_names (0: the plain prompt)")
    premise_names: NameFormat = Field(
        "as_printed", description="with prompt_premises: the shown premises named in a training tactic as printed, "
        "or by their place p1, p2, ... (a pointer the policy writes and that is mapped back to the name before "
        "Lean sees it; `burnqed_core.data.pairs.premise_refs`). Recorded in the trained model like local_names")
    numerals: NameFormat = Field(
        "as_printed", description="the goal's numerals (2 and above) in the prompt: as Lean printed them, or as "
        "placeholders k1, k2, ... in order of appearance, which a tactic uses and which are mapped back "
        "(`burnqed_core.policy.numerals`). Recorded in the trained model like local_names")
    lora: LoraConfig = Field(default_factory=LoraConfig)
    qlora: bool = False
    lr: float = 2e-4
    lr_decay_per_iteration: float = 0.5
    max_steps: int = 300
    max_steps_later: int = 150
    warmup_steps: int = 20
    lr_schedule: LrSchedule = Field(
        "cosine", description="after the linear warm-up: decay (cosine, linear) to min_lr_ratio x lr at the last "
        "step, or constant; SFT and the tiny base's pre-training")
    min_lr_ratio: float = Field(0.1, ge=0, le=1, description="the decay's floor as a fraction of the peak lr: "
                                "> 0 so that the last steps still train (0: decay to 0 at the last step)")
    batch_size: int = 16
    grad_accum: int = 1
    max_seq_len: int = 512
    gradient_checkpointing: bool = machine(False)
    length_groups: int = Field(
        1, ge=1, description="each micro-batch sorted by length and cut into this many runs, each padded to its "
        "own longest example (`burnqed_core.training.collate.length_groups`): the same gradient but for rounding, "
        "less work on padding (with a dropout, as LoRA's, its masks are drawn for the runs' shapes: another draw "
        "of the same masks); 1: one padded batch (GPU profiles: the fewest kernel launches)")
    eval_every: int = 50
    save_every: int = machine(50)
    warm_start: Literal["adapter", "merged"] = "adapter"
    shard_size: str = "2GB"
    seed: int = 0
    seeds: list[int] = machine(
        default_factory=list, description="the training seeds a reported comparison (iteration N against 0) runs: "
        "one loop per seed, each in <work_dir>/seed-<s> with training.seed set to it "
        "(`burnqed_core.eval.seeds`), read together by `burnqed compare --seeds K`; empty: one run at "
        "training.seed. A plan of runs, not a setting of one: no stage holds it")
    device: str = machine("auto", description="'auto' (cuda if available, else cpu), 'cpu', 'cuda', 'cuda:1', ...")
    max_grad_norm: float = 1.0
    keep_checkpoints: int = machine(1, ge=1, description="latest checkpoints kept besides the best-eval one")


class DataConfig(Section):
    corpus: str = Field("bundled:corpus", description="'bundled:<name>' or a path to a theorem JSONL")
    benchmark: str = "bundled:benchmark"
    val_fraction: float = Field(0.1, gt=0, lt=1)
    max_tokens: int = 512
    base_subsample: int = 10000
    trajectory_upsample: int = Field(10, ge=0, description="iteration N > 0: each positive trajectory step is "
                                     "repeated up to this many times in the training mix")
    trajectory_max_share: float = Field(0.25, gt=0, le=1, description="cap on the share of trajectory rows in "
                                        "the training mix (lowers the upsample factor; 1: no cap)")
    search_theorems: int = Field(200, ge=0, description="corpus theorems searched per iteration")
    search_exercises: int | None = Field(None, ge=0, description="at most this many of them withheld exercises "
                                         "(drawn first); the rest from the training side. None: as many as "
                                         "search_theorems")
    withhold_fraction: float = Field(
        0.0, ge=0, lt=1, description="share of the corpus theorems that no single automation tactic closes whose "
        "known proofs are never trained on (drawn once, with the validation split, by theorem name): exercises "
        "the loop must prove by search, searched before the others; their traced pairs only check the corpus")
    withhold_families: list[str] = Field(
        default_factory=list, description="corpus families whose known proofs are never trained on (outside the "
        "validation split): exercises the loop must prove by search, searched before the others, e.g. [lsum]")
    exclude_families: list[str] = Field(
        default_factory=list, description="corpus families this profile leaves out entirely (never traced, trained "
        "on or searched), e.g. the tiny profile's [lfill, lsum]")
    library_pairs: int = Field(0, ge=0, description="pre-training: this many (type -> name) pairs of the premise "
                               "library, the goal `⊢ T` of a library lemma and the step `exact <its name>`: the "
                               "policy learns the library's names from their statements. Only lemmas of the pool's "
                               "module families (never a held-out family's) and never a pool theorem itself; "
                               "the smallest statements first (0: none; needs premises.library)")
    alpha_copies: int = Field(0, ge=0, description="alpha-renamed copies of each training pair (hypothesis names "
                              "changed consistently, burnqed_core.data.pairs.alpha_rename): teaches a small model to "
                              "copy names from the goal; validation pairs are never renamed")
    search_failed_family_boost: float = Field(
        2.0, ge=0, description="selection: a family's quota weight is its eligible theorems x (1 + boost x the "
        "share of its searched theorems no earlier search proved); 0: proportional to family size")
    search_retry_failed: bool = Field(True, description="selection: search theorems again that earlier "
                                      "iterations failed on, when never-searched ones run out")
    search_pool: str | None = Field(None, description="a theorem set searched instead of the corpus, e.g. "
                                    "core:pool (Lean's own library, burnqed_core.data.theorems.core_pool); the "
                                    "corpus is still traced and trained on. None: the corpus")
    search_curriculum: Curriculum = Field(
        "random", description="with search_pool: how each family's quota of never-searched theorems is drawn: a "
        "seeded random draw, or the smallest statements first (`burnqed_core.data.theorems.core_pool.curriculum_rank`)")
    search_retry_max: int | None = Field(None, ge=0, description="with search_pool: at most this many theorems that "
                                         "earlier iterations failed on are searched again each iteration, drawn "
                                         "first, beside new ones. None: only when new ones run out")
    automation_steps: AutomationSteps = Field(
        "exclude", description="iteration N > 0: positive trajectory steps whose tactic came from the search's "
        "automation candidates alone (source 'automation'): 'exclude' trains the policy on the structural steps "
        "between automation calls (steps it also sampled, source 'both', are kept); 'include' keeps them all")
    seed: int = 0
    trace_repo: str | None = Field(None, description="URL of a Lean repository to trace with LeanDojo (the `trace` "
                                   "extra) for the base tactic pairs, instead of `corpus`")
    trace_commit: str | None = Field(None, description="the commit of `trace_repo` to trace")

    @model_validator(mode="after")
    def _trace_pair(self) -> DataConfig:
        if (self.trace_repo is None) != (self.trace_commit is None):
            raise ValueError("data.trace_repo and data.trace_commit go together: set both or neither")
        return self


class EBMConfig(Section):
    """The goal-conditioned energy head and its training (docs/ebm.md)."""

    enabled: bool = Field(True, description="train an EBM at iterations N > 0 and let it guide their search")
    hidden_dims: list[int] = Field(default_factory=lambda: [512, 256, 128],
                                   description="MLP widths after the 3*d input (prod: 2048, 1024, 512 for d=4096)")
    dropout: float = Field(0.15, ge=0, lt=1)
    first_layer_scale: float = Field(0.1, gt=0, description="initial gain of the first layer (a head of ~25M "
                                                           "parameters at gain 1 explodes at its first steps)")
    power_iterations: int = Field(5, ge=1, description="spectral-norm power iterations per training forward")
    temperature_init: float = Field(1.0, gt=0)
    temperature_min: float = Field(0.05, gt=0, description="bounds of the learnable temperature; pinned = abort")
    temperature_max: float = Field(20.0, gt=0)
    temperature_check_every: int = Field(50, ge=1, description="log and check the temperature every N steps")
    temperature_patience: int = Field(3, ge=1, description="abort after N checks in a row at a bound (a pinned "
                                                          "temperature is a failed training)")
    lr: float = 3e-4
    weight_decay: float = 0.01
    steps: int = 500
    batch_size: int = Field(64, ge=1, description="positives per step")
    num_negatives: int = Field(4, ge=1, description="K negatives per positive: failed siblings first, then other "
                               "off-path states of the theorem, then states of other theorems")
    val_fraction: float = Field(0.2, ge=0, lt=1, description="theorems held out for validation (split by name)")
    eval_every: int = Field(50, ge=1)
    save_every: int = machine(100, ge=1, description="checkpoint every N steps (exact resume after a kill)")
    seed: int = 0
    encode_batch_size: int = machine(64, ge=1, description="texts per Policy.encode call")
    checkpoint_every: int = machine(512, ge=1, description="embeddings: write a cache part every N new states")
    hindsight: bool = Field(False, description="also learn from the searches that proved nothing: the known "
                            "(traced) proof of a training-side theorem gives its positives, the search's states off "
                            "that path its negatives (burnqed_core/ebm/hindsight.py); never an exercise's proof")
    joint: bool = Field(False, description="train the energy head with the LoRA adapter in lora_adapter (seeds' v2, "
                        "issue 67): each step backpropagates sft_loss + joint_lambda * InfoNCE through the adapter "
                        "and the head, the states encoded through the policy with the adapter active; the ebm stage "
                        "then takes that head instead of training one (burnqed_core/training/joint.py)")
    joint_lambda: float = Field(0.1, ge=0, description="joint: λ_ebm, the weight of the InfoNCE beside the SFT loss")
    joint_head_lr: float = Field(1e-3, gt=0, description="joint: the head's learning rate (the adapter's is "
                                 "training.lr)")
    joint_batch_size: int = Field(8, ge=1, description="joint: contrastive positives per step, each with "
                                  "num_negatives negatives (failed siblings first)")
    joint_monitor_every: int = Field(10, ge=1, description="joint: measure the probe set (centroid L2, linear "
                                     "probe), the temperature and both losses every N steps")
    joint_probe_states: int = Field(64, ge=4, description="joint: positive and negative states each in the fixed "
                                    "probe set")
    joint_abort_centroid_keep: float = Field(0.6, ge=0, le=1, description="joint: abort when the probe set's "
                                             "centroid L2 falls below this share of its value before training "
                                             "(the seeds' red line 3.0 against 5.0)")
    joint_abort_sft_patience: int = Field(5, ge=1, description="joint: abort when the SFT loss (mean over a monitor "
                                          "period) has not fallen below its best for N monitors in a row")


class EvalConfig(Section):
    """Evaluation on the held-out benchmark (``burnqed eval``, the loop's eval stage)."""

    budgets: list[int] = Field(default_factory=lambda: [100, 300, 600], min_length=1,
                               description="node budgets reported; one search per attempt runs at the largest")
    pass_k: int = Field(1, ge=1, description="attempts (independent seeds) per theorem: pass@k")
    num_candidates: int = 16
    max_theorems: int | None = Field(None, ge=1, description="cut each evaluated set to its first N theorems by "
                                     "name (quick runs)")
    also: list[str] = Field(default_factory=list, description="theorem sets evaluated beside data.benchmark and "
                            "reported apart, each with its own baselines, summary and report under "
                            "<eval>/sets/<name>/ ('bundled:<name>', .jsonl, .lean or a directory)")
    structural_baseline: bool = Field(True, description="measure baseline (c), the same search with no learned "
                                      "policy (structural steps + automation), once per set and settings (cached; "
                                      "shipped for the bundled sets under tiny)")
    sample: int | None = Field(None, ge=1, description="evaluate a fixed sample of this many theorems of "
                               "data.benchmark, spread over its families (seed 0; "
                               "`burnqed_core.data.theorems.sampling.stratified_sample`); None: all")
    also_sample: int | None = Field(None, ge=1, description="evaluate a fixed sample of this many theorems of "
                                    "each set of eval.also, spread over its families (seed 0; "
                                    "`burnqed_core.data.theorems.sampling.stratified_sample`); None: all")
    timeout_s: float = Field(600.0, gt=0, description="per-theorem safety cap on the time charged to it "
                             "(reported as timeouts); sized not to bind at the largest budget")
    regression_pp: float = Field(2.0, ge=0, description="go/no-go: a drop in solve rate (percentage points) "
                                 "beyond this at any budget or on the hard split is a regression")
    ebm_min_gain_pp: float = Field(0.0, ge=0, description="go/no-go: the EBM must add more than this (pp)")
    ebm_ablation: bool = Field(True, description="with an EBM, also run the eval without it (the ablation the "
                               "go/no-go's EBM gate reads; off: that gate is not applied and the report says so)")

    @field_validator("budgets")
    @classmethod
    def _budgets_positive(cls, v: list[int]) -> list[int]:
        if any(b < 1 for b in v):
            raise ValueError(f"node budgets must be >= 1, got {v}")
        return sorted(set(v))


class RerankConfig(Section):
    """The learned premise re-ranker (the ``premise_reranker`` stage, `burnqed_core.premises.rerank`): iteration
    N's model's own embeddings of a state and of each premise BM25 retrieved for it, through a linear projection
    trained with InfoNCE on the (state, premise) pairs of the found proofs of iterations < N; the search's
    retrieval then re-orders the ``candidates`` best BM25 hits (the premise rule unchanged: only what BM25
    returned under it is re-ordered)."""

    enabled: bool = Field(False, description="train a re-ranker at iterations N > 0 and re-rank the retrieval of "
                          "the searches of iteration N (the prover's and baseline (c) with retrieval's) with it")
    candidates: int = Field(16, ge=2, description="the BM25 hits re-ranked per state (its negatives in training)")
    dim: int | None = Field(None, ge=1, description="width of the projection (None: the encoder's own)")
    steps: int = Field(300, ge=0, description="optimiser steps")
    batch_size: int = Field(16, ge=1, description="(state, premise) pairs per step; each pair's in-batch negatives "
                            "are the other pairs' premises")
    lr: float = Field(3e-3, gt=0)
    weight_decay: float = Field(1e-2, ge=0, description="pull of both projections towards their shared initial map "
                                "(the encoder's own cosine)")
    val_fraction: float = Field(0.2, ge=0, lt=1, description="theorems (split by name) whose pairs only measure")
    recall_at: list[int] = Field(default_factory=lambda: [1, 3, 8], min_length=1,
                                 description="the k of the recall@k reported before and after training")
    require_gain: bool = Field(True, description="adopt the re-ranker only when, on its validation pairs, its "
                               "recall (the mean over recall_at) is at least BM25's; else the searches keep BM25's "
                               "order (a few dozen pairs overfit easily)")
    seed: int = 0
    encode_batch_size: int = machine(64, ge=1, description="texts per Policy.encode call")

    @field_validator("recall_at")
    @classmethod
    def _positive_ks(cls, v: list[int]) -> list[int]:
        if min(v) < 1:
            raise ValueError(f"premises.rerank.recall_at {v}: every k is at least 1")
        return sorted(set(v))


class PremisesConfig(Section):
    """The premise index (the ``premise_index`` stage, `burnqed_core.premises`): what a proof may cite, retrieved
    under the premise rule by the search's premise steps (``search.premises``)."""

    library: bool = Field(False, description="read the library's premises (Init and Std theorems, the module "
                          "import graph) with Lean: a few minutes once per Lean, cached under <home>/premises; off: "
                          "a theorem's own file's definitions and lemmas only")
    rerank: RerankConfig = Field(default_factory=RerankConfig)


class PipelineConfig(Section):
    """How the Dagster pipeline spreads a search stage: ``trajectories`` and ``eval_report`` run one step per
    shard of theorems (a pod of its own on Kubernetes), then merge. Not part of any stage's fingerprint: the
    merged output does not depend on it."""

    shard_size: int = Field(64, ge=1, description="theorems per shard of the trajectories search")
    eval_shard_size: int | None = Field(None, ge=1, description="theorems per shard of the eval (None: shard_size)")

    @property
    def eval_shard(self) -> int:
        return self.eval_shard_size or self.shard_size


class NightlyConfig(Section):
    """The nightly eval (the ``nightly_eval`` stage, run by the pipeline's schedule): the newest complete
    iteration on the eval's sets and on ``extra_benchmarks``, a dated report under
    ``<work_dir>/iter_N/nightly_eval/<YYYY-MM-DD>/``. When it runs (``cron``, ``timezone``) is the machine's."""

    cron: str = machine("0 3 * * *", description="when (five-field cron, in `timezone`)")
    timezone: str = machine("UTC", description="IANA time zone of `cron` and of the report's date")
    extra_benchmarks: list[str] = Field(default_factory=list, description="theorem sets evaluated besides "
                                        "data.benchmark ('bundled:<name>', .jsonl or .lean paths)")

    @field_validator("cron")
    @classmethod
    def _five_fields(cls, v: str) -> str:
        if len(v.split()) != 5:
            raise ValueError(f"nightly.cron {v!r}: expected five fields (minute hour day month weekday)")
        return v

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"nightly.timezone {v!r}: not an IANA time zone (e.g. UTC, Europe/Paris)") from None
        return v


class Profile(Section):
    name: str = machine("tiny")
    seed: int = machine(0)
    paths: PathsConfig = machine(default_factory=PathsConfig)
    lean: LeanConfig = Field(default_factory=LeanConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    ebm: EBMConfig = Field(default_factory=EBMConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    premises: PremisesConfig = Field(default_factory=PremisesConfig)
    pipeline: PipelineConfig = machine(default_factory=PipelineConfig)
    nightly: NightlyConfig = Field(default_factory=NightlyConfig)
    source: Path | None = machine(None, description="the file this profile was loaded from")

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        """``lean.embedded.install_dir`` defaults to ``<paths.home>/lean-wasm``: filled into (a copy of) the
        input before validation, since a profile never changes once built. Input of the wrong shape is
        left to the fields' own validation."""
        if not isinstance(data, dict):
            return data
        lean = data.get("lean", {})
        if isinstance(lean, LeanConfig):
            embedded: Any = lean.embedded
        elif isinstance(lean, dict):
            embedded = lean.get("embedded", {})
        else:
            return data
        if isinstance(embedded, EmbeddedLeanConfig):
            missing = embedded.install_dir is None
        elif isinstance(embedded, dict):
            missing = embedded.get("install_dir") is None
        else:
            return data
        home = _home(data.get("paths", {}))
        if not missing or home is None:
            return data
        install_dir = home / "lean-wasm"
        if isinstance(embedded, EmbeddedLeanConfig):
            embedded = embedded.model_copy(update={"install_dir": install_dir})
        else:
            embedded = {**embedded, "install_dir": install_dir}
        lean = lean.model_copy(update={"embedded": embedded}) if isinstance(lean, LeanConfig) \
            else {**lean, "embedded": embedded}
        return {**data, "lean": lean}


def _home(paths: Any) -> Path | None:
    """``paths.home`` as it will validate, from a `PathsConfig` or its raw mapping (None: not a valid one)."""
    if isinstance(paths, PathsConfig):
        return paths.home
    if not isinstance(paths, dict):
        return None
    if "home" not in paths:
        return default_home()
    home = paths["home"]
    return Path(home) if isinstance(home, str | os.PathLike) else None


ENV_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "BURNQED_HOME": ("paths", "home"),
    "BURNQED_WORK_DIR": ("paths", "work_dir"),
    "BURNQED_SGLANG_URL": ("policy", "sglang", "url"),
    "BURNQED_MODEL_PATH": ("policy", "model_path"),
    "BURNQED_PANTOGRAPH": ("lean", "pantograph", "executable"),
    "BURNQED_LEAN_PATH": ("lean", "pantograph", "lean_path"),
})


#: Where each key of the merged raw profile was written: key path -> the files (or ``environment VAR``,
#: ``override KEY``) that wrote it, in order; for a leaf, the one whose value is kept.
Origin = dict[tuple[str, ...], list[str]]


def _forget(origin: Origin, keys: tuple[str, ...]) -> None:
    for k in [k for k in origin if k[:len(keys)] == keys]:
        del origin[k]


def _mark(origin: Origin, keys: tuple[str, ...], value: Any, label: str) -> None:
    """``value`` written whole at ``keys`` by ``label``."""
    _forget(origin, keys)
    origin[keys] = [label]
    if isinstance(value, dict):
        for k, v in value.items():
            _mark(origin, (*keys, str(k)), v, label)


def _touch(origin: Origin, keys: tuple[str, ...], label: str) -> None:
    """``label`` wrote inside the mapping at ``keys``."""
    seen = origin.setdefault(keys, [])
    if label not in seen:
        seen.append(label)


def _set(tree: dict[str, Any], keys: tuple[str, ...], value: Any, origin: Origin | None = None,
         label: str = "") -> None:
    node = tree
    for i, k in enumerate(keys[:-1]):
        child = node.get(k)
        if not isinstance(child, dict):
            child = {}
            node[k] = child
            if origin is not None:
                _forget(origin, keys[:i + 1])
        if origin is not None:
            _touch(origin, keys[:i + 1], label)
        node = child
    node[keys[-1]] = value
    if origin is not None:
        _mark(origin, keys, value, label)


def _merge(tree: dict[str, Any], layer: Mapping[str, Any], origin: Origin, label: str,
           prefix: tuple[str, ...] = ()) -> None:
    """Deep-merge ``layer`` (a child's keys) into ``tree`` (its parents', merged) in place: mappings merge key
    by key, anything else (lists included) is replaced whole."""
    for k, v in layer.items():
        keys = (*prefix, str(k))
        if isinstance(v, dict) and isinstance(tree.get(k), dict):
            _touch(origin, keys, label)
            _merge(tree[k], v, origin, label, keys)
        else:
            tree[k] = v
            _mark(origin, keys, v, label)


def _env_overrides(environ: Mapping[str, str] | None = None) -> list[tuple[str, tuple[str, ...], Any]]:
    environ = os.environ if environ is None else environ
    out: list[tuple[str, tuple[str, ...], Any]] = []
    for var, keys in ENV_ALIASES.items():
        if environ.get(var):
            out.append((var, keys, environ[var]))
    for var, raw in environ.items():
        if var.startswith("BURNQED__") and len(var) > len("BURNQED__"):
            keys = tuple(k.lower() for k in var[len("BURNQED__"):].split("__"))
            out.append((var, keys, yaml.safe_load(raw) if raw else raw))
    return out


def env_overrides(environ: Mapping[str, str] | None = None) -> list[tuple[tuple[str, ...], Any]]:
    """(key path, value) for every override found in the environment."""
    return [(keys, value) for _, keys, value in _env_overrides(environ)]


EXTENDS = "extends"
LAYER = "layer"


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ProfileError(f"profile file not found: {path}") from None
    except yaml.YAMLError as e:
        raise ProfileError(f"profile {path} is not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise ProfileError(f"profile {path} must be a mapping of sections, got {type(raw).__name__}")
    return raw


def _is_layer(path: Path, raw: Mapping[str, Any]) -> bool:
    flag = raw.get(LAYER, False)
    if not isinstance(flag, bool):
        raise ProfileError(f"profile {path}: '{LAYER}' must be true or false, got {flag!r}")
    return flag


def _parent(spec: Any, child: Path) -> Path:
    """The file that ``extends: spec`` in ``child`` names."""
    if not isinstance(spec, str) or not spec.strip():
        raise ProfileError(f"profile {child}: '{EXTENDS}' must be a profile name or a path, got {spec!r}")
    p = Path(spec).expanduser()
    if p.suffix in (".yaml", ".yml") or "/" in spec or p.is_absolute():
        return p if p.is_absolute() else child.parent / p
    return REPO_CONFIGS / f"{spec}.yaml"


def _profile_files(path: Path) -> list[tuple[Path, dict[str, Any], bool]]:
    """The files of the profile at ``path``, base first (``path`` last): each with its own keys (``extends``
    and ``layer`` removed) and whether it is a layer."""
    files: list[tuple[Path, dict[str, Any], bool]] = []
    current, spec = path, None
    while True:
        if any(current.resolve() == f.resolve() for f, _, _ in files):
            cycle = " -> ".join(str(f) for f in [*(f for f, _, _ in files), current])
            raise ProfileError(f"profile files extend each other in a cycle: {cycle}")
        if files and not current.is_file():
            raise ProfileError(f"profile {files[-1][0]} extends {spec!r}: no such profile file {current}")
        raw = _read(current)
        spec = raw.pop(EXTENDS, None)
        layer = _is_layer(current, raw)
        raw.pop(LAYER, None)
        files.append((current, raw, layer))
        if spec is None:
            return files[::-1]
        current = _parent(spec, current)


def _bundled_profiles() -> list[str]:
    """The names of the bundled profiles (``configs/*.yaml``), layers left out."""
    out = []
    for q in sorted(REPO_CONFIGS.glob("*.yaml")):
        try:
            raw = yaml.safe_load(q.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            raw = None
        if not (isinstance(raw, dict) and raw.get(LAYER) is True):
            out.append(q.stem)
    return out


def resolve_profile_path(name_or_path: str | Path) -> Path:
    """A path, or the name of a bundled profile (``tiny``, ``small``, ``prod``)."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return p
    bundled = REPO_CONFIGS / f"{name_or_path}.yaml"
    if bundled.exists():
        return bundled
    raise ProfileError(f"no profile {name_or_path!r}: not a file, and not one of {_bundled_profiles()}")


def _written_in(loc: tuple[Any, ...], origin: Origin, path: Path) -> str:
    """`` (in FILE)`` for an error at ``loc`` written elsewhere than the profile file ``path``."""
    keys = tuple(str(x) for x in loc)
    while keys and keys not in origin:
        keys = keys[:-1]
    where = origin.get(keys) if keys else None
    if not where or where == [str(path)]:
        return ""
    return f" (in {', '.join(where)})"


def _format_validation_error(err: ValidationError, source: str, origin: Origin | None = None) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"]) or "<top level>"
        where = _written_in(e["loc"], origin, Path(source)) if origin is not None else ""
        if e["type"] == "extra_forbidden":
            parts.append(f"unknown key '{loc}'{where}")
        else:
            parts.append(f"'{loc}': {e['msg']} (got {e.get('input')!r}){where}")
    return f"invalid profile {source}: " + "; ".join(parts)


def load_profile(
    name_or_path: str | Path = "tiny",
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Profile:
    """Load and validate a profile file (and the files it extends).

    ``overrides`` maps dotted keys (``"search.max_nodes"``) to values and wins
    over the environment, which wins over the files.
    """
    path = resolve_profile_path(name_or_path)
    files = _profile_files(path)
    if files[-1][2]:
        raise ProfileError(f"{path} is a layer ('{LAYER}: true'), not a profile: load a profile that extends it "
                           f"(bundled: {', '.join(_bundled_profiles())})")
    raw: dict[str, Any] = {}
    origin: Origin = {}
    for file, keys, _ in files:
        _merge(raw, keys, origin, str(file))
    for var, keys, value in _env_overrides(environ):
        _set(raw, keys, value, origin, f"environment {var}")
    for dotted, value in (overrides or {}).items():
        _set(raw, tuple(dotted.split(".")), value, origin, f"override {dotted}")
    raw["source"] = str(path)
    try:
        return Profile.model_validate(raw)
    except ValidationError as e:
        raise ProfileError(_format_validation_error(e, str(path), origin)) from None
