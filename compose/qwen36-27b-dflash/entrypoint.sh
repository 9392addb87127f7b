#!/bin/bash
# profilegen entrypoint for qwen36-27b-dflash: generated from the registry, do not edit.
# The container runs it as `bash -p entrypoint.sh`: the functions it calls (pg_*) are in
# helpers.sh beside it. It checks every setting, applies the patches, then starts the engine.
set -euo pipefail
source "${BASH_SOURCE[0]%/*}/helpers.sh"
# What it reads besides its tunables, each held to 4096 characters before it is used.
pg_inputs CUDA_VISIBLE_DEVICES NCCL_P2P_LEVEL PYTORCH_CUDA_ALLOC_CONF API_KEY_FILE PROFILEGEN_PATCH_ROOT PROFILEGEN_PACKAGE_DIR

# Tunables: NAME TYPE DEFAULT, then their bounds and choices; a typo fails loudly at boot.
pg_tunable CTX_SIZE int 102400
pg_range CTX_SIZE gt 0 - 0 '> 0'
pg_tunable BATCH_SIZE int 2048
pg_range BATCH_SIZE gt 0 - 0 '> 0'
pg_tunable UBATCH_SIZE int 512
pg_range UBATCH_SIZE gt 0 - 0 '> 0'
pg_tunable KV_TYPE word q5_0
pg_oneof KV_TYPE bf16 f16 f32 iq4_nl q4_0 q4_1 q5_0 q5_1 q8_0
pg_tunable NP int 1
pg_range NP gt 0 - 0 '> 0'
pg_tunable REASONING word false
pg_tunable TEMP float 0.6
pg_range TEMP ge 0 - 0 '>= 0'
pg_tunable TOP_P float 1.0
pg_range TOP_P gt 0 le 1 '> 0 and <= 1'
pg_tunable TOP_K int 20
pg_range TOP_K ge -1 - 0 '>= -1'
pg_tunable MIN_P float 0.0
pg_range MIN_P ge 0 le 1 '>= 0 and <= 1'
pg_ranges
# Speculative decoding: SPEC_N sets the draft width, SPEC=off forces 0 (see helpers.sh).
pg_spec_width SPEC_N 1 16

# Weights: the engine loads them from the model folder (/models, MODEL_DIR on
# the host); a container started before `profilegen fetch` refuses here, naming where it
# looked, instead of handing the engine a path that is not there.
pg_weights file /models/qwen3.6-27b-gguf/unsloth-q5ks/Qwen3.6-27B-Q5_K_S.gguf 'the model'"'"'s' qwen36-27b-dflash /models
if ((SPEC_N > 0)); then
  pg_weights file /models/qwen3.6-27b-gguf/anbeeld-dflash-q4km/Qwen3.6-27B-DFlash-Q4_K_M.gguf 'the drafter'"'"'s' qwen36-27b-dflash /models ', or SPEC=off to serve without drafting'
fi
pg_pre_args=()
# API key: API_KEY_FILE (a file in the container, such as a mounted secret) or else API_KEY.
# It reaches the engine in a file only this user can read, never on its command line or in a log.
pg_read_api_key
if [[ -n $pg_api_key ]]; then
  pg_key_file=$(umask 077 && mktemp)
  printf '%s\n' "$pg_api_key" >"$pg_key_file"
  pg_pre_args+=(--api-key-file "$pg_key_file")
  pg_say "API key: required of every request"
fi
unset pg_api_key

pg_spec_args=()
if ((SPEC_N > 0)); then
  pg_spec_method=dflash
  pg_say "speculative decoding: $pg_spec_method, width ${SPEC_N}"
  pg_spec_args+=(--spec-type dflash)
  pg_spec_args+=(--spec-draft-model /models/qwen3.6-27b-gguf/anbeeld-dflash-q4km/Qwen3.6-27B-DFlash-Q4_K_M.gguf)
else
  pg_say "speculative decoding: off"
fi
# llama-server takes on, off or auto; the boolean spellings map onto the first two.
case ${REASONING,,} in
  1 | true | yes | on) pg_reasoning=on ;;
  0 | false | no | off) pg_reasoning=off ;;
  auto) pg_reasoning=auto ;;
  *) pg_die 1 "REASONING must be on, off or auto, got '${REASONING}'" ;;
esac

pg_args=(
  -m /models/qwen3.6-27b-gguf/unsloth-q5ks/Qwen3.6-27B-Q5_K_S.gguf
  --ctx-size "${CTX_SIZE}"
  -b "${BATCH_SIZE}"
  -ub "${UBATCH_SIZE}"
  -ngl all
  --flash-attn on
  --cache-type-k "${KV_TYPE}"
  --cache-type-v q4_1
  -np "${NP}"
  --jinja
  --reasoning "${pg_reasoning}"
  --temp "${TEMP}"
  --top-p "${TOP_P}"
  --top-k "${TOP_K}"
  --min-p "${MIN_P}"
  --no-host
  --kv-unified
  --cache-ram 0
  --spec-draft-ngl all
  --spec-dflash-cross-ctx 1024
  --host 0.0.0.0
  --port 8080
)
exec /app/llama-server ${pg_pre_args[@]+"${pg_pre_args[@]}"} "${pg_args[@]}" ${pg_spec_args[@]+"${pg_spec_args[@]}"}
