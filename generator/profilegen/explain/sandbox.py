"""Runs a container's entrypoint under bash in a throw-away folder with stub executables.

The stubs stand in for the engine (they record the argv and environment they were started
with), for `nvidia-smi` (N GPUs, with or without NVLink), for companion servers started
beside the engine (`lmcache`) and for `sleep` (waiting changes nothing the engine receives);
every other command the script runs is the host's own (bash, awk, grep, sha256sum). The
script explain runs has them as shell functions (`SHELL_STUBS`); the executables serve what
it starts otherwise (a leader's `ray start`, a worker's `exec ray`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 20.0
# Variables bash itself sets; they say nothing about what the engine was given.
SHELL_VARIABLES = frozenset({"PATH", "PWD", "OLDPWD", "SHLVL", "_"})

# The stubs, as shell functions defined at the top of the script explain runs: the engine's
# `exec` is rewritten to call `pg_explain_exec`, which records what exec would have handed
# over (the argv and every exported, set variable) and ends the script as the engine's clean
# exit would. A run then starts bash and the host tools the script itself uses, no more.
SHELL_STUBS = r"""pg_explain_exec() {
  printf '%s\0' "$@" >"$PG_EXPLAIN_OUT/engine.argv"
  local pg_explain_var
  for pg_explain_var in $(compgen -e); do
    if [[ -v $pg_explain_var ]]; then printf '%s=%s\0' "$pg_explain_var" "${!pg_explain_var}"; fi
  done >"$PG_EXPLAIN_OUT/engine.env"
  trap - EXIT
  exit 0
}
nvidia-smi() {
  local n=$PG_EXPLAIN_GPUS link=$PG_EXPLAIN_LINK i j cell
  case "$*" in
    -L*) for ((i = 0; i < n; i++)); do echo "GPU $i: NVIDIA GeForce RTX 3090 (UUID: GPU-stub-$i)"; done ;;
    "topo -m"* | "topo -p2p"*)
      for ((i = 0; i < n; i++)); do printf '\tGPU%d' "$i"; done; echo
      for ((i = 0; i < n; i++)); do
        printf 'GPU%d' "$i"
        for ((j = 0; j < n; j++)); do
          if ((i == j)); then cell=X
          elif [[ $1 == topo && $2 == -m ]]; then cell=$link
          elif [[ $link == NV4 ]]; then cell=OK
          else cell=CNS; fi
          printf '\t%s' "$cell"
        done
        echo
      done ;;
  esac
  return 0
}
lmcache() { return 0; }
sleep() { return 0; }
"""
# The same functions as executables, for what the script starts otherwise (a leader's
# `ray start`). They are written once per process, before any of them runs: writing an
# executable while another thread forks can leave it open in a child, and exec then fails
# (ETXTBSY). What changes per run comes in through PG_EXPLAIN_* variables, which the report
# leaves out.
_ENGINE_STUB = "#!/bin/bash\n" + SHELL_STUBS + 'pg_explain_exec "${0##*/}" "$@"\n'
_NVIDIA_SMI = "#!/bin/bash\n" + SHELL_STUBS + 'nvidia-smi "$@"\n'
# `ray` too: a multi-node worker execs it, and a leader runs it before its engine (the
# engine's own record then replaces the one `ray start` left).
ENGINE_NAMES = ("vllm", "llama-server", "python3", "ray")
# Commands that run beside or before the engine and only take time.
IDLE_NAMES = ("lmcache", "sleep")
_STUBS: list[Path] = []
_LOCK = threading.Lock()


def _stub_dir(engine: str) -> Path:
    with _LOCK:
        if not _STUBS:
            folder = Path(tempfile.mkdtemp(prefix="profilegen-stubs-"))
            atexit.register(shutil.rmtree, folder, True)
            for name in ENGINE_NAMES:
                _write_executable(folder / name, _ENGINE_STUB)
            _write_executable(folder / "nvidia-smi", _NVIDIA_SMI)
            for name in IDLE_NAMES:
                _write_executable(folder / name, "#!/bin/sh\nexit 0\n")
            _STUBS.append(folder)
        if not (_STUBS[0] / engine).is_file():
            _write_executable(_STUBS[0] / engine, _ENGINE_STUB)
        return _STUBS[0]


@dataclass(frozen=True)
class Run:
    """What happened: the engine's argv and environment if it was started, else the refusal."""

    exit_code: int | None
    stderr: str
    exe: str | None = None
    argv: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timed_out: bool = False
    # Lines the script appended to the log file it was given (explain's patch recorder).
    log: tuple[str, ...] = ()

    @property
    def launched(self) -> bool:
        return self.exe is not None


def _write_executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def _read_nul(path: Path) -> list[str]:
    data = path.read_bytes().decode("utf-8", errors="replace")
    return data.split("\0")[:-1] if data else []


def run_entrypoint(
    argv_for: Callable[[Path], list[str]],
    env: dict[str, str],
    *,
    engine: str,
    gpus: int,
    nvlink: bool,
) -> Run:
    """Runs the container's entrypoint + command with `env`, under stubs.

    `argv_for` gets the path of a log file the script may append to and returns the argv.
    """
    stubs = _stub_dir(engine)
    with tempfile.TemporaryDirectory(prefix="profilegen-explain-") as tmp:
        box = Path(tmp)
        log = box / "steps.log"
        log.touch()
        run_env = {
            **env,
            "PATH": f"{stubs}:/usr/local/bin:/usr/bin:/bin",
            "PG_EXPLAIN_OUT": str(box),
            "PG_EXPLAIN_GPUS": str(max(gpus, 1)),
            "PG_EXPLAIN_LINK": "NV4" if nvlink else "PHB",
            "TMPDIR": str(box),  # what the script creates with mktemp goes with the folder
        }
        code, stderr, timed_out = _run(argv_for(log), run_env, box)
        steps = tuple(log.read_text(encoding="utf-8", errors="replace").splitlines())
        out_argv, out_env = box / "engine.argv", box / "engine.env"
        if not out_argv.is_file():
            return Run(code, stderr, timed_out=timed_out, log=steps)
        words = _read_nul(out_argv)
        pairs = [item.partition("=") for item in _read_nul(out_env)]
        engine_env = tuple(
            sorted(
                (k, v)
                for k, _, v in pairs
                if k not in SHELL_VARIABLES
                and not k.startswith("PG_EXPLAIN_")
                and not (k == "TMPDIR" and v == str(box))
            )
        )
        return Run(code, stderr, words[0], tuple(words[1:]), engine_env, log=steps)


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int | None, str, bool]:
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a timeout kills the whole process group
    )
    try:
        _, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return None, err.decode("utf-8", errors="replace"), True
    return proc.returncode, err.decode("utf-8", errors="replace"), False
