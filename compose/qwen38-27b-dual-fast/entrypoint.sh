#!/bin/bash
# profilegen entrypoint for qwen38-27b-dual-fast: generated from the registry, do not edit.
# The container runs it as `bash -p entrypoint.sh`: the functions it calls (pg_*) are in
# helpers.sh beside it. It checks every setting, applies the patches, then starts the engine.
set -euo pipefail
source "${BASH_SOURCE[0]%/*}/helpers.sh"
# What it reads besides its tunables, each held to 4096 characters before it is used.
pg_inputs CUDA_VISIBLE_DEVICES NCCL_P2P_LEVEL PYTORCH_CUDA_ALLOC_CONF API_KEY_FILE PROFILEGEN_PATCH_ROOT PROFILEGEN_PACKAGE_DIR

# Tunables: NAME TYPE DEFAULT, then their bounds and choices; a typo fails loudly at boot.
pg_tunable TP int 2
pg_range TP gt 0 - 0 '> 0'
pg_tunable MAX_MODEL_LEN int 262144
pg_range MAX_MODEL_LEN gt 0 - 0 '> 0'
pg_tunable GPU_MEMORY_UTILIZATION float 0.9
pg_range GPU_MEMORY_UTILIZATION gt 0 le 1 '> 0 and <= 1'
pg_tunable MAX_NUM_SEQS int 1
pg_range MAX_NUM_SEQS gt 0 - 0 '> 0'
pg_tunable MAX_NUM_BATCHED_TOKENS int 8192
pg_range MAX_NUM_BATCHED_TOKENS gt 0 - 0 '> 0'
pg_tunable LONG_PREFILL_TOKEN_THRESHOLD int 4096
pg_range LONG_PREFILL_TOKEN_THRESHOLD ge 0 - 0 '>= 0'
pg_tunable KV_CACHE_DTYPE word fp8_e4m3
pg_oneof KV_CACHE_DTYPE auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 int8_per_token_head
pg_tunable ENABLE_THINKING bool false
pg_tunable REASONING_EFFORT word low
[[ ${ENABLE_THINKING} != true || -n ${TEMP-} ]] || TEMP=1.0
pg_tunable TEMP float 0.7
pg_range TEMP ge 0 - 0 '>= 0'
[[ ${ENABLE_THINKING} != true || -n ${TOP_P-} ]] || TOP_P=0.95
pg_tunable TOP_P float 0.8
pg_range TOP_P gt 0 le 1 '> 0 and <= 1'
pg_tunable TOP_K int 20
pg_range TOP_K ge -1 - 0 '>= -1'
pg_tunable MIN_P float 0.0
pg_range MIN_P ge 0 le 1 '>= 0 and <= 1'
[[ ${ENABLE_THINKING} != true || -n ${PRESENCE_PENALTY-} ]] || PRESENCE_PENALTY=0.0
pg_tunable PRESENCE_PENALTY float 1.5
pg_range PRESENCE_PENALTY ge -2 le 2 '>= -2 and <= 2'
pg_tunable NVLINK_MODE word auto
pg_oneof NVLINK_MODE auto force_off force_on pcie_p2p
pg_tunable W4A8 bool 1
pg_ranges
# Speculative decoding: SPEC_N sets the draft width, SPEC=off forces 0 (see helpers.sh).
pg_spec_width SPEC_N 4 8

# Hardware guard (NVIDIA GeForce RTX 3090, sm 8.6): which KV dtypes each attention backend takes; none named, the engine picks one that takes it.
pg_gpu_name='NVIDIA GeForce RTX 3090'
pg_kv_backend=""
case $pg_kv_backend in
FLASH_ATTN) pg_kv_ok=(auto bfloat16 float16) ;;
FLASHINFER) pg_kv_ok=(auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2) ;;
TRITON_ATTN) pg_kv_ok=(auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 int8_per_token_head) ;;
"") pg_kv_ok=(auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 int8_per_token_head) ;;
  *) pg_kv_ok=() ;;
esac
if ((${#pg_kv_ok[@]})) && [[ " ${pg_kv_ok[*]} " != *" ${KV_CACHE_DTYPE} "* ]]; then
  pg_die 2 "KV_CACHE_DTYPE=${KV_CACHE_DTYPE} is not accepted by ${pg_kv_backend:-any attention backend} on $pg_gpu_name (takes: ${pg_kv_ok[*]}); refusing to boot"
fi
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
# Weights: the engine loads them from the model folder (/root/.cache/huggingface, MODEL_DIR on
# the host); a container started before `profilegen fetch` refuses here, naming where it
# looked, instead of handing the engine a path that is not there.
pg_weights folder /root/.cache/huggingface/qwen3.8-27b-autoround-int4 'the model'"'"'s' qwen38-27b-dual-fast /root/.cache/huggingface
pg_pre_args=()
# NVLink (or PCIe peer-to-peer), forced or detected at boot; without it custom all-reduce is off.
pg_nvlink_setup NVLINK_MODE
[[ $pg_nvlink == 1 ]] || pg_pre_args+=(--disable-custom-all-reduce)
# API key: API_KEY_FILE (a file in the container, such as a mounted secret) or else API_KEY.
# It reaches the engine as VLLM_API_KEY, exported only as the engine starts, never on its command line or in a log.
pg_read_api_key
if [[ -n $pg_api_key ]]; then
  pg_engine_key=$pg_api_key
  pg_say "API key: required of every request"
fi
unset pg_api_key
# Patches: every mounted file is verified against its pinned sha256 first, then the steps
# apply in order; a step whose marker is present is skipped; any failure refuses the boot.
pg_patch_root=${PROFILEGEN_PATCH_ROOT:-/etc/club3090}
pg_pkg=${PROFILEGEN_PACKAGE_DIR:-/usr/local/lib/python3.12/dist-packages/vllm}
pg_verify w4a8 install.sh 69b567894d8880fbb63033c2dfcf27dc81acd422442919d3a4d9dd1c40d1114d
pg_verify w4a8 patch-inc-w4a8.py 36c7541ee8323ac41e898259902f00ba583c0998be5d30b5444043984482f882
pg_verify w4a8 patch-negscale-fold.py 20ba5256314a20035555560bf3b016a7bef32ed3050a5e95bfa0e0cdfaeb8c41
pg_verify pr48375 install.sh 7f90298659c9302d8c683dd8506365eab10184a94a3151c891a40e95c346a055
pg_verify pr48375 patch_mamba_drop_eagle_block.py c1d691a3f005a1da5e443851e5434d904eba2ad327b20710f4122cd55d3bc71d
pg_verify gdn-async-order install.sh e09186081103742845a5a979c5ef33366509d5d27a7e9ccc6e130d9dd83a895c
pg_verify gdn-async-order patch_gdn_mtp_async_spec_order.py 3cee2b08b5697ac4ba4d3ad932f2061499d14fdb3908e576874b2996ef3b201f
# w4a8-int8-act: faster W4 decode on Ampere through int8 activations (drop when vLLM ships W4A8 Marlin support)
if [[ ${W4A8} == true ]]; then
  export VLLM_MARLIN_INPUT_DTYPE=int8
  pg_required=1
else
  unset VLLM_MARLIN_INPUT_DTYPE
  pg_required=0
fi
pg_script w4a8 install.sh bash "$pg_required" '' ''
# vllm-pr48375-mamba-drop-eagle-block: spec-decode drafters on hybrid attention/mamba models (drop when the pinned vLLM image includes PR 48375)
pg_script pr48375 install.sh bash 1 '' ''
# vllm-gdn-mtp-async-spec-order: correct GDN recurrent state with MTP and async scheduling (drop when the pinned vLLM image orders GDN state updates for async speculative decoding)
pg_script gdn-async-order install.sh bash 1 '' ''

pg_spec_args=()
if ((SPEC_N > 0)); then
  pg_spec_method=mtp
  pg_say "speculative decoding: $pg_spec_method, width ${SPEC_N}"
  pg_spec_args+=(--speculative-config '{"method":"mtp","num_speculative_tokens":'"${SPEC_N}"'}')
else
  pg_say "speculative decoding: off"
fi

pg_args=(
  --model /root/.cache/huggingface/qwen3.8-27b-autoround-int4
  --served-model-name qwen3.8-27b
  --quantization auto_round
  --dtype bfloat16
  --tensor-parallel-size "${TP}"
  --max-model-len "${MAX_MODEL_LEN}"
  --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION}"
  --max-num-seqs "${MAX_NUM_SEQS}"
  --max-num-batched-tokens "${MAX_NUM_BATCHED_TOKENS}"
  --long-prefill-token-threshold "${LONG_PREFILL_TOKEN_THRESHOLD}"
  --kv-cache-dtype "${KV_CACHE_DTYPE}"
  --enable-prefix-caching
  --enable-chunked-prefill
  --trust-remote-code
  --reasoning-parser qwen3
  --enable-auto-tool-choice
  --tool-call-parser qwen3_coder
  --default-chat-template-kwargs '{"enable_thinking":'"${ENABLE_THINKING}"',"reasoning_effort":"'"${REASONING_EFFORT}"'"}'
  --override-generation-config '{"temperature":'"${TEMP}"',"top_p":'"${TOP_P}"',"top_k":'"${TOP_K}"',"min_p":'"${MIN_P}"',"presence_penalty":'"${PRESENCE_PENALTY}"'}'
  --host 0.0.0.0
  --port 8000
)
# The key is the engine's alone: exported as it starts, after every patch installer ran.
[[ -z ${pg_engine_key:-} ]] || export VLLM_API_KEY=$pg_engine_key
exec vllm serve ${pg_pre_args[@]+"${pg_pre_args[@]}"} "${pg_args[@]}" ${pg_spec_args[@]+"${pg_spec_args[@]}"}
