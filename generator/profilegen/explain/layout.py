"""A compose service as its container sees it: the bundle's files at the paths its mounts name.

The rendered bundle (entrypoint, helpers, patch files) is laid out in a job folder exactly as
`render -o` writes it, and every bind mount of the interpolated service places its source at
its target, in order. What a mount takes from the host (the model folder, `NINJA_BIN`) is an
empty stand-in: the sandbox never shows the host's own files to a container. The weights the
entrypoint looks for before it starts the engine (`pg_weights`) are empty stand-ins too, at
the paths it names: explain shows a container whose weights were fetched.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..render import Rendered
from .boxscripts import RECORDERS
from .sandbox import Layout, Mount

BUNDLE = "bundle"
HOST = "host"
WEIGHTS = "weights"
# The entrypoint's weights guard: `pg_weights file|folder PATH ...` (templates/entrypoint).
_WEIGHTS = re.compile(r"^[ \t]*pg_weights[ \t]+(\S.*)$", re.M)
IMAGE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
}


def compose_layout(
    rendered: Rendered, service: Mapping[str, Any], missing: Collection[str] = ()
) -> Layout:
    """The job folder and mounts of one interpolated compose service; `missing`: weights
    (paths as `weights_paths` gives them) left out, as before `profilegen fetch`."""
    files = {f"{BUNDLE}/{name}": data for name, data in rendered.files().items()}
    files[f"{BUNDLE}/helpers.sh"] = rendered.helpers + RECORDERS.encode()
    for patch in rendered.manifest.patches:
        for f in patch.files:
            # The sha256 of each file is proven when a bundle is written; here only where the
            # container finds it matters.
            files[f"{BUNDLE}/{patch.bundle_dir}/{f.path}"] = b""
    dirs: list[str] = []
    mounts: list[Mount] = []
    for index, volume in enumerate(service.get("volumes") or []):
        if not isinstance(volume, dict) or volume.get("type") != "bind":
            continue
        target = str(volume.get("target", ""))
        rel = _in_bundle(str(volume.get("source", "")))
        if rel is None:
            rel = f"{HOST}/{index}"
            dirs.append(rel)
        elif rel not in files and not any(name.startswith(rel + "/") for name in files):
            dirs.append(rel)
        mounts.append(Mount(rel, target, bool(volume.get("read_only"))))
    lay_out_weights(files, mounts, [rendered.script], missing)
    return Layout(files, tuple(dirs), tuple(mounts))


def weights_paths(scripts: Iterable[str]) -> list[str]:
    """The files the scripts' weights guards look for: a GGUF file itself, a folder's
    config.json."""
    return list(dict.fromkeys(p for script in scripts for p in _script_weights(script)))


@functools.lru_cache(maxsize=256)
def _script_weights(script: str) -> tuple[str, ...]:
    """One script's weights paths (every scenario of a profile runs the same script)."""
    paths = []
    for match in _WEIGHTS.finditer(script):
        words = shlex.split(match.group(1))
        if len(words) >= 2 and words[0] in ("file", "folder"):
            paths.append(words[1] if words[0] == "file" else f"{words[1]}/config.json")
    return tuple(paths)


def lay_out_weights(
    files: dict[str, bytes],
    mounts: list[Mount],
    scripts: Iterable[str],
    missing: Collection[str] = (),
) -> None:
    """An empty stand-in at each path the weights guards look for: in the folder the last
    mount over it takes its files from, else a file of its own mounted there."""
    for index, path in enumerate(weights_paths(scripts)):
        if path in missing:
            continue
        over = [m for m in mounts if path.startswith(m.target.rstrip("/") + "/")]
        if over and over[-1].source not in files:
            rest = path[len(over[-1].target.rstrip("/")) + 1 :]
            files[f"{over[-1].source}/{rest}"] = b""
        else:
            files[f"{WEIGHTS}/{index}"] = b""
            mounts.append(Mount(f"{WEIGHTS}/{index}", path))


def _in_bundle(source: str) -> str | None:
    """A relative source as a job-folder path under the bundle, or None (a host path)."""
    if not source or source.startswith(("/", "~")):
        return None
    parts = [p for p in source.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join([BUNDLE, *parts])


def container_env(service: Mapping[str, Any], host: Mapping[str, str]) -> dict[str, str]:
    """The container's environment: the image's, then the service's (a bare entry passes the
    host's value through, if it has one)."""
    env = dict(IMAGE_ENV)
    for name, value in (service.get("environment") or {}).items():
        if value is None:
            if name in host:
                env[name] = host[name]
        else:
            env[name] = str(value)
    return env


def entry_argv(service: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(w) for w in (service.get("entrypoint") or []) + (service.get("command") or []))
