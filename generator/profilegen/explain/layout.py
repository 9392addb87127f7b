"""A compose service as its container sees it: the bundle's files at the paths its mounts name.

The rendered bundle (entrypoint, helpers, patch files) is laid out in a job folder exactly as
`render -o` writes it, and every bind mount of the interpolated service places its source at
its target, in order. What a mount takes from the host (the model folder, `NINJA_BIN`) is an
empty stand-in: the sandbox never shows the host's own files to a container.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..render import Rendered
from .boxscripts import RECORDERS
from .sandbox import Layout, Mount

BUNDLE = "bundle"
HOST = "host"
IMAGE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
}


def compose_layout(rendered: Rendered, service: Mapping[str, Any]) -> Layout:
    """The job folder and mounts of one interpolated compose service."""
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
    return Layout(files, tuple(dirs), tuple(mounts))


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
