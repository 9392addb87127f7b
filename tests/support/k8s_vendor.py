"""Vendors the Kubernetes schemas `check` validates against, offline, into schema/kubernetes/.

    python -m tests.support.k8s_vendor [--lws-crd FILE --lws-version vX.Y.Z]

Kubernetes: the `$defs` that the objects profilegen emits reach, taken from the strict
OpenAPI-derived schemas the installed `kubernetes-validate` bundles (descriptions dropped).
LeaderWorkerSet: the `openAPIV3Schema` of the CRD file of an LWS release
(config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml at its tag), as published.
The test suite re-derives the Kubernetes file from the installed package and compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

FOLDER = Path(__file__).resolve().parents[2] / "schema" / "kubernetes"
K8S_VERSION = "1.37.0"
# The object kinds profilegen emits; their closure is what gets vendored.
ROOTS = (
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.batch.v1.Job",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.core.v1.PodTemplateSpec",
    "io.k8s.api.core.v1.Service",
)
_REF = re.compile(r'"\$ref": "[^"]*#/\$defs/([^"]+)"')


def _strip(node: Any) -> Any:
    """Descriptions are documentation, not constraints: dropped to keep the file small."""
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def kubernetes_subset(version: str = K8S_VERSION) -> dict[str, Any]:
    from importlib.resources import files

    folder = files("kubernetes_validate") / "kubernetes-json-schema" / f"v{version}-local-strict"
    defs = json.loads((folder / "_definitions.json").read_text(encoding="utf-8"))["$defs"]
    seen: set[str] = set()
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += _REF.findall(json.dumps(defs[name]))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"kubernetes-v{version}.json",
        "$comment": (
            f"Kubernetes v{version} object schemas (strict: unknown fields refused), the "
            f"closure of {', '.join(n.rsplit('.', 1)[1] for n in ROOTS)}; from the PyPI "
            f"package kubernetes-validate (its v{version}-local-strict schemas), "
            "descriptions removed. Regenerate: python -m tests.support.k8s_vendor"
        ),
        "$defs": {name: _strip(defs[name]) for name in sorted(seen)},
    }


def lws_schema(crd_yaml: bytes, version: str) -> dict[str, Any]:
    crd = YAML(typ="safe").load(crd_yaml.decode())
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return {
        "$comment": (
            f"LeaderWorkerSet {version} (leaderworkerset.x-k8s.io/v1): the openAPIV3Schema of "
            "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml at the "
            f"kubernetes-sigs/lws tag {version} (sha256 of that file "
            f"{hashlib.sha256(crd_yaml).hexdigest()}), descriptions removed. "
            "Regenerate: python -m tests.support.k8s_vendor --lws-crd FILE --lws-version TAG"
        ),
        "openAPIV3Schema": _strip(served["schema"]["openAPIV3Schema"]),
    }


def dump(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lws-crd", type=Path)
    parser.add_argument("--lws-version")
    args = parser.parse_args()
    FOLDER.mkdir(parents=True, exist_ok=True)
    (FOLDER / f"kubernetes-v{K8S_VERSION}.json").write_bytes(dump(kubernetes_subset()))
    if args.lws_crd:
        doc = lws_schema(args.lws_crd.read_bytes(), args.lws_version)
        (FOLDER / f"leaderworkerset-{args.lws_version}.json").write_bytes(dump(doc))


if __name__ == "__main__":
    main()
