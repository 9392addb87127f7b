"""What a profile puts in its container: no reserved variable, no mount over the engine's paths,
no tunable that never reaches the engine (worked out once per check, in check/container.py)."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding
from .base import CheckContext, rule


def _reported(ctx: CheckContext) -> Iterator[Finding]:
    """The container findings of the rule now running."""
    running = ctx.running.id if ctx.running else None
    for findings in ctx.container.values():
        yield from (f for f in findings if f.rule == running)


@rule(
    "reserved-env",
    "no container variable is one that bash, the dynamic loader, Python or the entrypoint "
    "itself interprets (the reserved set is read off the rendered entrypoint)",
)
def reserved_env(ctx: CheckContext) -> Iterator[Finding]:
    yield from _reported(ctx)


@rule(
    "reserved-mount",
    "no profile mount lands on, inside or above the model mount, a patch mount, the "
    "entrypoint's folder or a system folder of the image",
)
def reserved_mount(ctx: CheckContext) -> Iterator[Finding]:
    yield from _reported(ctx)


@rule(
    "tunable-unused",
    "every tunable that overrides a registry fact reaches the engine's command line (or the "
    "entrypoint step that reads it)",
)
def tunable_unused(ctx: CheckContext) -> Iterator[Finding]:
    yield from _reported(ctx)
