"""The shell the explain box runs: its stubs, the script of one job, the driver, and the
recorders that stand in for the patch steps. Plain text, no Python logic: `sandbox.py` lays out
the jobs these scripts read."""

from __future__ import annotations

JOBS = "/pg-explain-jobs"
RUN_DIR = "/run/pg-explain"
# Where a command named without a path lives in the image (the first of PATH).
COMMAND_DIR = "/usr/local/bin"
# Commands that run beside or before the engine and only take time.
IDLE_NAMES = ("lmcache", "sleep")

# The stubs are POSIX shell: a launch starts several, and sh starts in a fraction of bash's
# time. The engine's records what `exec` handed it; `env -0` prints exactly its environment.
ENGINE_STUB = f"""#!/bin/sh
read -r out <{RUN_DIR}/launch
printf '%s\\0' "$0" "$@" >"$out/engine.argv"
exec /usr/bin/env -0 >"$out/engine.env"
"""
# GPUs and link come from a file of the launch's own: the container's environment must stay
# exactly what the launch is given.
NVIDIA_SMI = f"""#!/bin/sh
read -r out <{RUN_DIR}/launch
read -r n link <"$out/gpus"
case "$*" in
  -L*)
    i=0
    while [ "$i" -lt "$n" ]; do echo "GPU $i: NVIDIA GeForce RTX 3090 (UUID: GPU-stub-$i)"; i=$((i + 1)); done ;;
  "topo -m"* | "topo -p2p"*)
    i=0
    while [ "$i" -lt "$n" ]; do printf '\\tGPU%d' "$i"; i=$((i + 1)); done
    echo
    i=0
    while [ "$i" -lt "$n" ]; do
      printf 'GPU%d' "$i"
      j=0
      while [ "$j" -lt "$n" ]; do
        if [ "$i" -eq "$j" ]; then cell=X
        elif [ "$1 $2" = "topo -m" ]; then cell=$link
        elif [ "$link" = NV4 ]; then cell=OK
        else cell=CNS; fi
        printf '\\t%s' "$cell"
        j=$((j + 1))
      done
      echo
      i=$((i + 1))
    done ;;
esac
exit 0
"""
# In a launch the stubs are functions of the job's bash: `exec` of an engine records the argv
# and the environment the engine would be handed (exactly the exported variables) and ends the
# launch, and `nvidia-smi` answers for the launch's GPUs. A launch then costs one fork: no
# process is started for the engine, the GPU queries or the environment's listing. The files
# at the engines' paths stay (for `command -v`, and for anything not started by `exec`).
_FUNCTIONS = r"""
pgsbx_names() {
  compgen -e >RUNDIR/names
  mapfile -t pgsbx_all <RUNDIR/names
}
pgsbx_exec() {
  local pgsbx_out=$1 pgsbx_engines=$2 pgsbx_path pgsbx_dir pgsbx_n pgsbx_a
  shift 2
  if (($# == 0)) || [[ $1 == -* ]]; then builtin exec "$@"; fi
  pgsbx_path=$1
  if [[ $1 != */* ]]; then
    pgsbx_path=
    IFS=: read -ra pgsbx_dirs <<<"${PATH-}"
    for pgsbx_dir in ${pgsbx_dirs[@]+"${pgsbx_dirs[@]}"}; do
      if [[ -f ${pgsbx_dir:-.}/$1 && -x ${pgsbx_dir:-.}/$1 ]]; then
        pgsbx_path=${pgsbx_dir:-.}/$1
        break
      fi
    done
  fi
  if [[ -z $pgsbx_path || ! -e $pgsbx_path ]]; then
    printf '%s: line %s: exec: %s: not found\n' "${BASH_SOURCE[1]-bash}" "${BASH_LINENO[0]}" "$1" >&2
    exit 127
  fi
  [[ " $pgsbx_engines " == *" $pgsbx_path "* ]] || builtin exec "$@"
  printf '%s\0' "$pgsbx_path" "${@:2}" >"$pgsbx_out/engine.argv"
  pgsbx_names
  for pgsbx_n in ${pgsbx_all[@]+"${pgsbx_all[@]}"}; do
    [[ -v $pgsbx_n ]] || continue
    pgsbx_a=${!pgsbx_n@a}
    [[ $pgsbx_a == *[aA]* ]] || printf '%s=%s\0' "$pgsbx_n" "${!pgsbx_n}"
  done >"$pgsbx_out/engine.env"
  exit 0
}
pgsbx_smi() {
  local n=$1 link=$2 i j cell
  shift 2
  case "$*" in
    -L*)
      for ((i = 0; i < n; i++)); do echo "GPU $i: NVIDIA GeForce RTX 3090 (UUID: GPU-stub-$i)"; done ;;
    "topo -m"* | "topo -p2p"*)
      for ((i = 0; i < n; i++)); do printf '\tGPU%d' "$i"; done
      echo
      for ((i = 0; i < n; i++)); do
        printf 'GPU%d' "$i"
        for ((j = 0; j < n; j++)); do
          if ((i == j)); then cell=X
          elif [[ "$1 $2" == "topo -m" ]]; then cell=$link
          elif [[ $link == NV4 ]]; then cell=OK
          else cell=CNS; fi
          printf '\t%s' "$cell"
        done
        echo
      done ;;
  esac
  return 0
}
"""
# One job: its mounts (all at once from an fstab, or one by one where a mount lands inside an
# earlier one), then each launch with exactly its environment, as a forked subshell of this
# bash -p: its variables emptied and set to the launch's, the script read as `bash -p SCRIPT`
# reads it. The job's own variables and functions are named pgsbx_*.
JOB = (
    _FUNCTIONS.replace("RUNDIR", RUN_DIR)
    + f"""set -u
pgsbx_job=$1
# The mount points a job makes are the job's alone: each path made that was not there (the
# outermost new folder of a path) is noted in made, and the driver removes them once the
# job's namespace is gone, so that no later job of the box sees a path of this one's.
pgsbx_made=()
pgsbx_note() {{
  local at=$1 mount
  [[ ! -e $at ]] || return 0
  while [[ -n ${{at%/*}} && ! -e ${{at%/*}} ]]; do at=${{at%/*}}; done
  for mount in ${{pgsbx_mounted[@]+"${{pgsbx_mounted[@]}}"}}; do
    [[ $at != "$mount"/* ]] || return 0  # inside the job's own folder, mounted there
  done
  pgsbx_made+=("$at")
}}
pgsbx_noted() {{
  ((${{#pgsbx_made[@]}} == 0)) || printf '%s\\0' "${{pgsbx_made[@]}}" >"$pgsbx_job/made"
}}
pgsbx_mounted=()
if [[ -f $pgsbx_job/fstab ]]; then
  mapfile -d '' pgsbx_dirs <"$pgsbx_job/dirs"
  mapfile -d '' pgsbx_files <"$pgsbx_job/files"
  for pgsbx_dst in ${{pgsbx_dirs[@]+"${{pgsbx_dirs[@]}}"}} ${{pgsbx_files[@]+"${{pgsbx_files[@]}}"}}; do
    pgsbx_note "$pgsbx_dst"
  done
  pgsbx_noted
  ((${{#pgsbx_made[@]}} == 0)) || mkdir -p -- "${{pgsbx_dirs[@]}}" 2>/dev/null
  for pgsbx_dst in ${{pgsbx_files[@]+"${{pgsbx_files[@]}}"}}; do
    [[ -e $pgsbx_dst ]] || : >"$pgsbx_dst" 2>/dev/null
  done
  # The fstab's sources are absolute; mount's complaint goes to a file, not through a subshell.
  if ! mount --all --fstab "$pgsbx_job/fstab" 2>"$pgsbx_job/mount.err"; then
    IFS= read -r pgsbx_said <"$pgsbx_job/mount.err" || :
    printf 'a container path cannot be mounted (%s)\\n' "${{pgsbx_said#mount: }}" >"$pgsbx_job/error"
    exit 0
  fi
else
  while IFS= read -r -d '' pgsbx_src && IFS= read -r -d '' pgsbx_dst && IFS= read -r -d '' pgsbx_ro; do
    pgsbx_note "$pgsbx_dst"
    pgsbx_noted
    if [[ -d $pgsbx_src ]]; then
      mkdir -p "$pgsbx_dst" 2>/dev/null
    else
      mkdir -p "${{pgsbx_dst%/*}}/" 2>/dev/null
      [[ -e $pgsbx_dst ]] || : >"$pgsbx_dst" 2>/dev/null
    fi
    if ! mount --bind "$pgsbx_src" "$pgsbx_dst" 2>/dev/null; then
      printf 'the container path %s cannot be mounted\\n' "$pgsbx_dst" >"$pgsbx_job/error"
      exit 0
    fi
    [[ $pgsbx_ro == 0 ]] || mount -o remount,bind,ro "$pgsbx_dst"
    pgsbx_mounted+=("$pgsbx_dst")
  done <"$pgsbx_job/mounts"
fi
mapfile -d '' pgsbx_engines <"$pgsbx_job/engines"
pgsbx_stubs=${{pgsbx_engines[*]}}
for pgsbx_launch in "$pgsbx_job"/launch/*/; do
  pgsbx_launch=${{pgsbx_launch%/}}
  : >"$pgsbx_launch/steps.log"
  printf '%s\\n' "$pgsbx_launch" >{RUN_DIR}/launch
  mapfile -d '' pgsbx_env <"$pgsbx_launch/env"
  mapfile -d '' pgsbx_argv <"$pgsbx_launch/argv"
  read -r pgsbx_gpus pgsbx_link <"$pgsbx_launch/gpus"
  if [[ ${{#pgsbx_argv[@]}} -ge 3 && ${{pgsbx_argv[0]}} == */bash && ${{pgsbx_argv[1]}} == -p && -f ${{pgsbx_argv[2]}} ]]; then
    (
      pgsbx_names
      unset ${{pgsbx_all[@]+"${{pgsbx_all[@]}}"}} 2>/dev/null
      for pgsbx_pair in ${{pgsbx_env[@]+"${{pgsbx_env[@]}}"}}; do
        case ${{pgsbx_pair%%=*}} in
          IFS | SHELLOPTS | BASHOPTS | BASH_ENV | ENV) ;;  # what bash -p does not take in
          *) export "$pgsbx_pair" ;;
        esac
      done
      eval "exec() {{ pgsbx_exec ${{pgsbx_launch@Q}} ${{pgsbx_stubs@Q}} \\"\\$@\\"; }}
nvidia-smi() {{ pgsbx_smi $pgsbx_gpus $pgsbx_link \\"\\$@\\"; }}"
      set -- "${{pgsbx_argv[@]:2}}"
      unset pgsbx_job pgsbx_launch pgsbx_env pgsbx_argv pgsbx_gpus pgsbx_link pgsbx_n pgsbx_pair \\
        pgsbx_all pgsbx_engines pgsbx_stubs pgsbx_dirs pgsbx_files pgsbx_dst pgsbx_src pgsbx_ro \\
        pgsbx_said pgsbx_made pgsbx_mounted
      unset -f pgsbx_note pgsbx_noted
      # The script's path is written into the command, so that no variable of the job is left.
      eval "shift; cd / && source ${{1@Q}}"
    ) </dev/null >/dev/null 2>"$pgsbx_launch/stderr"
  else
    (cd / && exec /usr/bin/env -i -- ${{pgsbx_env[@]+"${{pgsbx_env[@]}}"}} "${{pgsbx_argv[@]}}") \\
      </dev/null >/dev/null 2>"$pgsbx_launch/stderr"
  fi
  echo $? >"$pgsbx_launch/code"
done
"""
)
# Each job in a mount namespace of its own; the mount points it made go with it.
DRIVER = f"""set -u
for job in "$@"; do
  unshare --mount --propagation private -- /bin/bash -p {RUN_DIR}-job.sh "$job"
  if [[ -s $job/made ]]; then
    mapfile -d '' made <"$job/made"
    rm -rf -- "${{made[@]}}"
  fi
done
"""
# Appended to the job's helpers.sh: patch steps are checked as the container would find them
# (the file at its mount, the installer's interpreter on PATH) and recorded, not applied: the
# engine's package is not here, and the sha256 of every file was checked when it was bundled.
RECORDERS = f"""
# explain: patch steps are checked and recorded instead of applied.
pg_explain_step() {{
  local IFS=$'\\t' out
  read -r out <{RUN_DIR}/launch
  printf '%s\\n' "$*" >>"$out/steps.log"
}}
pg_verify() {{
  local file=$pg_patch_root/$1/$2
  [[ -n $1 ]] || file=$2
  [[ -f $file && -r $file ]] || pg_die 1 "patch file $1/$2 is missing from $pg_patch_root; refusing to boot"
  pg_explain_step verify "$1" "$2" "$3"
}}
pg_diff() {{ pg_explain_step diff "$1" "$2" "strip $3"; }}
pg_script() {{
  command -v "$3" >/dev/null || pg_die 1 "patch installer $1/$2 needs $3, which is not on PATH; refusing to boot"
  pg_explain_step script "$1" "$2" "$3" "required=$4"
}}
"""
