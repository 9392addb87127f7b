"""An upstream compose's `environment:` as our container variables (literal, pass-through, host)."""

from __future__ import annotations

from typing import Any

from ...registry.safejson import load_json
from .words import binding, default_value

# Variables profilegen declares itself from modelled facts (the drafter toggle, NVLink, switches,
# tunables), or that only steer upstream's own launcher.
MANAGED = frozenset({
    "SPEC", "SPEC_N", "SPEC_N_MAX", "NUM_SPEC_TOKENS", "NVLINK_MODE", "W4A8", "ENABLE_THINKING",
    "TEMP", "TEMPERATURE", "TOP_P", "TOP_K", "MIN_P", "PRESENCE_PENALTY", "REPEAT_PENALTY",
    "REASONING_EFFORT", "VLLM_MARLIN_INPUT_DTYPE", "LLAMA_ARG_CHAT_TEMPLATE_KWARGS",
})  # fmt: skip


def envelope_env(env: dict[str, str | None], tunables: list[dict[str, Any]]) -> dict[str, Any]:
    """Variables that are tunables of an envelope fact (VLLM_V2_CUDAGRAPH_MEM_MIB): the fact."""
    out: dict[str, Any] = {}
    for tunable in tunables:
        field = str(tunable.get("field", ""))
        raw = env.get(tunable["env"])
        if not field.startswith("profile.envelope.") or raw is None:
            continue
        text = default_value(raw)
        kind = tunable["type"]
        try:
            out[field.removeprefix("profile.envelope.")] = (
                int(text) if kind == "int" else float(text) if kind == "float" else text
            )
        except ValueError:
            continue
    return out


def env_spec(name: str, raw: str | None, notes: list[str]) -> Any:
    """Our EnvSpec for one upstream entry: None (pass-through), text, or {host, default}."""
    if raw is None:
        return None
    b = binding(raw)
    if b is not None:
        hosts = [n for n in b.names if not n.startswith("ESTATE_")]
        if not hosts:
            return b.default
        out: dict[str, Any] = {"host": hosts}
        if b.default:
            out["default"] = b.default
        return out
    if "$" in raw.replace("$$", ""):
        notes.append(
            f"env {name}={raw}: an interpolation inside text is not modelled; kept its default value"
        )
    return default_value(raw)


def template_kwargs(raw: str | None) -> dict[str, Any]:
    """llama.cpp's LLAMA_ARG_CHAT_TEMPLATE_KWARGS default as chat-template kwargs."""
    if raw is None:
        return {}
    try:
        value = load_json(default_value(raw))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
