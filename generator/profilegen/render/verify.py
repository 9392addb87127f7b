"""Defence in depth: parse what was rendered and compare it with what was intended."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ruamel.yaml.error import YAMLError

from ..registry.safeyaml import YamlProblem, read_plain
from .context import RenderError
from .quoting import Interp, compose_escape


def first_difference(want: Any, got: Any, path: str = "") -> str | None:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got), key=str):
            if key not in got:
                return f"{path}.{key} is missing"
            if key not in want:
                return f"{path}.{key} was not intended"
            found = first_difference(want[key], got[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path} has {len(got)} items, intended {len(want)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            found = first_difference(w, g, f"{path}[{i}]")
            if found:
                return found
        return None
    if want != got or type(want) is not type(got):
        return f"{path} is {got!r}, intended {want!r}"
    return None


@lru_cache(maxsize=1024)
def parsed_compose(compose: bytes) -> Any:
    """A compose file's YAML as data, parsed once per process for the same bytes (render
    verifies what it wrote, and explain reads the service back from it); raises YAMLError,
    or YamlProblem for a limit broken. Shared: readers copy what they change."""
    return parse_yaml(compose.decode())


def parse_yaml(text: str) -> Any:
    """One YAML document as plain data, as ruamel's safe loader reads it (the same parser,
    resolver and constructors), by the registry's bounded reader: it builds the data from
    the parser's events in a fraction of the loader's time."""
    return read_plain(text)[0]


def verify_compose(profile_id: str, compose: bytes, service: dict[str, Any]) -> None:
    """Raises RenderError when the compose does not parse back to the intended service."""
    try:
        doc = parsed_compose(compose)
    except (YAMLError, YamlProblem) as exc:
        raise RenderError(f"{profile_id}: rendered compose is not valid YAML: {exc}") from exc
    if not isinstance(doc, dict) or set(doc) != {"name", "services"}:
        raise RenderError(f"{profile_id}: rendered compose has unexpected top-level keys")
    services = doc["services"]
    if not isinstance(services, dict) or len(services) != 1:
        raise RenderError(f"{profile_id}: rendered compose must hold exactly one service")
    (got,) = services.values()
    problem = first_difference(intended_json(service), got)
    if problem:
        raise RenderError(
            f"{profile_id}: rendered compose differs from the registry: service{problem}"
        )


def verify_document(label: str, text: bytes, intended: dict[str, Any], compose: bool) -> None:
    """Raises RenderError unless `text` parses back to exactly `intended` (a whole document;
    `compose`: as Compose reads it, a literal `$` written `$$`)."""
    try:
        doc = parse_yaml(text.decode())
    except (YAMLError, YamlProblem) as exc:
        raise RenderError(f"{label} is not valid YAML: {exc}") from exc
    problem = first_difference(intended_json(intended, escape=compose), doc)
    if problem:
        raise RenderError(f"{label} differs from the registry: {problem}")


def intended_json(service: dict[str, Any], escape: bool = True) -> Any:
    """The service as plain data, the way a YAML parser will read it back."""

    def plain(value: Any) -> Any:
        if isinstance(value, Interp):
            return value.text
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, str):
            return compose_escape(value) if escape else value
        return value

    return json.loads(json.dumps(plain(service)))
