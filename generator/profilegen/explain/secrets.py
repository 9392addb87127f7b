"""Variables whose values explain never shows or stores (a report is pasted into bug reports)."""

from __future__ import annotations

SECRETS = frozenset(
    {"API_KEY", "VLLM_API_KEY", "LLAMA_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
)


def shown(name: str, value: str) -> str:
    """A variable's value as a report shows it: a set secret as <secret>."""
    return "<secret>" if name in SECRETS and value else value
