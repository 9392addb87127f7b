"""What a profile puts in its container: no reserved variable, no mount over the engine's paths."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding
from .base import CheckContext, rule


@rule(
    "reserved-env",
    "no container variable is one that bash, the dynamic loader, Python or the entrypoint "
    "itself interprets (the reserved set is read off the rendered entrypoint)",
)
def reserved_env(ctx: CheckContext) -> Iterator[Finding]:
    for findings in ctx.container.values():
        yield from (f for f in findings if f.rule == "reserved-env")


@rule(
    "reserved-mount",
    "no profile mount lands on, inside or above the model mount, a patch mount, the "
    "entrypoint's folder or a system folder of the image",
)
def reserved_mount(ctx: CheckContext) -> Iterator[Finding]:
    for findings in ctx.container.values():
        yield from (f for f in findings if f.rule == "reserved-mount")


@rule(
    "tunable-unused",
    "every tunable that overrides a registry fact reaches the engine's command line (or the "
    "entrypoint step that reads it)",
)
def tunable_unused(ctx: CheckContext) -> Iterator[Finding]:
    for findings in ctx.container.values():
        yield from (f for f in findings if f.rule == "tunable-unused")
