"""The named checks of `profilegen check`, one module per area, registered by `@rule`."""

from __future__ import annotations

from .base import RULES, CheckContext, Rule, RunsPending, rule

__all__ = ["RULES", "CheckContext", "Rule", "RunsPending", "load_rules", "rule"]


def load_rules() -> list[Rule]:
    """Imports the rule modules (registration happens at import), in report order."""
    from . import (  # noqa: F401
        catalogue,
        disk,
        docs,
        environment,
        evidence,
        explain,
        facts,
        fit,
        gateway,
        hardware,
        kubernetes,
        lockfile,
        patches,
        serving,
    )

    return RULES
