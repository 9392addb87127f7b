"""Engine families' command-line dialects: a profile's facts -> the engine's arguments.

Each module builds an `EngineCommand` from a render `Context`; a family names its dialect. Flag spellings are the
family's; an engine build may respell any fact (`spellings:` in its registry file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..command import EngineCommand
    from ..context import Context


def engine_command(ctx: Context) -> EngineCommand:
    """The engine's command line, built by its family's dialect (`Family.dialect`)."""
    command: EngineCommand = ctx.family.call("dialect", ctx)
    return command
