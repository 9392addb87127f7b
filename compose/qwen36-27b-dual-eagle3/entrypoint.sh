#!/bin/bash
# profilegen entrypoint for qwen36-27b-dual-eagle3: generated from the registry, do not edit.
# The container runs it as `bash -p entrypoint.sh`: the functions it calls (pg_*) are in
# helpers.sh beside it. It checks every setting, applies the patches, then starts the engine.
set -euo pipefail
source "${BASH_SOURCE[0]%/*}/helpers.sh"
# What it reads besides its tunables, each held to 4096 characters before it is used.
pg_inputs CUDA_VISIBLE_DEVICES NCCL_P2P_LEVEL PYTORCH_CUDA_ALLOC_CONF API_KEY_FILE PROFILEGEN_PATCH_ROOT PROFILEGEN_PACKAGE_DIR

# Tunables: NAME TYPE DEFAULT, then their bounds and choices; a typo fails loudly at boot.
pg_tunable TP int 2
pg_range TP gt 0 - 0 '> 0'
pg_tunable CONTEXT_LENGTH int 32768
pg_range CONTEXT_LENGTH gt 0 - 0 '> 0'
pg_tunable GPU_MEMORY_UTILIZATION float 0.85
pg_range GPU_MEMORY_UTILIZATION gt 0 le 1 '> 0 and <= 1'
pg_tunable MAX_RUNNING_REQUESTS int 4
pg_range MAX_RUNNING_REQUESTS gt 0 - 0 '> 0'
pg_tunable KV_CACHE_DTYPE word fp8_e5m2
pg_oneof KV_CACHE_DTYPE auto fp8_e5m2 fp8_e4m3
pg_tunable QUANTIZATION word auto-round
pg_tunable NVLINK_MODE word force_off
pg_oneof NVLINK_MODE auto force_off force_on pcie_p2p
pg_tunable CUDA_VISIBLE_DEVICES word 0,1
pg_ranges
# Speculative decoding: SPEC_N sets the draft width, SPEC=off forces 0 (see helpers.sh).
pg_spec_width SPEC_N 3 8

# GPU guard: tensor parallelism spreads the model over TP GPUs of this container; with fewer
# visible the engine cannot start, so refuse before anything is loaded (unknown: no guard).
if [[ -n ${CUDA_VISIBLE_DEVICES-} ]]; then
  IFS=, read -ra pg_visible <<<"$CUDA_VISIBLE_DEVICES"
  pg_gpu_count=${#pg_visible[@]}
else
  pg_count_gpus
  pg_gpu_count=$pg_gpus
fi
if ((pg_gpu_count > 0 && pg_gpu_count < TP)); then
  pg_die 2 "TP=$TP needs $TP GPUs, this container sees $pg_gpu_count; refusing to boot"
fi
# Weights: the engine loads them from the model folder (/models, MODEL_DIR on
# the host); a container started before `profilegen fetch` refuses here, naming where it
# looked, instead of handing the engine a path that is not there.
pg_weights folder /models/qwen3.6-27b-autoround-int4 'the model'"'"'s' qwen36-27b-dual-eagle3 /models
if ((SPEC_N > 0)); then
  pg_weights folder /models/qwen3.6-27b-prism-eagle3/compressed 'the drafter'"'"'s' qwen36-27b-dual-eagle3 /models ', or SPEC=off to serve without drafting'
fi
pg_pre_args=()
# NVLink (or PCIe peer-to-peer), forced or detected at boot; without it custom all-reduce is off.
pg_nvlink_setup NVLINK_MODE
[[ $pg_nvlink == 1 ]] || pg_pre_args+=(--disable-custom-all-reduce)
# API key: API_KEY_FILE (a file in the container, such as a mounted secret) or else API_KEY.
# It reaches the engine, never on its command line or in a log.
pg_read_api_key
if [[ -n $pg_api_key ]]; then
  pg_engine_label=SGLang
  pg_die 2 "$pg_engine_label takes an API key only on its command line, where every process on the host can read it; leave API_KEY unset and put the gateway (with LITELLM_MASTER_KEY) in front of it"
  pg_say "API key: required of every request"
fi
unset pg_api_key

pg_spec_args=()
if ((SPEC_N > 0)); then
  pg_spec_method=eagle3
  pg_say "speculative decoding: $pg_spec_method, width ${SPEC_N}"
  # Chain drafting verifies SPEC_N draft tokens together with the root token.
  pg_draft_tokens=$((SPEC_N + 1))
  pg_spec_args+=(--speculative-algorithm EAGLE3)
  pg_spec_args+=(--speculative-draft-model-path /models/qwen3.6-27b-prism-eagle3/compressed)
  pg_spec_args+=(--speculative-draft-model-quantization unquant)
  pg_spec_args+=(--speculative-num-steps "${SPEC_N}")
  pg_spec_args+=(--speculative-eagle-topk 1)
  pg_spec_args+=(--speculative-num-draft-tokens "${pg_draft_tokens}")
else
  pg_say "speculative decoding: off"
fi

pg_args=(
  --model-path /models/qwen3.6-27b-autoround-int4
  --served-model-name qwen3.6-27b-eagle3-dual
  --tp-size "${TP}"
  --dtype bfloat16
  --quantization "${QUANTIZATION}"
  --kv-cache-dtype "${KV_CACHE_DTYPE}"
  --context-length "${CONTEXT_LENGTH}"
  --mem-fraction-static "${GPU_MEMORY_UTILIZATION}"
  --max-running-requests "${MAX_RUNNING_REQUESTS}"
  --trust-remote-code
  --mamba-scheduler-strategy extra_buffer
  --max-mamba-cache-size 8
  --mm-attention-backend sdpa
  --disable-cuda-graph
  --host 0.0.0.0
  --port 30000
)
exec python3 -m sglang.launch_server ${pg_pre_args[@]+"${pg_pre_args[@]}"} "${pg_args[@]}" ${pg_spec_args[@]+"${pg_spec_args[@]}"}
