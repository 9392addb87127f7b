"""A rendered vLLM service run as Compose would run it, in a box, with the real vLLM.

Like `container.start` (the llama-server tier), with what an image of vLLM has that a static
binary does not need: the Python environment of the CPU build, visible at its own path (with
the Python it was made from), `vllm` on the image's PATH starting that environment's command
line (with the one change `vllm_cpu.LAUNCHER` states), vLLM's model-class cache kept between
runs (`vllm_cpu.MODELINFOS`), and, for a profile with patches, a copy of the installed package
(its sources; the rest links to the kept files), writable, at the image's package folder and
in the environment (one tree at both paths), so the entrypoint's patch steps change the
source the server then imports, and nothing of the kept environment.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from profilegen import sandbox as box
from tests.support.container import IMAGE_ENV, Running, Service
from tests.support.publish import RELAY, RELAY_PATH, SOCKET_DIR, Published, relay_argv
from tests.support.vllm_cpu import LAUNCHER, MODELINFOS

COMMAND = "/usr/local/bin/vllm"  # where the image's PATH finds `vllm`
BOX_MIB = 2048  # the box's root: vLLM's shared memory and temporary files live there
ORIGINAL = "/opt/profilegen/vllm-package"  # the kept package, where a copy's links point


def modelinfos(env: Any) -> Path:
    """The folder kept for vLLM's model-class cache of this environment (`vllm_cpu`)."""
    from profilegen.releases.llamacpp_build import build_cache_root

    folder: Path = build_cache_root() / "vllm-modelinfos" / env.folder.name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def package_copy(env: Any, work: Path) -> Path:
    """A copy of the environment's `vllm` package for one boot to patch: its folders and its
    Python sources (what patch steps change) are copied, every other file (compiled modules,
    bytecode, data: 400 MB) is a link to the kept package, which the box mounts read-only at
    ORIGINAL. Python replaces a stale bytecode file rather than writing into it."""
    source = env.package_dir

    def copy_or_link(path: str, target: str) -> None:
        if path.endswith(".py"):
            shutil.copy2(path, target)  # the times too: the kept bytecode stays valid
        else:
            Path(target).symlink_to(f"{ORIGINAL}/{Path(path).relative_to(source)}")

    target = work / "vllm-package"
    shutil.copytree(source, target, symlinks=True, copy_function=copy_or_link)
    return target


def start(
    service: Service,
    *,
    env: Any,
    engine: Any,
    package: Path,
    work: Path,
    extra: Mapping[str, str],
) -> Running:
    """Starts the service in a box where `vllm` is the real one; returns at once."""
    sockets = work / "publish"
    sockets.mkdir(parents=True, exist_ok=True)
    binds = [
        *service.binds,
        # A container has the host's /sys (read-only): vLLM's CPU worker reads the CPU
        # topology there (lscpu).
        box.Bind(Path("/sys"), "/sys"),
        box.Bind(env.base_prefix, str(env.base_prefix)),
        box.Bind(env.venv, str(env.venv)),
        box.Bind(modelinfos(env), MODELINFOS, read_only=False),
    ]
    if package != env.package_dir:
        binds += [
            box.Bind(package, engine.package_dir, read_only=False),
            box.Bind(package, str(env.package_dir), read_only=False),
            box.Bind(env.package_dir, ORIGINAL),
        ]
    binds.append(box.Bind(sockets, SOCKET_DIR, read_only=False))
    the_box = box.Box(
        binds=tuple(binds),
        files={
            RELAY_PATH: RELAY.encode(),
            COMMAND: LAUNCHER.format(python=env.python).encode(),
        },
        env={**IMAGE_ENV, "HOME": "/root", **service.env, **extra},
        size_mib=BOX_MIB,
    )
    log = work / "container.log"
    with log.open("wb") as sink:
        proc = box.spawn(
            the_box,
            relay_argv(service.container_port, service.argv),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    published = Published(service.host, service.port, sockets)
    host, port = published.address
    return Running(proc, published, log, f"http://{host}:{port}")
