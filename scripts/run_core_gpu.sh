#!/usr/bin/env bash
# The core profile (Lean's own library as the theorem pool, docs/core-pool.md) on a GPU machine with 16 cores:
# a larger model built and pre-trained here (no download: ~30 M parameters instead of tiny's ~1 M), trained and
# served on the GPU, and more embedded Lean workers (one per 2 cores) for larger searches, iterations 0, 1, 2.
# Issue 65: the premise index (read once per Lean, cached), structural and premise steps in every search, and 512
# Lean checks per theorem for the prover and both searched baselines ((c), (c) with retrieval) alike.
# Prepared for when such a machine is available; no test depends on it. Needs the embedded Lean (`burnqed lean
# setup`, ~1 GB under ~/.cache/burnqed) and the package installed (scripts/setup.sh).
#
#   bash scripts/run_core_gpu.sh [extra `burnqed loop` arguments]
#
# Environment: WORKERS (Lean workers, default: cores / 2, at most 7: each holds 5-8 GB), RUN (the run directory,
# default runs/core_gpu). The profile written to $RUN/profile.yaml extends configs/core.yaml; edit it there to
# change a setting (the run's fingerprints follow the file).
#
# Issue 67, joint LoRA + EBM training (docs/ebm.md), prepared, not yet run on a GPU:
#   JOINT=1 bash scripts/run_core_gpu.sh   ebm.joint on: from iteration 1 the adapter and the energy head train
#                                          in one loop (one forward pass, sft + 0.1 * InfoNCE), the monitor
#                                          aborts a collapsing run; default RUN runs/core_gpu_joint
#   ABC=1 bash scripts/run_core_gpu.sh     also withholds 30% of the corpus as exercises (data.withhold_fraction)
#                                          and, after the loop, runs `burnqed ebm compare-configs --iteration 1`:
#                                          A/B/C on the unsearched exercises (never core:test); default RUN
#                                          runs/core_gpu_abc (with JOINT=1 the loop's iteration 1 is C and B is
#                                          trained by the command, else the other way round)
# On a 7B with QLoRA (configs/prod.yaml) the same path runs: the joint step appends the contrastive states to
# the last SFT micro-batch (benchmarks/joint_step.py measures its time and memory against an SFT-only step).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
bash scripts/setup.sh
. .venv/bin/activate
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU visible to torch')"
CORES="$(nproc)"
WORKERS="${WORKERS:-$(( CORES / 2 < 7 ? CORES / 2 : 7 ))}"
JOINT="${JOINT:-0}"
ABC="${ABC:-0}"
SUFFIX="$([ "$ABC" = 1 ] && echo _abc || ([ "$JOINT" = 1 ] && echo _joint) || true)"
RUN="${RUN:-$REPO/runs/core_gpu$SUFFIX}"
WITHHOLD="$([ "$ABC" = 1 ] && echo 0.3 || echo 0.0)"
JOINT_YAML="$([ "$JOINT" = 1 ] && echo true || echo false)"
mkdir -p "$RUN"
cat > "$RUN/profile.yaml" <<EOF
# written by scripts/run_core_gpu.sh: the core profile with a larger model on a GPU and ${WORKERS} Lean workers
extends: $REPO/configs/core.yaml
name: core_gpu
paths:
  work_dir: $RUN
lean:
  num_workers: $WORKERS
  worker_rss_limit_mb: 9000
policy:
  device: cuda
  batch_size: 128
search:
  max_nodes: 128
  max_depth: 24
  max_checks: 512              # equal compute in Lean checks for every searcher (core.yaml: 128 on 2 cores)
  premises: {enabled: true, k: 6}  # more premises per expansion when checks are cheap (core.yaml: 3)
  concurrency: $(( WORKERS * 4 ))
  frontier_batch: 16
training:
  device: cuda
  max_seq_len: 512
  batch_size: 32
  max_steps: 600
  max_steps_later: 300
  tiny_model:                  # ~30 M parameters, built and pre-trained here
    vocab_size: 2048
    hidden_size: 512
    num_layers: 8
    num_heads: 8
    num_kv_heads: 4
    intermediate_size: 1408
    max_position_embeddings: 1024
    pretrain_steps: 3000
    pretrain_lr: 6.0e-4
    pretrain_batch_size: 64
  lr: 6.0e-4
ebm:
  joint: $JOINT_YAML           # issue 67: adapter and energy head trained together from iteration 1
data:
  withhold_fraction: $WITHHOLD  # ABC=1: exercises for burnqed ebm compare-configs (never core:test)
  max_tokens: 512
  search_theorems: 400         # pool theorems per iteration (more workers, more searches), by the size curriculum
  search_retry_max: 20
eval:
  budgets: [16, 64, 128]
  sample: null                 # all of core:test (524) and core:dev (530)
  also_sample: null
pipeline:
  shard_size: 100
  eval_shard_size: 200
EOF
export DAGSTER_HOME="${DAGSTER_HOME:-$RUN/dagster}"
echo "core on the GPU: $WORKERS Lean workers, profile $RUN/profile.yaml (ebm.joint: $JOINT_YAML, A/B/C: $ABC)"
if [ "$ABC" != 1 ]; then
  exec burnqed loop --profile "$RUN/profile.yaml" --iterations 0,1,2 --last-until eval_report "$@"
fi
burnqed loop --profile "$RUN/profile.yaml" --iterations 0,1 --last-until trajectories "$@"
exec burnqed ebm compare-configs --profile "$RUN/profile.yaml" --iteration 1 --no-progress
