"""The box: `unshare` gives a process its own namespaces; a fixed script builds its root.

The new root is a size-capped tmpfs. The host's `/usr` and `/etc` appear under a throw-away
overlay (readable, writes vanish with the box), `/bin`, `/sbin` and `/lib*` read-only; `/dev`
holds only the harmless devices; `/proc` is the box's own; home, work and temporary folders of
the host are not there at all. The box's files and bind mounts are then laid at their
container paths, the root is pivoted, and the command starts with exactly the box's
environment. Nothing of the box's environment reaches a shell on the host side: the script
that builds the root runs under `bash -p` with an empty environment and reads the box's
variables from a file.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ProfilegenError, UsageError

# An exit code of the box's own set-up, apart from any the command may return.
SETUP_FAILED = 125
_PREFIX = "profilegen sandbox: "

# The script that builds the box; its arguments are the staging folder and the command.
_SETUP = r"""
set -euo pipefail
stage=$1
shift
pg_fail() { printf 'profilegen sandbox: %s\n' "$*" >&2; exit 125; }
mount --make-rprivate / || pg_fail "cannot make the box's mounts private"
nr=$stage/root
mount -t tmpfs -o "size=$(<"$stage/size"),mode=755" pgbox "$nr" || pg_fail "cannot mount a tmpfs"
for d in usr etc; do
  mkdir -p "$nr/.layers/$d/upper" "$nr/.layers/$d/work" "$nr/$d"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$nr/.layers/$d/upper,workdir=$nr/.layers/$d/work" "$nr/$d" ||
    pg_fail "cannot lay an overlay over /$d"
done
for d in bin sbin lib lib32 lib64 libx32; do
  if [[ -L /$d ]]; then
    ln -s "$(readlink "/$d")" "$nr/$d"
  elif [[ -d /$d ]]; then
    mkdir -p "$nr/$d"
    mount --bind "/$d" "$nr/$d" && mount -o remount,bind,ro "$nr/$d" || pg_fail "cannot bind /$d"
  fi
done
mkdir -p "$nr/tmp" "$nr/root" "$nr/run" "$nr/var/tmp" "$nr/proc" "$nr/dev/shm" "$nr/dev/pts"
chmod 1777 "$nr/tmp" "$nr/var/tmp" "$nr/dev/shm"
chmod 700 "$nr/root"
for f in null zero full random urandom; do
  : >"$nr/dev/$f"
  mount --bind "/dev/$f" "$nr/dev/$f" || pg_fail "cannot bind /dev/$f"
done
ln -s /proc/self/fd "$nr/dev/fd"
ln -s /proc/self/fd/0 "$nr/dev/stdin"
ln -s /proc/self/fd/1 "$nr/dev/stdout"
ln -s /proc/self/fd/2 "$nr/dev/stderr"
mount -t proc proc "$nr/proc" || pg_fail "cannot mount /proc"
if [[ -d $stage/files ]]; then cp -a "$stage/files/." "$nr/"; fi
while IFS= read -r -d '' src && IFS= read -r -d '' dst && IFS= read -r -d '' ro; do
  if [[ -d $src ]]; then
    mkdir -p "$nr$dst"
  else
    mkdir -p "$(dirname "$nr$dst")"
    [[ -e $nr$dst ]] || : >"$nr$dst"
  fi
  mount --bind "$src" "$nr$dst" || pg_fail "cannot bind $src at $dst"
  if [[ $ro == 1 ]]; then mount -o remount,bind,ro "$nr$dst" || pg_fail "cannot make $dst read-only"; fi
done <"$stage/binds"
mapfile -d '' pg_env <"$stage/env"
workdir=$(<"$stage/workdir")
cd "$nr"
mkdir .old
pivot_root . .old || pg_fail "cannot pivot into the box's root"
umount -l /.old
rmdir /.old
cd / && cd "$workdir" 2>/dev/null || cd /
exec /usr/bin/env -i -- ${pg_env[@]+"${pg_env[@]}"} "$@"
"""


class SandboxUnavailable(UsageError):
    """This machine cannot isolate a process (no namespaces for this user): nothing is run."""


class SandboxError(ProfilegenError):
    """A box could not be built as asked (a bind whose source is missing, say)."""


@dataclass(frozen=True)
class Bind:
    """A host file or folder placed at a container path."""

    source: Path
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class Box:
    """What the process sees: files and binds at container paths, and its whole environment."""

    binds: tuple[Bind, ...] = ()
    # Container path -> content; a file that starts with `#!` is executable.
    files: Mapping[str, bytes] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    network: bool = False  # False: a network namespace of its own (no interface up)
    workdir: str = "/"
    size_mib: int = 256  # the tmpfs the root lives on


@dataclass(frozen=True)
class Completed:
    code: int | None  # None when it was killed at the deadline
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def _unshare_argv(box: Box) -> list[str]:
    argv = ["unshare", "--mount", "--pid", "--fork", "--kill-child"]
    if not box.network:
        argv.append("--net")
    if os.geteuid() != 0:
        argv += ["--user", "--map-root-user"]
    return argv


def _container_path(path: str) -> str:
    parts = [p for p in path.split("/") if p]
    if not path.startswith("/") or any(p in (".", "..") for p in parts) or "\0" in path:
        raise ValueError(f"not an absolute, normal container path: {path!r}")
    return "/" + "/".join(parts)


# Scratch folders go to memory where the machine has room there (a box's staging folder and an
# explain batch are thousands of small files, written once and read once); TMPDIR, when set,
# is where the user wants them.
MEMORY_FS = Path("/dev/shm")
MEMORY_FS_ROOM = 512 << 20


def memory_folder(room: int) -> Path | None:
    """The memory file system, when TMPDIR names no other place and it has `room` bytes free."""
    if "TMPDIR" in os.environ or not MEMORY_FS.is_dir() or not os.access(MEMORY_FS, os.W_OK):
        return None
    try:
        free = os.statvfs(MEMORY_FS)
    except OSError:
        return None
    return MEMORY_FS if free.f_bavail * free.f_frsize >= room else None


def scratch_folder(prefix: str) -> Path:
    """A new private temporary folder: in memory when there is room, else in TMPDIR."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=memory_folder(MEMORY_FS_ROOM)))


def _stage(box: Box) -> Path:
    """The staging folder the set-up script reads: files, binds, environment, sizes."""
    stage = scratch_folder("profilegen-box-")
    try:
        (stage / "root").mkdir()
        for target, data in box.files.items():
            path = stage / "files" / _container_path(target).lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755 if data.startswith(b"#!") else 0o644)
        binds = b"".join(
            os.fsencode(str(b.source.resolve()))
            + b"\0"
            + _container_path(b.target).encode()
            + b"\0"
            + (b"1" if b.read_only else b"0")
            + b"\0"
            for b in box.binds
        )
        (stage / "binds").write_bytes(binds)
        for name, value in box.env.items():
            if not name or "=" in name or "\0" in name + value:
                raise ValueError(f"not an environment entry: {name!r}")
        (stage / "env").write_bytes(b"".join(f"{k}={v}\0".encode() for k, v in box.env.items()))
        (stage / "workdir").write_text(_container_path(box.workdir))
        (stage / "size").write_text(f"{max(box.size_mib, 16)}m")
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


_CLEAN_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}


def spawn(box: Box, argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Starts `argv` in the box (a process group of its own); the staging folder goes with it."""
    ensure_available()
    stage = _stage(box)
    try:
        proc = subprocess.Popen(
            [*_unshare_argv(box), "/bin/bash", "-p", "-c", _SETUP, "pg-box", str(stage), *argv],
            env=_CLEAN_ENV,
            start_new_session=True,
            **popen,
        )
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    _reap_later(proc, stage)
    return proc


def _reap_later(proc: subprocess.Popen[bytes], stage: Path) -> None:
    """The staging folder is removed once the box's process has ended (or at exit)."""

    def wait_and_remove() -> None:
        proc.wait()
        shutil.rmtree(stage, ignore_errors=True)

    atexit.register(shutil.rmtree, stage, True)
    threading.Thread(target=wait_and_remove, daemon=True).start()


def kill(proc: subprocess.Popen[bytes]) -> None:
    """Ends the box: its whole process group (the PID namespace dies with its first process)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def run(box: Box, argv: Sequence[str], *, timeout: float, stdin: bytes = b"") -> Completed:
    """Runs `argv` in the box to the end, or kills it at `timeout` seconds."""
    proc = spawn(box, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        return Completed(None, out, err, timed_out=True)
    last = err.decode(errors="replace").strip().rsplit("\n", 1)[-1]
    if proc.returncode == SETUP_FAILED and last.startswith(_PREFIX):
        raise SandboxError(last)
    return Completed(proc.returncode, out, err)


_PROBE: list[str | None] = []
_PROBE_LOCK = threading.Lock()


def available() -> str | None:
    """None when this machine can build boxes, else why not (probed once per process)."""
    with _PROBE_LOCK:
        if not _PROBE:
            _PROBE.append(_probe())
        return _PROBE[0]


def ensure_available() -> None:
    reason = available()
    if reason is not None:
        raise SandboxUnavailable(
            f"cannot isolate the entrypoint on this machine ({reason}); profilegen runs "
            "nothing a registry derives outside a box of its own namespaces (Linux, `unshare` "
            "from util-linux, as root or with unprivileged user namespaces)"
        )


def _probe() -> str | None:
    if shutil.which("unshare") is None:
        return "no `unshare` command"
    stage = _stage(Box())
    try:
        done = subprocess.run(
            [*_unshare_argv(Box()), "/bin/bash", "-p", "-c", _SETUP, "pg-box", str(stage), "true"],
            env=_CLEAN_ENV,
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        return lines[-1].removeprefix(_PREFIX) if lines else f"exit {done.returncode}"
    return None
