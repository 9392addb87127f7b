"""The box: `unshare` gives a process its own namespaces; a fixed script builds its root.

The new root is a size-capped tmpfs. The host's `/usr` and `/etc` appear under a throw-away
overlay (readable, writes vanish with the box), `/bin`, `/sbin` and `/lib*` read-only; `/dev`
holds only the harmless devices; `/proc` is the box's own; home, work and temporary folders of
the host are not there at all. The box's files and bind mounts are then laid at their
container paths (each path resolved as the box will see it, links followed inside the box:
`paths.py`), the root is pivoted, and the command starts with exactly the box's environment. Nothing of the box's environment reaches a shell on the host side: the script
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
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ProfilegenError, UsageError
from .mounts import BindMount, nul, plan_mounts
from .paths import BoxView

# An exit code of the box's own set-up, apart from any the command may return.
SETUP_FAILED = 125
_PREFIX = "profilegen sandbox: "

# The script that builds the box; its arguments are the staging folder and the command.
# Python lays out everything it can beforehand (`_stage`): the root's folders, links and
# system mount points (`skeleton/`), the box's files (`files/`), and two fstabs that one
# `mount --all` each applies in order: the system's mounts (`system.fstab`: overlays,
# read-only binds, devices, /proc; paths relative to the staging folder) and the box's own
# binds (`binds.fstab`, after the files, so that a bind may land on one; their mount points
# are `points.*`). Binds that land inside an earlier bind are applied one by one (`binds`)
# instead, each mount point made once the bind it lies in is in place. A box then costs a
# handful of processes.
_SETUP = r"""
set -euo pipefail
stage=$1
shift
pg_fail() { printf 'profilegen sandbox: %s\n' "$*" >&2; exit 125; }
pg_mount_all() {
  local said
  if ! mount --all --fstab "$1" 2>mount.err; then
    read -r said <mount.err || true
    pg_fail "$2 (${said#mount: })"
  fi
}
cd "$stage"
read -r size <size
mount -t tmpfs -o "size=$size,mode=755" pgbox root || pg_fail "cannot mount a tmpfs"
cp -a skeleton/. root/ || pg_fail "cannot lay out the box's root"
pg_mount_all system.fstab "cannot mount the box's system folders"
if [[ -d files ]]; then cp -a files/. root/ || pg_fail "cannot write the box's files"; fi
if [[ -s binds.fstab ]]; then
  mapfile -d '' points <points.dirs
  ((${#points[@]} == 0)) || mkdir -p -- "${points[@]}" || pg_fail "cannot make the binds' mount points"
  mapfile -d '' points <points.files
  for point in ${points[@]+"${points[@]}"}; do [[ -e $point ]] || : >"$point"; done
  pg_mount_all binds.fstab "cannot bind a path into the box"
fi
while IFS= read -r -d '' src && IFS= read -r -d '' dst && IFS= read -r -d '' ro; do
  if [[ -d $src ]]; then
    mkdir -p "root$dst"
  else
    mkdir -p "$(dirname "root$dst")"
    [[ -e root$dst ]] || : >"root$dst"
  fi
  mount --bind "$src" "root$dst" || pg_fail "cannot bind $src at $dst"
  if [[ $ro == 1 ]]; then mount -o remount,bind,ro "root$dst" || pg_fail "cannot make $dst read-only"; fi
done <binds
mapfile -d '' pg_env <env
read -r workdir <workdir
cd root
pivot_root . .old || pg_fail "cannot pivot into the box's root"
umount -l /.old
rmdir /.old
cd / && cd "$workdir" 2>/dev/null || cd /
exec /usr/bin/env -i -- ${pg_env[@]+"${pg_env[@]}"} "$@"
"""
# The host folders the box shows read-only (a link stays a link), and the devices it binds.
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_OVERLAID = ("usr", "etc")
_DEVICES = ("null", "zero", "full", "random", "urandom")
_DEVICE_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0"}
_DEVICE_LINKS |= {"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}


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
    argv = ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child"]
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
    """The staging folder the set-up script reads: the root's skeleton, the files, the
    fstabs, the environment and the sizes."""
    stage = scratch_folder("profilegen-box-")
    try:
        _skeleton(stage / "skeleton")
        (stage / "root").mkdir()
        (stage / "system.fstab").write_text(_system_fstab())
        view = _view()
        files = stage / "files"
        for target, data in box.files.items():
            path = files / view.resolve(_container_path(target)).lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755 if data.startswith(b"#!") else 0o644)
        _write_binds(stage, box.binds, view)
        for name, value in box.env.items():
            if not name or "=" in name or "\0" in name + value:
                raise ValueError(f"not an environment entry: {name!r}")
        (stage / "env").write_bytes(b"".join(f"{k}={v}\0".encode() for k, v in box.env.items()))
        (stage / "workdir").write_text(_container_path(box.workdir) + "\n")
        (stage / "size").write_text(f"{max(box.size_mib, 16)}m\n")
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def _write_binds(stage: Path, binds: tuple[Bind, ...], view: BoxView) -> None:
    """The box's binds as the set-up applies them (`mounts.py`). Each target is resolved as
    the box will see it (`paths.py`), so no mount point is made through a host link."""
    mounts = []
    for bind in binds:
        source, target = bind.source.resolve(), view.resolve(_container_path(bind.target))
        view.bind(target, source)
        mounts.append(BindMount(str(source), target, bind.read_only, source.is_dir()))
    plan = plan_mounts(mounts, under="root")
    (stage / "binds.fstab").write_text(plan.fstab)
    (stage / "binds").write_bytes(nul(plan.ordered))
    (stage / "points.dirs").write_bytes(nul(plan.dirs))
    (stage / "points.files").write_bytes(nul(plan.files))


def _skeleton(root: Path) -> None:
    """The root's folders, links and mount points, as `cp -a` lays them on the tmpfs."""
    for rel in ("tmp", "root", "run", "var/tmp", "proc", "dev/shm", "dev/pts", ".old"):
        (root / rel).mkdir(parents=True)
    for rel in ("tmp", "var/tmp", "dev/shm"):
        (root / rel).chmod(0o1777)
    (root / "root").chmod(0o700)
    for name in _OVERLAID:
        for part in ("upper", "work"):
            (root / ".layers" / name / part).mkdir(parents=True)
        (root / name).mkdir()
    for name, link in _system_links().items():
        (root / name).symlink_to(link)
    for name in _system_binds():
        (root / name).mkdir()
    for name in _DEVICES:
        (root / "dev" / name).touch()
    for name, link in _DEVICE_LINKS.items():
        (root / "dev" / name).symlink_to(link)


def _view() -> BoxView:
    """The box's tree before its binds: the root's links, the host's /usr and /etc."""
    links = {f"/{name}": link for name, link in _system_links().items()}
    links |= {f"/dev/{name}": link for name, link in _DEVICE_LINKS.items()}
    return BoxView(links, _OVERLAID)


@cache
def _system_links() -> Mapping[str, str]:
    """The host's top folders that are links (`/bin -> usr/bin`): links in the box too."""
    return {d: str(Path(f"/{d}").readlink()) for d in _SYSTEM_DIRS if Path(f"/{d}").is_symlink()}


@cache
def _system_binds() -> tuple[str, ...]:
    """The host's top folders that are folders: bound read-only."""
    return tuple(
        d for d in _SYSTEM_DIRS if not Path(f"/{d}").is_symlink() and Path(f"/{d}").is_dir()
    )


@cache
def _system_fstab() -> str:
    """Overlays over /usr and /etc, the other system folders read-only, the harmless
    devices and /proc, in that order (relative paths: from the staging folder)."""
    lines = [
        f"overlay root/{d} overlay lowerdir=/{d},upperdir=root/.layers/{d}/upper,"
        f"workdir=root/.layers/{d}/work 0 0\n"
        for d in _OVERLAID
    ]
    lines += [f"/{d} root/{d} none bind,ro 0 0\n" for d in _system_binds()]
    lines += [f"/dev/{d} root/dev/{d} none bind 0 0\n" for d in _DEVICES]
    lines.append("proc root/proc proc defaults 0 0\n")
    return "".join(lines)


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
