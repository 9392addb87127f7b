#!/bin/bash
# profilegen entrypoint for diffusiongemma-dual: generated from the registry, do not edit.
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
pg_tunable GPU_MEMORY_UTILIZATION float 0.82
pg_range GPU_MEMORY_UTILIZATION gt 0 le 1 '> 0 and <= 1'
pg_tunable MAX_NUM_SEQS int 1
pg_range MAX_NUM_SEQS gt 0 - 0 '> 0'
pg_tunable MAX_NUM_BATCHED_TOKENS int 2048
pg_range MAX_NUM_BATCHED_TOKENS gt 0 - 0 '> 0'
pg_tunable KV_CACHE_DTYPE word auto
pg_oneof KV_CACHE_DTYPE auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 int8_per_token_head
pg_tunable ATTN_BACKEND word TRITON_ATTN
pg_tunable NVLINK_MODE word auto
pg_oneof NVLINK_MODE auto force_off force_on pcie_p2p
pg_ranges

# Hardware guard (NVIDIA GeForce RTX 3090, sm 8.6): which KV dtypes each attention backend takes; none named, the engine picks one that takes it.
pg_gpu_name='NVIDIA GeForce RTX 3090'
pg_kv_backend=${ATTN_BACKEND-}
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
pg_weights folder /root/.cache/huggingface/diffusiongemma-26b-a4b-it-fp8-dynamic 'the model'"'"'s' diffusiongemma-dual /root/.cache/huggingface
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
pg_verify '' /etc/club3090/gemma-canonical-template.jinja ae53464bf3be25802b3a5b37def7fd89667067d7577049b3b2d74c4d8de4c6d4
pg_verify '' /usr/local/lib/python3.12/dist-packages/vllm/model_executor/kernels/linear/scaled_mm/marlin.py ecca001733782eba4672db2bea0dc2477bf362401277abc184bc616b4f3deea5
pg_verify '' /usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py 0ac73f9010f4b75c95133a727ebbe0eb3ffa52a313bae53620ec9dd7f9aee1f4
pg_verify '' /usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/diffusion_gemma.py fefd0453e1af9f7bb634761d4131a2d03cb53f31c15fec31aeea60ec6d6fec5f
# google-canonical-chat-template-vllm-v0240: what google-canonical-chat-template does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/gemma-4-31b/vllm/patches/google-canonical-chat-template/README.md upstream))
# marlin: what marlin does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/diffusiongemma-26b-a4b/vllm/patches/gemma-image-fixes/README.md upstream))
# marlin-utils-fp8: what marlin-utils-fp8 does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/diffusiongemma-26b-a4b/vllm/patches/gemma-image-fixes/README.md upstream))
# diffusion-gemma: what diffusion-gemma does at boot, as the catalogue ships it (drop when the pinned image includes it (see models/diffusiongemma-26b-a4b/vllm/patches/gemma-image-fixes/README.md upstream))

pg_spec_args=()

pg_args=(
  --model /root/.cache/huggingface/diffusiongemma-26b-a4b-it-fp8-dynamic
  --served-model-name diffusiongemma-26b-a4b
  --tensor-parallel-size "${TP}"
  --pipeline-parallel-size "${PP}"
  --max-model-len "${MAX_MODEL_LEN}"
  --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION}"
  --max-num-seqs "${MAX_NUM_SEQS}"
  --max-num-batched-tokens "${MAX_NUM_BATCHED_TOKENS}"
  --kv-cache-dtype "${KV_CACHE_DTYPE}"
  --attention-backend "${ATTN_BACKEND}"
  --enforce-eager
  --trust-remote-code
  --chat-template /etc/club3090/gemma-canonical-template.jinja
  --reasoning-parser gemma4
  --enable-auto-tool-choice
  --tool-call-parser gemma4
  --override-generation-config '{"max_new_tokens":16384}'
  --generation-config auto
  --hf-overrides '{"diffusion_sampler":"entropy_bound","diffusion_entropy_bound":0.1}'
  --host 0.0.0.0
  --port 8000
)
# The key is the engine's alone: exported as it starts, after every patch installer ran.
[[ -z ${pg_engine_key:-} ]] || export VLLM_API_KEY=$pg_engine_key
exec vllm serve ${pg_pre_args[@]+"${pg_pre_args[@]}"} "${pg_args[@]}" ${pg_spec_args[@]+"${pg_spec_args[@]}"}
