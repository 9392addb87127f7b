"""Explanations for people (one flag per line) and for programs (JSON)."""

from __future__ import annotations

from typing import Any

from ..model.common import is_option
from .core import Explanation
from .secrets import shown

# Environment namespaces an engine or its runtime reads; the rest is listed apart.
ENGINE_PREFIXES = (
    "VLLM_", "NCCL_", "PYTORCH_", "TORCH", "TRITON_", "CUDA_", "NVIDIA_", "HF_", "HUGGING_FACE_",
    "TRANSFORMERS_", "TOKENIZERS_", "OMP_", "MKL_", "FLASHINFER_", "LLAMA_", "GGML_", "SGLANG_",
    "SGL_", "LD_", "PYTHON",
)  # fmt: skip


def flag_lines(argv: tuple[str, ...]) -> list[str]:
    """A flag and its values on one line; positional words on their own."""
    lines: list[str] = []
    for word in argv:
        if is_option(word) or not lines:
            lines.append(word)
        else:
            lines[-1] += " " + word
    return lines


def engine_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(ENGINE_PREFIXES)}


def as_json(e: Explanation) -> dict[str, Any]:
    data: dict[str, Any] = {
        "profile": e.profile,
        "scenario": {k: shown(k, v) for k, v in e.scenario.env},
        "gpus": e.gpus,
        "nvlink": e.scenario.nvlink,
        "engine": e.engine,
        "launched": e.launched,
        "patches": [[s.action, *s.words] for s in e.patches],
        "deviations": list(e.deviations),
        "said": list(e.said),
    }
    if e.launched:
        data.update(exe=e.exe, argv=list(e.argv), env={k: shown(k, v) for k, v in e.env.items()})
    else:
        data.update(exit_code=e.exit_code, message=e.message)
    return data


def as_text(e: Explanation) -> str:
    link = "NVLink" if e.scenario.nvlink else "no NVLink"
    lines = [f"{e.profile} [{e.scenario.label}] on {e.gpus} GPU(s), {link}"]
    if not e.launched:
        lines.append(f"REFUSED with exit code {e.exit_code}: {e.message}")
    else:
        lines.append(f"runs: {e.exe}")
        lines += [f"  {line}" for line in flag_lines(e.argv)]
        own = engine_env(e.env)
        lines.append("engine environment:")
        lines += [f"  {k}={shown(k, v)}" for k, v in own.items()]
        rest = sorted(set(e.env) - set(own))
        if rest:
            lines.append("other variables: " + ", ".join(rest))
    if e.said and e.launched:
        lines.append("entrypoint said: " + "; ".join(e.said))
    if e.patches:
        lines.append("patch steps (each file found at its mount; applied only in the container):")
        lines += [f"  {s.action:<7}{' '.join(s.words)}" for s in e.patches]
    for deviation in e.deviations:
        lines.append(f"deviation: {deviation}")
    return "\n".join(lines)
