"""Kubernetes objects checked offline against the API schemas of a pinned release.

The schemas are vendored under schema/kubernetes/ (see its README): the Kubernetes object
definitions the emitted kinds reach, strict (an unknown field is an error, as `kubectl
apply` reports it), and the LeaderWorkerSet CRD's openAPIV3Schema of a pinned LWS release.
CRD schemas let unknown fields through (the API server prunes them silently); they are
made strict here too, and the LWS pod templates are also checked as core PodTemplateSpecs.
Validators are compiled once per process.

The core schemas constrain values only by type (their one `enum` each is the root's
apiVersion and kind; there is no pattern, length or range): an object validates exactly
when its *shape* does (every string made empty, every number zero, each list reduced to its
distinct item shapes). Shapes repeat across profiles, so each distinct shape is validated
once (`check` over every profile costs a few milliseconds); that the vendored schema holds
no other constraint is verified when it is loaded, and otherwise every object is validated
in full.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from ...resources import data_dir
from .k8s_yaml import Block, plain

K8S_VERSION = "v1.37.0"
LWS_VERSION = "v0.10.0"
LWS_API = "leaderworkerset.x-k8s.io/v1"
_CORE_ID = f"urn:profilegen:kubernetes-{K8S_VERSION}"
# apiVersion, kind -> the definition an object of that kind is checked against.
CORE_KINDS = {
    ("apps/v1", "Deployment"): "io.k8s.api.apps.v1.Deployment",
    ("batch/v1", "Job"): "io.k8s.api.batch.v1.Job",
    ("v1", "ConfigMap"): "io.k8s.api.core.v1.ConfigMap",
    ("v1", "PersistentVolumeClaim"): "io.k8s.api.core.v1.PersistentVolumeClaim",
    ("v1", "Service"): "io.k8s.api.core.v1.Service",
}
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
POD_TEMPLATE = "io.k8s.api.core.v1.PodTemplateSpec"


def _load(name: str) -> dict[str, Any]:
    path = data_dir("schema") / "kubernetes" / name
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _strict(node: Any) -> Any:
    """A structural CRD schema made to refuse unknown fields, like the core schemas."""
    if isinstance(node, dict):
        out = {k: _strict(v) for k, v in node.items()}
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_strict(v) for v in node]
    return node


# Keywords that constrain only a value's type and structure (`format` is not asserted by
# jsonschema unless asked); extensions (`x-...`) are not keywords.
_SHAPE_KEYWORDS = frozenset(
    {"type", "$ref", "additionalProperties", "items", "required", "format", "oneOf", "properties"}
)


@lru_cache(maxsize=1)
def _core_doc() -> dict[str, Any]:
    doc = _load(f"kubernetes-{K8S_VERSION}.json")
    doc["$id"] = _CORE_ID
    return doc


@lru_cache(maxsize=1)
def _core() -> Registry[Any]:
    resource: Resource[Any] = Resource.from_contents(_core_doc())
    registry: Registry[Any] = Registry().with_resource(_CORE_ID, resource)
    return registry


def _only_shape_keywords(node: Any, at_root: bool = False) -> bool:
    if isinstance(node, list):
        return all(_only_shape_keywords(item) for item in node)
    if not isinstance(node, dict):
        return True
    for key, value in node.items():
        if key.startswith("x-") or key in ("description", "$schema", "$id", "$comment"):
            continue
        if key == "properties":
            if not all(_property_ok(name, sub, at_root) for name, sub in value.items()):
                return False
        elif key not in _SHAPE_KEYWORDS or not _only_shape_keywords(value):
            return False
    return True


def _property_ok(name: str, schema: Any, at_root: bool) -> bool:
    """A property's schema holds only shape keywords (the root's apiVersion and kind may
    also list their one value: the shape keeps those two as they are)."""
    if at_root and name in ("apiVersion", "kind"):
        return set(schema) <= {*_SHAPE_KEYWORDS, "enum", "description"}
    return _only_shape_keywords(schema)


@lru_cache(maxsize=1)
def _shapes_exact() -> bool:
    """True when validating a shape is the same as validating the object (see above)."""
    return all(_only_shape_keywords(d, at_root=True) for d in _core_doc()["$defs"].values())


def _shape(node: Any, root: bool = False) -> Any:
    if isinstance(node, Block):
        return ""
    if isinstance(node, dict):
        keep = ("apiVersion", "kind") if root else ()
        return {k: v if k in keep else _shape(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        shapes = {json.dumps(s, sort_keys=True): s for s in map(_shape, node)}
        return [shapes[k] for k in sorted(shapes)]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return 0
    if isinstance(node, float):
        return 0.5  # not integral: an integer field still refuses it
    return ""


_VALID_SHAPES: set[str] = set()


@cache
def _core_validator(definition: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{_CORE_ID}#/$defs/{definition}"}, registry=_core())


@lru_cache(maxsize=1)
def _lws_validator() -> Draft202012Validator:
    schema = _strict(_load(f"leaderworkerset-{LWS_VERSION}.json")["openAPIV3Schema"])
    return Draft202012Validator(schema)


def _where(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".") or "(the object)"


def _errors(validator: Draft202012Validator, data: Any, prefix: str = "") -> Iterator[str]:
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        where = _where(error.absolute_path)
        yield f"{prefix}{'.' if prefix and where[0] != '[' else ''}{where}: {error.message}"


def _lws_problems(obj: Mapping[str, Any]) -> Iterator[str]:
    yield from _errors(_lws_validator(), obj)
    yield from _errors(_core_validator(OBJECT_META), obj.get("metadata"), "metadata")
    template = obj.get("spec", {}).get("leaderWorkerTemplate", {})
    for role in ("leaderTemplate", "workerTemplate"):
        if role in template:
            prefix = f"spec.leaderWorkerTemplate.{role}"
            yield from _errors(_core_validator(POD_TEMPLATE), template[role], prefix)


def _core_problems(definition: str, obj: Mapping[str, Any]) -> list[str]:
    validator = _core_validator(definition)
    if not _shapes_exact():
        return list(_errors(validator, obj))
    shape = _shape(obj, root=True)
    key = definition + json.dumps(shape, sort_keys=True)
    if key in _VALID_SHAPES:
        return []
    if validator.is_valid(shape):
        _VALID_SHAPES.add(key)
        return []
    return list(_errors(validator, plain(obj)))  # the real values, for real messages


def schema_problems(obj: Mapping[str, Any]) -> list[str]:
    """What the API server would refuse in one object (empty: it validates); the object may
    hold `Block`s (they are strings)."""
    api, kind = obj.get("apiVersion"), obj.get("kind")
    name = f"{kind}/{obj.get('metadata', {}).get('name')}"
    if (api, kind) == (LWS_API, "LeaderWorkerSet"):
        found = list(_lws_problems(plain(obj)))
    elif (api, kind) in CORE_KINDS:
        found = _core_problems(CORE_KINDS[(str(api), str(kind))], obj)
    else:
        found = [f"no vendored schema for {api} {kind}"]
    return [f"{name}: {problem}" for problem in found]
