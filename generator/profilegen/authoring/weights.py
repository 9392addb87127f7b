"""How the weights are stored (quantization_config) and the recommended sampling defaults."""

from __future__ import annotations

from typing import Any

from .facts import DerivationError, Facts, Lookup, Source

# quant_method -> (Artifact.format, weight dtype it implies or None where config_groups tell)
METHODS: dict[str, tuple[str, str | None]] = {
    "fp8": ("fp8", "fp8"),
    "compressed-tensors": ("compressed-tensors", None),
    "awq": ("awq", "int4"),
    "gptq": ("gptq", "int4"),
    "auto-round": ("auto-round", "int4"),
    "intel/auto-round": ("auto-round", "int4"),
}
# ModelOpt checkpoints (NVIDIA) name the algorithm instead.
MODELOPT = {"NVFP4": ("nvfp4", "nvfp4"), "FP8": ("fp8", "fp8")}
GROUP_DTYPES: dict[tuple[Any, Any], str] = {
    (4, "int"): "int4",
    (8, "int"): "int8",
    (8, "float"): "fp8",
    (4, "float"): "nvfp4",
}
TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16"}
SAMPLING = {
    "temperature": ("temperature", float),
    "top_p": ("top_p", float),
    "top_k": ("top_k", int),
    "min_p": ("min_p", float),
    "repetition_penalty": ("repetition_penalty", float),
}


def _group_dtype(quant: dict[str, Any]) -> str | None:
    """compressed-tensors: the weights' storage type from its config groups."""
    found = set()
    for group in (quant.get("config_groups") or {}).values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict):
            continue
        bits, kind = weights.get("num_bits"), weights.get("type")
        found.add(GROUP_DTYPES.get((bits, kind), f"{kind}{bits}"))
    if len(found) != 1:
        return None
    dtype = found.pop()
    return dtype if dtype in {"int4", "int8", "fp8", "nvfp4"} else None


def _bits(quant: dict[str, Any], dtype: str) -> str:
    """A short name: W4A16, FP8, NVFP4."""
    if dtype == "fp8":
        return "FP8"
    if dtype == "nvfp4":
        return "NVFP4"
    bits = quant.get("bits") or {"int4": 4, "int8": 8}.get(dtype, 16)
    return f"W{bits}A16"


def weight_facts(config: dict[str, Any], source: Source, variant: str) -> Facts:
    """format, weight_dtype and quantization of a safetensors checkpoint."""
    facts = Facts()
    base = f"artifacts.{variant}"
    quant = config.get("quantization_config") or (config.get("text_config") or {}).get(
        "quantization_config"
    )
    if quant is None:
        found = Lookup(config, source).first(["torch_dtype", "dtype"])
        dtype = TORCH_DTYPES.get(str(found[1])) if found else None
        facts.put(f"{base}.format", "safetensors", source, None)  # no quantization_config
        if found is not None and dtype is not None:
            facts.put(f"{base}.weight_dtype", dtype, source, found[0])
        return facts
    if not isinstance(quant, dict):
        raise DerivationError(f"{source.file}: quantization_config is not an object")
    method = str(quant.get("quant_method", "")).lower()
    key = "quantization_config.quant_method"
    if method == "modelopt":
        algo = str(quant.get("quant_algo", "")).upper()
        if algo not in MODELOPT:
            raise DerivationError(f"{source.file}: ModelOpt quant_algo {algo!r} is not supported")
        fmt, dtype = MODELOPT[algo]
        key = "quantization_config.quant_algo"
    elif method in METHODS:
        fmt, implied = METHODS[method]
        dtype = implied or _group_dtype(quant)
    else:
        raise DerivationError(
            f"{source.file}: quantization method {method or '(none)'!r} is not one profilegen "
            f"serves (known: {', '.join(sorted(METHODS))}, modelopt)"
        )
    facts.put(f"{base}.format", fmt, source, key)
    if dtype is not None and fmt in ("compressed-tensors", "auto-round"):
        facts.put(f"{base}.weight_dtype", dtype, source, "quantization_config")
    label = _bits(quant, dtype or "int4")
    if fmt not in ("fp8", "nvfp4"):
        label = f"{label} {fmt}"
    facts.put(f"{base}.quantization", label, source, key)
    return facts


def sampling_facts(generation: dict[str, Any], source: Source) -> Facts:
    """generation_config.json's sampling defaults (what the model's authors recommend)."""
    facts = Facts()
    look = Lookup(generation, source)
    for key, (name, kind) in SAMPLING.items():
        if key in generation and generation[key] is not None:
            value = look.typed(key, generation[key], kind, least=-1)
            facts.put(f"sampling.{name}", value, source, key)
    return facts
