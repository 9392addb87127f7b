"""Engine entities: one per engine build and pinned image the upstream composes run."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from .families import COMPOSE_TUNABLES, FAMILIES, LMCACHE_TUNABLES
from .flags import DEFAULT_SPELLING

# The compose folder an upstream engine lives in -> (our family, the build's name).
BUILDS = {
    "vllm": ("vllm", "vllm"),
    "vllm-lmcache": ("vllm", "vllm-lmcache"),
    "llama-cpp": ("llama.cpp", "llama.cpp"),
    "ik-llama": ("llama.cpp", "ik-llama"),
    "beellama": ("llama.cpp", "beellama"),
    "llamacpp-club3090": ("llama.cpp", "llamacpp-club3090"),
}
NAMES = {
    "vllm": "vLLM {tag} OpenAI-compatible server",
    "vllm-lmcache": "vLLM with LMCache ({tag})",
    "llama.cpp": "llama.cpp server {tag}",
    "ik-llama": "ik_llama.cpp server ({tag})",
    "beellama": "beellama.cpp server ({tag})",
    "llamacpp-club3090": "llama.cpp fork with a host-side MoE expert cache ({tag})",
}
_IMAGE = re.compile(r"^(?P<image>[^:@]+)(?::(?P<tag>[^@]+))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?$")


@dataclass
class EngineBuild:
    """An engine entity in the making: its profiles add the flags and KV types they use."""

    id: str
    family: str
    build: str
    data: dict[str, Any]
    used_flags: set[str] = field(default_factory=set)
    kv_dtypes: set[str] = field(default_factory=set)
    spec_types: dict[str, str] = field(default_factory=dict)
    spellings: dict[str, dict[str, int]] = field(default_factory=dict)
    bare_switches: set[str] = field(default_factory=set)

    def entity(self) -> dict[str, Any]:
        data = copy.deepcopy(self.data)
        known = list(FAMILIES[self.family]["flags"])
        data["flags"] = known + sorted(self.used_flags - set(known))
        data["kv_cache_dtypes"] = sorted(set(FAMILIES[self.family]["kv"]) | self.kv_dtypes)
        if self.spec_types:
            data["spec_types"] = dict(sorted(self.spec_types.items()))
        if self.bare_switches:
            data["bare_switches"] = sorted(self.bare_switches)
        # A build's spelling only where every one of two or more profiles writes it so;
        # otherwise the family's, and each profile that differs says so itself.
        spellings = {
            fact: next(iter(counts))
            for fact, counts in self.spellings.items()
            if len(counts) == 1
            and sum(counts.values()) > 1
            and next(iter(counts)) != DEFAULT_SPELLING.get(fact)
        }
        if spellings:
            data["spellings"] = dict(sorted(spellings.items()))
        return data


def engine_id(build: str, image: str) -> str:
    match = _IMAGE.match(image)
    if match is None:
        return f"{build}-{re.sub(r'[^a-z0-9._-]', '-', image.lower())[:40]}"
    tag = (match["tag"] or "").removeprefix("server-cuda-")
    if tag:
        return f"{build}-{tag}"
    return f"{build}-{match['digest'][7:19]}"


def new_build(
    build_dir: str, image: str, image_var: str | None, mount: tuple[str, bool]
) -> EngineBuild:
    family, build = BUILDS[build_dir]
    template = FAMILIES[family]
    match = _IMAGE.match(image)
    name, tag, digest = (
        (match["image"], match["tag"], match["digest"]) if match else (image, None, None)
    )
    ident = engine_id(build, image)
    data: dict[str, Any] = {
        "id": ident,
        "kind": template["kind"],
        "name": NAMES[build].format(tag=tag or (digest or "")[7:19]),
        "image": name,
    }
    if tag:
        data["tag"] = tag
    if digest:
        data["digest"] = digest
    if image_var:
        data["image_env"] = image_var
    data["binary"] = template["binary"]
    if not template.get("ipc_host", True):
        data["ipc_host"] = False
    data["container_port"] = template["container_port"]
    if "package_dir" in template:
        data["package_dir"] = template["package_dir"]
    data["model_mount"], readonly = mount
    if readonly:
        data["model_mount_readonly"] = True
    data["patch_mount_root"] = "/etc/club3090"
    if build == "ik-llama":
        data["spec_style"] = "compound"
    tunables = copy.deepcopy(template["tunables"])
    if build == "vllm-lmcache":
        tunables += copy.deepcopy(LMCACHE_TUNABLES)
    if image_var:
        tunables.append({"env": image_var, "field": "engine.image_ref", "type": "text",
                         "scope": "compose", "help": "container image to run"})  # fmt: skip

    data["tunables"] = tunables + copy.deepcopy(COMPOSE_TUNABLES)
    if template["env"]:
        data["env"] = copy.deepcopy(template["env"])
    return EngineBuild(ident, family, build, data)
