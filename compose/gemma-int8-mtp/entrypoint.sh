#!/bin/bash
# profilegen entrypoint for gemma-int8-mtp: generated from the registry, do not edit.
# The container runs it as `bash -p entrypoint.sh`: the functions it calls (pg_*) are in
# helpers.sh beside it. It checks every setting, applies the patches, then starts the engine.
set -euo pipefail
source "${BASH_SOURCE[0]%/*}/helpers.sh"
# What it reads besides its tunables, each held to 4096 characters before it is used.
pg_inputs CUDA_VISIBLE_DEVICES NCCL_P2P_LEVEL PYTORCH_CUDA_ALLOC_CONF API_KEY_FILE PROFILEGEN_PATCH_ROOT PROFILEGEN_PACKAGE_DIR

# Tunables: NAME TYPE DEFAULT, then their bounds and choices; a typo fails loudly at boot.
pg_tunable TP int 2
pg_range TP gt 0 - 0 '> 0'
pg_tunable PP int 1
pg_range PP gt 0 - 0 '> 0'
pg_tunable MAX_MODEL_LEN int 262144
pg_range MAX_MODEL_LEN gt 0 - 0 '> 0'
pg_tunable GPU_MEMORY_UTILIZATION float 0.95
pg_range GPU_MEMORY_UTILIZATION gt 0 le 1 '> 0 and <= 1'
pg_tunable MAX_NUM_SEQS int 4
pg_range MAX_NUM_SEQS gt 0 - 0 '> 0'
pg_tunable MAX_NUM_BATCHED_TOKENS int 4096
pg_range MAX_NUM_BATCHED_TOKENS gt 0 - 0 '> 0'
pg_tunable KV_CACHE_DTYPE word int8_per_token_head
pg_oneof KV_CACHE_DTYPE auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 int8_per_token_head
pg_tunable TEMP float 1.0
pg_range TEMP ge 0 - 0 '>= 0'
pg_tunable TOP_P float 0.95
pg_range TOP_P gt 0 le 1 '> 0 and <= 1'
pg_tunable TOP_K int 64
pg_range TOP_K ge -1 - 0 '>= -1'
pg_tunable MIN_P float 0.0
pg_range MIN_P ge 0 le 1 '>= 0 and <= 1'
pg_tunable REPEAT_PENALTY float 1.0
pg_range REPEAT_PENALTY gt 0 - 0 '> 0'
pg_tunable NVLINK_MODE word auto
pg_oneof NVLINK_MODE auto force_off force_on pcie_p2p
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
pg_weights folder /root/.cache/huggingface/gemma-4-31b-autoround-int4 'the model'"'"'s' gemma-int8-mtp /root/.cache/huggingface
if ((SPEC_N > 0)); then
  pg_weights folder /root/.cache/huggingface/gemma-4-31b-it-assistant 'the drafter'"'"'s' gemma-int8-mtp /root/.cache/huggingface ', or SPEC=off to serve without drafting'
fi
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
pg_verify pr40391 install.sh a528e40742daa5aca81a949682d34de594ab95a16055d975cd37cbfea085240f
pg_verify pr40391 kv_cache_shape_utils.py 4b350426ff03b32d1d299dd9a9871560da48e7a9e59a0ac3db0f9b3c0305a93c
pg_verify pr40391 pr40391-v0.22.0.patch 90d8e9660388d10794caef36b2c20acc3ffeb61cd302cc21bd4f2892c01552b8
pg_verify pr42006 install.sh a142a0e135de1db29ca90e2331a7744fc2f6ba7c143be6e393fc85160b508631
pg_verify pr42006 pr42006-v0.22.0.patch 20514f5cfc2bcaefc9429ffa6ea57bbf4140e7d530bc9de2d5afa3926e42bc78
pg_verify '' /etc/club3090/gemma-canonical-template.jinja ae53464bf3be25802b3a5b37def7fd89667067d7577049b3b2d74c4d8de4c6d4
# vllm-pr40391-v0.22.0: what vllm-pr40391-v0.22.0 does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/gemma-4-31b/vllm/patches/vllm-pr40391-v0.22.0/README.md upstream))
pg_script pr40391 install.sh bash 0 '' ''
# vllm-pr42006-v0.22.0: what vllm-pr42006-v0.22.0 does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/gemma-4-31b/vllm/patches/vllm-pr42006-v0.22.0/README.md upstream))
pg_script pr42006 install.sh bash 0 '' ''
# google-canonical-chat-template-vllm-v0220: what google-canonical-chat-template does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/gemma-4-31b/vllm/patches/google-canonical-chat-template/README.md upstream))

pg_spec_args=()
if ((SPEC_N > 0)); then
  pg_spec_method=draft_model
  pg_say "speculative decoding: $pg_spec_method, width ${SPEC_N}"
  pg_spec_args+=(--speculative-config '{"model":"/root/.cache/huggingface/gemma-4-31b-it-assistant","num_speculative_tokens":'"${SPEC_N}"'}')
else
  pg_say "speculative decoding: off"
fi

pg_args=(
  --model /root/.cache/huggingface/gemma-4-31b-autoround-int4
  --served-model-name gemma-4-31b gemma-4-31b-autoround
  --tensor-parallel-size "${TP}"
  --pipeline-parallel-size "${PP}"
  --max-model-len "${MAX_MODEL_LEN}"
  --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION}"
  --max-num-seqs "${MAX_NUM_SEQS}"
  --max-num-batched-tokens "${MAX_NUM_BATCHED_TOKENS}"
  --kv-cache-dtype "${KV_CACHE_DTYPE}"
  --trust-remote-code
  --chat-template /etc/club3090/gemma-canonical-template.jinja
  --reasoning-parser gemma4
  --enable-auto-tool-choice
  --tool-call-parser gemma4
  --override-generation-config '{"temperature":'"${TEMP}"',"top_p":'"${TOP_P}"',"top_k":'"${TOP_K}"',"min_p":'"${MIN_P}"',"repetition_penalty":'"${REPEAT_PENALTY}"'}'
  --host 0.0.0.0
  --port 8000
)
# The key is the engine's alone: exported as it starts, after every patch installer ran.
[[ -z ${pg_engine_key:-} ]] || export VLLM_API_KEY=$pg_engine_key
exec vllm serve ${pg_pre_args[@]+"${pg_pre_args[@]}"} "${pg_args[@]}" ${pg_spec_args[@]+"${pg_spec_args[@]}"}
