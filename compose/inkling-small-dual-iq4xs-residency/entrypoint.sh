#!/bin/bash
# profilegen entrypoint for inkling-small-dual-iq4xs-residency: generated from the registry, do not edit.
# The container runs it as `bash -p entrypoint.sh`: the functions it calls (pg_*) are in
# helpers.sh beside it. It checks every setting, applies the patches, then starts the engine.
set -euo pipefail
source "${BASH_SOURCE[0]%/*}/helpers.sh"
# What it reads besides its tunables, each held to 4096 characters before it is used.
pg_inputs CUDA_VISIBLE_DEVICES NCCL_P2P_LEVEL PYTORCH_CUDA_ALLOC_CONF API_KEY_FILE PROFILEGEN_PATCH_ROOT PROFILEGEN_PACKAGE_DIR

# Tunables: NAME TYPE DEFAULT, then their bounds and choices; a typo fails loudly at boot.
pg_tunable CTX_SIZE int 262144
pg_range CTX_SIZE gt 0 - 0 '> 0'
pg_tunable BATCH_SIZE int 2048
pg_range BATCH_SIZE gt 0 - 0 '> 0'
pg_tunable UBATCH_SIZE int 2048
pg_range UBATCH_SIZE gt 0 - 0 '> 0'
pg_tunable NP int 1
pg_range NP gt 0 - 0 '> 0'
pg_tunable SPLIT_MODE word layer
pg_oneof SPLIT_MODE none layer row graph
pg_tunable TENSOR_SPLIT word 1,1
pg_ranges

# Weights: the engine loads them from the model folder (/models, MODEL_DIR on
# the host); a container started before `profilegen fetch` refuses here, naming where it
# looked, instead of handing the engine a path that is not there.
pg_weights file /models/inkling-small-gguf/UD-IQ4_XS/Inkling-Small-UD-IQ4_XS-00001-of-00004.gguf 'the model'"'"'s' inkling-small-dual-iq4xs-residency /models
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

pg_args=(
  -m /models/inkling-small-gguf/UD-IQ4_XS/Inkling-Small-UD-IQ4_XS-00001-of-00004.gguf
  --alias inkling-small
  -c "${CTX_SIZE}"
  -b "${BATCH_SIZE}"
  -ub "${UBATCH_SIZE}"
  -ngl 99
  -sm "${SPLIT_MODE}"
  -ts "${TENSOR_SPLIT}"
  -fa on
  -np "${NP}"
  -t 8
  -ot 'blk\.99999\.ffn_(gate|up|down)_exps\.weight=CUDA0,blk\.99999\.ffn_(gate|up|down)_exps\.weight=CUDA1,blk\.[0-9]+\.ffn_(gate|up|down)_exps\.weight=CPU'
  --no-mmap
  --cache-prompt
  --fit off
  --moe-cache auto
  --host 0.0.0.0
  --port 8080
)
exec /app/llama-server ${pg_pre_args[@]+"${pg_pre_args[@]}"} "${pg_args[@]}" ${pg_spec_args[@]+"${pg_spec_args[@]}"}
