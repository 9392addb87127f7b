"""An upstream compose file read as data: its one service's image, command, env, mounts, script."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ...errors import UsageError
from .words import binding, default_value, split_words

_HEADER = re.compile(r"^# ([A-Z][A-Za-z-]+): (\S.*)$", re.M)
_PORT = re.compile(r"^(?:(?P<host>.*):)?(?P<published>[^:]+):(?P<target>\d+)(?:/tcp)?$")


@dataclass
class Volume:
    source: str
    target: str
    read_only: bool


@dataclass
class ComposeFile:
    path: str
    service_name: str
    service: dict[str, Any]
    words: list[str] = field(default_factory=list)  # the command, as written (before Compose)
    env: dict[str, str | None] = field(default_factory=dict)  # raw values; None: bare
    script: str | None = None
    image_entrypoint: bool = False  # no entrypoint: the image's own runs the command
    volumes: list[Volume] = field(default_factory=list)
    # Machine-readable header lines (`# Tensor-parallel: 4`), by lower-cased name.
    header: dict[str, str] = field(default_factory=dict)

    @property
    def image(self) -> str:
        return default_value(str(self.service.get("image", "")))

    @property
    def image_var(self) -> str | None:
        b = binding(str(self.service.get("image", "")))
        return b.names[0] if b else None

    @property
    def container_name(self) -> str:
        return default_value(str(self.service.get("container_name", self.service_name)))

    def port(self) -> tuple[str | None, int | None, int | None]:
        """(bind host, published port, container port) of the first port mapping."""
        ports = self.service.get("ports") or []
        if not ports:
            return None, None, None
        text = default_value(str(ports[0]))
        match = _PORT.match(text)
        if match is None:
            return None, None, None
        published = match["published"]
        return match["host"], int(published) if published.isdigit() else None, int(match["target"])


def parse_compose(path: str, text: str) -> ComposeFile:
    try:
        doc = YAML(typ="safe").load(text)
    except YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
        raise UsageError(f"{path}: not valid YAML ({first})") from None
    services = doc.get("services") if isinstance(doc, dict) else None
    if not isinstance(services, dict) or len(services) != 1:
        raise UsageError(f"{path}: expected exactly one service under `services:`")
    ((name, service),) = services.items()
    if not isinstance(service, dict):
        raise UsageError(f"{path}: service {name!r} is not a mapping")
    out = ComposeFile(path, str(name), service)
    command = service.get("command")
    out.words = (
        split_words(command) if isinstance(command, str) else [str(w) for w in command or []]
    )
    out.env = _environment(path, service.get("environment"))
    entrypoint = service.get("entrypoint")
    if entrypoint is None:
        out.image_entrypoint = True
    elif isinstance(entrypoint, list) and len(entrypoint) >= 3 and entrypoint[1] == "-c":
        out.script = str(entrypoint[2])
    elif isinstance(entrypoint, list) and len(entrypoint) == 2 and entrypoint[1] == "-c":
        out.script = str(command[0]) if isinstance(command, list) and command else None
        out.words = []
    out.volumes = [_volume(v) for v in service.get("volumes") or []]
    out.header = {m[1].lower(): m[2].strip() for m in _HEADER.finditer(text)}
    return out


def _environment(path: str, env: Any) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    if isinstance(env, dict):
        return {str(k): None if v is None else str(v) for k, v in env.items()}
    for item in env or []:
        name, sep, value = str(item).partition("=")
        out[name.strip()] = value if sep else None
    return out


def _volume(item: Any) -> Volume:
    if isinstance(item, dict):
        return Volume(
            str(item.get("source", "")), str(item.get("target", "")), bool(item.get("read_only"))
        )
    parts = str(item).rsplit(":", 2)
    if len(parts) == 3 and parts[2] in ("ro", "rw", "z", "Z", "ro,z"):
        return Volume(parts[0], parts[1], "ro" in parts[2])
    source, _, target = str(item).rpartition(":")
    return Volume(source, target, False)
