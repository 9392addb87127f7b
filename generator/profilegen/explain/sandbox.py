"""Runs containers' entrypoints in a box of their own, with stub engines, many at a time.

Each job is one container's view: the files its mounts put at container paths (the rendered
entrypoint and helpers, the bundle's patch files, empty stand-ins for the model folder and for
host paths) and the launches to run there, each with its own environment. All jobs of a batch
share one box (`profilegen.sandbox`: the host's root read-only underneath, no network, nothing
of the host's home or work folders); inside it every job gets a mount namespace of its own,
where its mounts are applied in order, as Compose applies them, so a later mount shadows an
earlier one exactly as it would in the container. The engine and `nvidia-smi` are stubs at
their paths; the engine's stub records the argv and environment it was started with.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import Bind, Box, run

TIMEOUT_S = 20
JOBS = "/pg-explain-jobs"
RUN_DIR = "/run/pg-explain"
# Variables bash itself exports to what it starts; they say nothing about the engine's input.
SHELL_VARIABLES = frozenset({"PATH", "PWD", "OLDPWD", "SHLVL", "_"})
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
# One job: its mounts in order, then each launch with exactly its environment. The stubs read
# which launch runs from a file and write into its folder: nothing to mount or copy per launch.
_JOB = f"""set -u
job=$1
while IFS= read -r -d '' src && IFS= read -r -d '' dst && IFS= read -r -d '' ro; do
  src=$job/$src
  if [[ -d $src ]]; then
    mkdir -p "$dst" 2>/dev/null
  else
    mkdir -p "$(dirname "$dst")" 2>/dev/null
    [[ -e $dst ]] || : >"$dst" 2>/dev/null
  fi
  if ! mount --bind "$src" "$dst" 2>/dev/null; then
    printf 'the container path %s cannot be mounted\\n' "$dst" >"$job/error"
    exit 0
  fi
  [[ $ro == 0 ]] || mount -o remount,bind,ro "$dst"
done <"$job/mounts"
mkdir -p {RUN_DIR}
for launch in "$job"/launch/*/; do
  : >"$launch/steps.log"
  printf '%s\\n' "$launch" >{RUN_DIR}/launch
  mapfile -d '' env <"$launch/env"
  mapfile -d '' argv <"$launch/argv"
  if [[ ${{#argv[@]}} -ge 3 && ${{argv[0]}} == */bash && ${{argv[1]}} == -p && -f ${{argv[2]}} ]]; then
    # `bash -p SCRIPT`, as a forked subshell of this bash -p: its environment emptied and
    # set to exactly the launch's, the script read as bash reads it; no bash to start.
    (
      while IFS= read -r name; do unset "$name" 2>/dev/null; done < <(compgen -e)
      for pair in ${{env[@]+"${{env[@]}}"}}; do
        case ${{pair%%=*}} in
          IFS | SHELLOPTS | BASHOPTS | BASH_ENV | ENV) ;;  # what bash -p does not take in
          *) export "$pair" ;;
        esac
      done
      cd / && set -- "${{argv[@]:3}}" && source "${{argv[2]}}"
    ) </dev/null >/dev/null 2>"$launch/stderr"
  else
    (cd / && exec /usr/bin/env -i -- ${{env[@]+"${{env[@]}}"}} "${{argv[@]}}") \\
      </dev/null >/dev/null 2>"$launch/stderr"
  fi
  echo $? >"$launch/code"
done
"""
_DRIVER = f"""set -u
for job in "$@"; do
  unshare --mount --propagation private -- /bin/bash -p {RUN_DIR}-job.sh "$job"
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


@dataclass(frozen=True)
class Mount:
    """A bind mount of the container: `source` is a path inside the job's own folder."""

    source: str
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class Layout:
    """A container's files: the job folder's contents and the mounts that place them."""

    files: Mapping[str, bytes]  # job-folder path -> content
    dirs: tuple[str, ...]  # job-folder paths of empty folders
    mounts: tuple[Mount, ...]


@dataclass(frozen=True)
class Launch:
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    gpus: int
    nvlink: bool


@dataclass(frozen=True)
class Job:
    layout: Layout
    launches: tuple[Launch, ...]
    engines: tuple[str, ...]  # the binaries a launch may end in (stubs are put there)


@dataclass(frozen=True)
class Run:
    """What happened: the engine's argv and environment if it was started, else the refusal."""

    exit_code: int | None
    stderr: str
    exe: str | None = None
    argv: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timed_out: bool = False
    # The patch steps the entrypoint took, in order (tab-separated words).
    log: tuple[str, ...] = ()

    @property
    def launched(self) -> bool:
        return self.exe is not None


def stub_path(binary: str) -> str:
    """Where a command lives in the box: its own path, or the image's command folder."""
    return binary if binary.startswith("/") else f"{COMMAND_DIR}/{binary}"


def run_jobs(jobs: Sequence[Job], workers: int | None = None) -> list[list[Run]]:
    """Runs every launch of every job; the jobs are shared out over a few boxes."""
    if not jobs:
        return []
    boxes = max(1, min(workers or os.cpu_count() or 1, 4, len(jobs)))
    shares = [list(range(i, len(jobs), boxes)) for i in range(boxes)]
    results: list[list[Run]] = [[] for _ in jobs]
    with ThreadPoolExecutor(max_workers=boxes) as pool:
        done = list(pool.map(lambda s: _run_box([jobs[i] for i in s]), shares))
    for share, runs in zip(shares, done, strict=True):
        for index, job_runs in zip(share, runs, strict=True):
            results[index] = job_runs
    return results


def _run_box(jobs: list[Job]) -> list[list[Run]]:
    batch = Path(tempfile.mkdtemp(prefix="profilegen-explain-"))
    try:
        names = [_write_job(batch / str(i), job) for i, job in enumerate(jobs)]
        files = {
            f"{RUN_DIR}-job.sh": _JOB.encode(),
            f"{RUN_DIR}-driver.sh": _DRIVER.encode(),
            "/usr/bin/nvidia-smi": NVIDIA_SMI.encode(),
            **{stub_path(n): b"#!/bin/sh\nexit 0\n" for n in IDLE_NAMES},
            **{stub_path(e): ENGINE_STUB.encode() for job in jobs for e in job.engines},
        }
        box = Box(
            binds=(Bind(batch, JOBS, read_only=False),),
            files=files,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        )
        launches = sum(len(job.launches) for job in jobs)
        run(
            box,
            ["/bin/bash", "-p", f"{RUN_DIR}-driver.sh", *(f"{JOBS}/{n}" for n in names)],
            timeout=60 + TIMEOUT_S * launches,
        )
        return [_read_job(batch / name, job) for name, job in zip(names, jobs, strict=True)]
    finally:
        shutil.rmtree(batch, ignore_errors=True)


def _nul(items: Sequence[str]) -> bytes:
    return b"".join(item.encode() + b"\0" for item in items)


def _write_job(folder: Path, job: Job) -> str:
    for rel, data in job.layout.files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel in job.layout.dirs:
        (folder / rel).mkdir(parents=True, exist_ok=True)
    (folder / "mounts").write_bytes(
        _nul([w for m in job.layout.mounts for w in (m.source, m.target, "01"[m.read_only])])
    )
    for i, launch in enumerate(job.launches):
        where = folder / "launch" / f"{i:04d}"
        where.mkdir(parents=True)
        (where / "env").write_bytes(_nul([f"{k}={v}" for k, v in launch.env]))
        (where / "argv").write_bytes(_nul(list(launch.argv)))
        link = "NV4" if launch.nvlink else "PHB"
        (where / "gpus").write_text(f"{max(launch.gpus, 1)} {link}\n")
    return folder.name


def _read_nul(path: Path) -> list[str]:
    if not path.is_file():
        return []
    data = path.read_bytes().decode("utf-8", errors="replace")
    return data.split("\0")[:-1] if data else []


def _read_job(folder: Path, job: Job) -> list[Run]:
    error = folder / "error"
    if error.is_file():
        message = error.read_text(errors="replace").strip()
        return [Run(1, f"profilegen: {message}; refusing to boot\n") for _ in job.launches]
    return [_read_launch(folder / "launch" / f"{i:04d}") for i in range(len(job.launches))]


def _read_launch(where: Path) -> Run:
    stderr = (where / "stderr").read_text(errors="replace") if (where / "stderr").is_file() else ""
    code_text = (where / "code").read_text().strip() if (where / "code").is_file() else ""
    code = int(code_text) if code_text.lstrip("-").isdigit() else None
    timed_out = code in (None, 137)
    steps = (
        tuple((where / "steps.log").read_text(errors="replace").splitlines())
        if (where / "steps.log").is_file()
        else ()
    )
    words = _read_nul(where / "engine.argv")
    if not words:
        return Run(None if timed_out else code, stderr, timed_out=timed_out, log=steps)
    pairs = [item.partition("=") for item in _read_nul(where / "engine.env")]
    env = tuple(sorted((k, v) for k, _, v in pairs if k not in SHELL_VARIABLES))
    exe = words[0].rsplit("/", 1)[-1]
    return Run(code, stderr, exe, tuple(words[1:]), env, log=steps)
