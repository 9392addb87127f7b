"""One upstream entry (registry row + compose file) as a profile of ours, fact by fact."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from ...families import family as engine_family
from .catalog import Entry
from .compose import ComposeFile
from .envmap import MANAGED, env_spec, template_kwargs
from .flags import Facts
from .script import ScriptFacts
from .words import binding, default_value

STATUS = {
    "production": "production",
    "caveats": "caveats",
    "experimental": "experimental",
    "incubating": "incubating",
    "preview": "experimental",
    "upstream-gated": "experimental",
    "deprecated": "retired",
}
RIGS = {"single": 1, "dual": 2, "multi4": 4, "multi8": 8}
SAMPLER_KEYS = ("temperature", "top_p", "top_k", "min_p", "presence_penalty", "repetition_penalty")
CACHE_MOUNTS = {
    "/root/.cache/vllm/torch_compile_cache": ("torch-compile-cache", "TORCH_COMPILE_CACHE"),
    "/root/.triton/cache": ("triton-cache", "TRITON_CACHE"),
}


@dataclass
class Profile:
    """A profile document in the making, and what could not be modelled about it."""

    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def profile_id(key: str, model: str, taken: set[str]) -> str:
    """The key without its engine prefix, named after its model when the key does not say it,
    and prefixed with the engine when another engine's entry already has that name."""
    prefix, _, name = key.partition("/")
    ident = name.lower().replace("_", "-")
    words = {w for w in re.findall(r"[a-z]{4,}", model)}
    if not any(w in ident for w in words):
        ident = f"{model.replace('.', '')}-{ident}"
    if ident in taken:
        ident = f"{prefix.lower()}-{ident}"
    return ident


def rig_id(entry: Entry, compose_path: str, gpus: int) -> str:
    topology = compose_path.split("/compose/", 1)[-1].split("/", 1)[0]
    count = RIGS.get(topology, gpus)
    sm = entry.get("required_sm")
    if isinstance(sm, int | float) and sm >= 9:
        return f"{count}x5090"
    return "1x3090" if count == 1 else f"{count}x3090-pcie"


def envelope(facts: Facts) -> dict[str, Any]:
    env = {
        k.removeprefix("envelope."): v for k, v in facts.values.items() if k.startswith("envelope.")
    }
    if env.get("kv_cache_dtype_v") == env.get("kv_cache_dtype"):
        env.pop("kv_cache_dtype_v", None)
    compile_config = facts.values.get("compilation")
    if isinstance(compile_config, dict):
        config = dict(compile_config)
        if "max_cudagraph_capture_size" in config:
            env["cudagraph_max_capture"] = int(config.pop("max_cudagraph_capture_size"))
        if "custom_ops" in config:
            env["custom_ops"] = list(config.pop("custom_ops"))
        if config:
            env["compilation"] = config
    return env


def runtime(facts: Facts) -> dict[str, Any]:
    """runtime.* facts, nested (`runtime.dry.base` -> {dry: {base: ...}})."""
    out: dict[str, Any] = {}
    for path, value in facts.values.items():
        if path.startswith("runtime."):
            *parents, leaf = path.split(".")[1:]
            node = out
            for name in parents:
                node = node.setdefault(name, {})
            node[leaf] = value
    return out


def drafter_facts(facts: Facts) -> dict[str, Any]:
    return {
        k.removeprefix("drafter."): v for k, v in facts.values.items() if k.startswith("drafter.")
    }


def serve(facts: Facts, script: ScriptFacts, compose: ComposeFile, family: str) -> dict[str, Any]:
    out = {k.removeprefix("serve."): v for k, v in facts.values.items() if k.startswith("serve.")}
    kwargs = dict(out.get("chat_template_kwargs") or {})
    prefix = engine_family(family).env_flag_prefix
    if prefix is not None:
        kwargs.update(template_kwargs(compose.env.get(f"{prefix}CHAT_TEMPLATE_KWARGS")))
        reasoning = facts.values.get("reasoning")
        if reasoning in ("on", "off"):
            kwargs["enable_thinking"] = reasoning == "on"
    if kwargs:
        out["chat_template_kwargs"] = kwargs
    sampler = _sampler(facts, script)
    if sampler:
        out["sampler"] = sampler
    raw = facts.values.get("sampler")
    generation = (
        {k: v for k, v in raw.items() if k not in SAMPLER_KEYS} if isinstance(raw, dict) else {}
    )
    if generation:
        out["generation"] = generation
    if script.thinking_row:
        out["sampler_thinking"] = script.thinking_row
    return out


def _sampler(facts: Facts, script: ScriptFacts) -> dict[str, Any]:
    raw = facts.values.get("sampler")
    sampler = {k: v for k, v in raw.items() if k in SAMPLER_KEYS} if isinstance(raw, dict) else {}
    sampler.update(
        {k.removeprefix("sampler."): v for k, v in facts.values.items() if k.startswith("sampler.")}
    )
    if script.sampler_json:
        defaults = script.sampler_json["defaults"]
        assert isinstance(defaults, dict)
        names = {"TOP_K": "top_k", "MIN_P": "min_p", "REPEAT_PENALTY": "repetition_penalty"}
        sampler.update({names[k]: v for k, v in defaults.items() if k in names})
        sampler.update(script.instruct_row)
    if "top_k" in sampler:
        sampler["top_k"] = int(sampler["top_k"])
    return {k: sampler[k] for k in SAMPLER_KEYS if k in sampler}


def environment(compose: ComposeFile, family: str, notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in compose.env.items():
        if name in MANAGED or name.startswith("ESTATE_"):
            continue
        if name == "CUDA_VISIBLE_DEVICES" and raw is not None:
            continue  # llama.cpp pins cards with it: a profile tunable, see gpu_pin()
        if name == "PYTHONPATH" and _patch_path_only(raw):
            continue  # a patch folder on the path: the patch's own `python_path`
        out[name] = env_spec(name, raw, notes)
    return out


def _patch_path_only(raw: Any) -> bool:
    """PYTHONPATH naming patch folders only (and what it already held, `${PYTHONPATH:-}`)."""
    text = re.sub(r"\$\{PYTHONPATH(:?-)?\}", "", str(raw or ""))
    entries = [e for e in text.split(":") if e]
    return bool(entries) and all(e.startswith("/etc/club3090/") for e in entries)


def gpu_pin(compose: ComposeFile) -> dict[str, Any]:
    """llama.cpp's `CUDA_VISIBLE_DEVICES=${…:-0,1}` as the tunable the existing profiles use."""
    raw = compose.env.get("CUDA_VISIBLE_DEVICES")
    if raw is None:
        return {}
    b = binding(raw)
    cards = b.default if b else default_value(raw)
    if not cards:
        return {}
    return {"CUDA_VISIBLE_DEVICES": {"default": cards, "type": "word",
                                     "help": "GPUs the server uses (llama.cpp splits over all it sees)"}}  # fmt: skip


def mounts(compose: ComposeFile) -> dict[str, Any]:
    """Cache folders and host paths the compose mounts (not models, patches or the NVLink helper)."""
    out = {}
    for volume in compose.volumes:
        b = binding(volume.source)
        if volume.target in CACHE_MOUNTS:
            key, env = CACHE_MOUNTS[volume.target]
            host = "./cache/" + posixpath.basename(volume.source.rstrip("/"))
        elif b is not None and b.names[0] != "MODEL_DIR":
            key, env = _mount_key(volume.target), b.names[0]
            host = b.default if b.default.startswith("/") else "./" + posixpath.basename(b.default)
        else:
            continue
        out[key] = {"host": host, "host_env": env, "container": volume.target,
                    "readonly": volume.read_only, "help": f"host path mounted at {volume.target}"}  # fmt: skip
    return out


def _mount_key(target: str) -> str:
    return (
        re.sub(r"[^a-z0-9]+", "-", posixpath.basename(target.rstrip("/")).lower()).strip("-")
        or "mount"
    )


def container(compose: ComposeFile) -> dict[str, Any]:
    """Restart policy, group id, shared memory: what the compose sets around the engine."""
    service = compose.service
    out: dict[str, Any] = {}
    restart = default_value(str(service.get("restart", "no")))
    if restart in ("no", "always", "on-failure", "unless-stopped"):
        out["restart"] = restart
    user = default_value(str(service.get("user", "")))
    if user.startswith("0:") and user[2:].isdigit():
        out["user_gid"] = int(user[2:])
    shm = str(service.get("shm_size", "")).lower().replace(" ", "")
    if shm:
        out["shm_size"] = shm
    return out
