"""Upstream model, weights and drafter YAMLs read as our model, artifact and drafter entities."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ...model.common import ID_PATTERN
from .source import Tree

PROFILES = "scripts/lib/profiles"
# An id as the registry takes one: it names our files.
ID = re.compile(ID_PATTERN)
FORMATS = {
    "autoround": "auto-round",
    "auto-round": "auto-round",
    "compressed-tensors": "compressed-tensors",
    "fp8": "fp8",
    "modelopt": "nvfp4",
    "nvfp4": "nvfp4",
    "gguf": "gguf",
    "awq": "awq",
    "gptq": "gptq",
}
SPEC_METHODS = {
    "mtp": "mtp",
    "mtp_gguf": "mtp",
    "dflash": "dflash",
    "dflash2": "dflash",
    "mtp_assistant": "draft_model",
    "assistant": "draft_model",
    "dspark": "dspark",
    "eagle3": "eagle3",
    "eagle": "eagle",
}


def load_yaml(tree: Tree, path: str) -> dict[str, Any] | None:
    text = tree.text(path)
    if text is None:
        return None
    try:
        data = YAML(typ="safe").load(text)
    except YAMLError:
        return None
    return data if isinstance(data, dict) else None


def upstream_models(tree: Tree) -> dict[str, dict[str, Any]]:
    return _by_id(tree, "models")


def upstream_drafters(tree: Tree) -> dict[str, dict[str, Any]]:
    return _by_id(tree, "drafters")


def upstream_engines(tree: Tree) -> dict[str, dict[str, Any]]:
    return _by_id(tree, "engines")


def _by_id(tree: Tree, folder: str) -> dict[str, dict[str, Any]]:
    out = {}
    for path in tree.under(f"{PROFILES}/{folder}"):
        data = load_yaml(tree, path) if path.endswith((".yml", ".yaml")) else None
        if data and isinstance(data.get("id"), str) and ID.match(data["id"]):
            out[data["id"]] = data
    return out


def unreadable(tree: Tree, folder: str, ident: str) -> str | None:
    """Why the catalogue's file for `ident` under `folder` could not be read (located at its
    file and line), where one is named after it or claims its id; None where none is."""
    for path in tree.under(f"{PROFILES}/{folder}"):
        stem = posixpath.splitext(posixpath.basename(path))[0]
        if not path.endswith((".yml", ".yaml")):
            continue
        text = tree.text(path) or ""
        try:
            data = YAML(typ="safe").load(text)
        except YAMLError as exc:
            if stem != ident:
                continue
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
            return f"{path}{line}: not valid YAML ({first})"
        if not isinstance(data, dict):
            if stem == ident:
                return f"{path}:1: not a mapping of {folder[:-1]} facts"
            continue
        raw = data.get("id")
        if (stem == ident or str(raw) == ident) and not (isinstance(raw, str) and ID.match(raw)):
            where = next((n for n, x in enumerate(text.splitlines(), 1) if x.startswith("id:")), 1)
            return f"{path}:{where}: id {str(raw)[:80]!r} is not a valid id ({ID.pattern})"
    return None


def architecture(up: dict[str, Any]) -> dict[str, Any]:
    """Our architecture facts from an upstream model file (every number as upstream states it)."""
    layers = int(up["num_hidden_layers"])
    heads = int(up["num_attn_heads"])
    full = up.get("num_attn_layers") or up.get("num_full_attn_layers") or layers
    head_dim = (
        up.get("head_dim_attn") or up.get("global_head_dim") or int(up["hidden_size"]) // heads
    )
    arch: dict[str, Any] = {
        "num_layers": layers,
        "full_attention_layers": int(full),
        "hidden_size": int(up["hidden_size"]),
        "num_attention_heads": heads,
        "num_kv_heads": int(up["num_kv_heads"]),
        "head_dim": int(head_dim),
        "max_position_embeddings": int(up["max_ctx_supported"]),
    }
    if up.get("intermediate_size"):
        arch["intermediate_size"] = int(up["intermediate_size"])
    if up.get("num_gdn_layers"):
        arch["linear_attention"] = {
            "num_key_heads": int(up["linear_num_k_heads"]),
            "num_value_heads": int(up["linear_num_v_heads"]),
            "key_head_dim": int(up["linear_k_head_dim"]),
            "value_head_dim": int(up["linear_v_head_dim"]),
            "conv_kernel": int(up["linear_conv_kernel_dim"]),
        }
    sliding = up.get("num_sliding_attn_layers")
    if sliding:
        arch["sliding_window"] = int(up.get("sliding_window") or up.get("swa_window") or 0)
        arch["sliding_window_layers"] = int(sliding)
    if up.get("num_experts"):
        moe: dict[str, Any] = {
            "num_experts": int(up["num_experts"]),
            "experts_per_token": int(up["num_experts_per_tok"]),
        }
        if up.get("moe_intermediate_size"):
            moe["moe_intermediate_size"] = int(up["moe_intermediate_size"])
        if up.get("num_shared_experts"):
            moe["shared_experts"] = int(up["num_shared_experts"])
        arch["moe"] = moe
    if up.get("mtp_num_hidden_layers"):
        arch["mtp_layers"] = int(up["mtp_num_hidden_layers"])
    if up.get("attn_output_gate"):
        arch["attn_output_gate"] = True
    if up.get("vision_capable"):
        arch["vision"] = True
    return arch


def artifact(
    variant: dict[str, Any], local_dir: str, files: list[str], kind: str
) -> dict[str, Any]:
    """An artifact entry: repo, size and format as upstream declares them, placed at local_dir."""
    repo = variant.get("hf_repo") or (variant.get("hf_repos") or [None])[0]
    out: dict[str, Any] = {"repo": repo}
    if variant.get("revision"):
        out["revision"] = str(variant["revision"])
    if files:
        out["files"] = files
    size = variant.get("size_gb")
    if isinstance(size, int | float):
        out["size"] = {"value": size, "unit": "GB"}
    out["format"] = FORMATS.get(str(variant.get("format")), "safetensors")
    quant = variant.get("quant_label")
    if quant:
        out["quantization"] = str(quant)
    if kind != "main":
        out["kind"] = kind
    out["local_dir"] = local_dir
    return out


def weight_dtype(variant_name: str, fmt: str) -> str | None:
    """The stored type of quantized linear weights where the format alone does not say it."""
    name = variant_name.lower()
    if fmt not in ("compressed-tensors", "safetensors"):
        return None
    for hint, dtype in (("nvfp4", "nvfp4"), ("fp8", "fp8"), ("int8", "int8"), ("w4", "int4"),
                        ("int4", "int4"), ("awq", "int4"), ("4bit", "int4"), ("bf16", "bf16")):  # fmt: skip
        if hint in name:
            return dtype
    return None
