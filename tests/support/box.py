"""A container-like box for the real-engine tests: `unshare` namespaces and a root of its own.

The shape (`Bind`, `Box`, `spawn`, `run`, `Completed`) is the one `profilegen.sandbox` gives;
this is the smallest version the tests need until they use that one. The root is a tmpfs:
the host's `/usr`, `/bin`, `/lib*` read-only, `/etc` under a throw-away overlay, `/tmp`,
`/root` and `/run` empty, and the box's files and binds at their container paths. Nothing
is created on the host outside a staging folder of the box's own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SETUP = r"""
set -euo pipefail
stage=$1; shift
nr=$stage/root
mount --make-rprivate /
mount -t tmpfs -o size=256m,mode=755 box "$nr"
for d in usr bin sbin lib lib32 lib64; do
  if [[ -L /$d ]]; then ln -s "$(readlink "/$d")" "$nr/$d"
  elif [[ -d /$d ]]; then mkdir "$nr/$d"; mount --rbind "/$d" "$nr/$d"; mount -o remount,bind,ro "$nr/$d"; fi
done
mkdir -p "$nr/.etc/upper" "$nr/.etc/work" "$nr/etc"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$nr/.etc/upper,workdir=$nr/.etc/work" "$nr/etc"
mkdir -p "$nr/tmp" "$nr/root" "$nr/run" "$nr/proc" "$nr/dev/shm"
chmod 1777 "$nr/tmp" "$nr/dev/shm"
for f in null zero random urandom; do : >"$nr/dev/$f"; mount --bind "/dev/$f" "$nr/dev/$f"; done
ln -s /proc/self/fd "$nr/dev/fd"
mount -t proc proc "$nr/proc"
[[ -d $stage/files ]] && cp -a "$stage/files/." "$nr/"
while IFS= read -r -d '' src && IFS= read -r -d '' dst && IFS= read -r -d '' ro; do
  if [[ -d $src ]]; then mkdir -p "$nr$dst"; else mkdir -p "$(dirname "$nr$dst")"; : >"$nr$dst"; fi
  mount --bind "$src" "$nr$dst"
  [[ $ro == 1 ]] && mount -o remount,bind,ro "$nr$dst"
done <"$stage/binds"
mapfile -d '' box_env <"$stage/env"
workdir=$(<"$stage/workdir")
cd "$nr"; mkdir .old; pivot_root . .old; umount -l /.old; rmdir /.old
cd "$workdir" 2>/dev/null || cd /
exec /usr/bin/env -i -- ${box_env[@]+"${box_env[@]}"} "$@"
"""


@dataclass(frozen=True)
class Bind:
    source: Path
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class Box:
    binds: tuple[Bind, ...] = ()
    files: Mapping[str, bytes] = field(default_factory=dict)  # `#!` content is executable
    env: Mapping[str, str] = field(default_factory=dict)
    network: bool = False
    workdir: str = "/"


@dataclass(frozen=True)
class Completed:
    code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def _stage(box: Box) -> Path:
    stage = Path(tempfile.mkdtemp(prefix="pg-box-"))
    (stage / "root").mkdir()
    for target, data in box.files.items():
        path = stage / "files" / target.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if data.startswith(b"#!") else 0o644)
    (stage / "binds").write_bytes(
        b"".join(
            os.fsencode(b.source.resolve())
            + b"\0"
            + b.target.encode()
            + b"\0"
            + (b"1" if b.read_only else b"0")
            + b"\0"
            for b in box.binds
        )  # fmt: skip
    )
    (stage / "env").write_bytes(b"".join(f"{k}={v}\0".encode() for k, v in box.env.items()))
    (stage / "workdir").write_text(box.workdir)
    return stage


def spawn(box: Box, argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Starts `argv` in the box, in a process group of its own."""
    stage = _stage(box)
    unshare = ["unshare", "--mount", "--pid", "--fork", "--kill-child"]
    if not box.network:
        unshare.append("--net")
    proc = subprocess.Popen(
        [*unshare, "/bin/bash", "-c", _SETUP, "box", str(stage), *argv],
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        start_new_session=True,
        **popen,
    )
    proc.box_stage = stage  # type: ignore[attr-defined]
    return proc


def kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    shutil.rmtree(getattr(proc, "box_stage", ""), ignore_errors=True)


def run(box: Box, argv: Sequence[str], *, timeout: float) -> Completed:
    proc = spawn(box, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        return Completed(None, out, err, timed_out=True)
    shutil.rmtree(proc.box_stage, ignore_errors=True)  # type: ignore[attr-defined]
    return Completed(proc.returncode, out, err)
