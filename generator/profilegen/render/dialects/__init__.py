"""Engine families' command-line dialects: a profile's facts -> the engine's arguments.

Each module builds an `EngineCommand` from a render `Context`. Flag spellings are the
family's; an engine build may respell any fact (`spellings:` in its registry file).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import llamacpp, sglang, vllm

if TYPE_CHECKING:
    from ..command import EngineCommand
    from ..context import Context

DIALECTS: dict[str, Callable[[Context], EngineCommand]] = {
    "vllm": vllm.build,
    "llama.cpp": llamacpp.build,
    "sglang": sglang.build,
}


def engine_command(ctx: Context) -> EngineCommand:
    return DIALECTS[ctx.engine.kind](ctx)


# Whether the family's image can run profilegen's weights loader (Python and huggingface_hub).
HUB_CLIENT: dict[str, bool] = {
    "vllm": vllm.IMAGE_HAS_HUB_CLIENT,
    "llama.cpp": llamacpp.IMAGE_HAS_HUB_CLIENT,
    "sglang": sglang.IMAGE_HAS_HUB_CLIENT,
}


def image_has_hub_client(kind: str) -> bool:
    return HUB_CLIENT[kind]
