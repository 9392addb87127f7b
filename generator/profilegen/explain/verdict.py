"""Whether a profile's scenarios still explain: each launches or is refused by a guard."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .core import Explanation

GUARD_EXIT_CODES = (1, 2)


@dataclass(frozen=True)
class Outcome:
    scenario: str
    launched: bool
    exit_code: int | None
    message: str | None

    @classmethod
    def of(cls, explanation: Explanation) -> Outcome:
        e = explanation
        return cls(e.scenario.label, e.launched, e.exit_code, e.message)

    def problem(self) -> str | None:
        """Why this outcome is wrong, or None."""
        if self.scenario == "defaults" and not self.launched:
            return f"does not start with its defaults (exit {self.exit_code}: {self.message})"
        if self.scenario == "SPEC_N=abc" and (self.launched or self.exit_code != 1):
            return "accepts a malformed SPEC_N (the entrypoint must refuse it with exit 1)"
        if not self.launched and self.exit_code not in GUARD_EXIT_CODES:
            return (
                f"[{self.scenario}] the entrypoint failed (exit {self.exit_code}: {self.message})"
            )
        return None


def outcomes(explanations: Iterable[Explanation]) -> list[Outcome]:
    """The outcome of each scenario explained."""
    return [Outcome.of(e) for e in explanations]
