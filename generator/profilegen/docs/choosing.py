"""What `list` ranks and filters by when a person chooses: a profile's uses (from its
`best_for` and upstream's picks), its quality (upstream's figures and picks), its status, and a
context length as people write it (131072, 128k).

Uses are read from words, so they are coarse on purpose: `coding` is code and agent work
(upstream's agents are coding agents), `chat` is chat, `long-context` is a long or full context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import click

from ..errors import ProfilegenError, UsageError
from ..fit.rigs import find_rig, same_cards
from ..model import Profile, Rig
from ..model.common import STATUS_LADDER
from ..registry import Registry

USES: dict[str, re.Pattern[str]] = {
    "coding": re.compile(r"\b(?:code|coding|agents?|agentic|IDE)\b", re.IGNORECASE),
    "chat": re.compile(r"\bchat\b", re.IGNORECASE),
    "long-context": re.compile(r"\b(?:long|full)[ -]context\b", re.IGNORECASE),
}
SORTS = ("speed", "context", "quality")
# Production first: the status a person can rely on most, then the ones with known limits.
STATUS_ORDER = {s: i for i, s in enumerate(reversed((*STATUS_LADDER,)))} | {"retired": 9}
_SCORE = re.compile(r"\b(?P<n>\d{1,5})(?:/| vs \d{1,5} of )(?P<of>\d{1,5})\b")
_TOKENS = re.compile(r"^(?P<n>[0-9]+(?:\.[0-9]+)?)(?P<unit>[kKmM]?)$")


def uses(profile: Profile) -> list[str]:
    """The uses a profile states: its best_for, and what upstream picked it for."""
    text = " ".join(
        [profile.best_for or "", *(r.says for r in profile.recommendations if r.kind == "pick")]
    )
    return [use for use, words in USES.items() if words.search(text)]


class ContextLength(click.ParamType[int]):
    """A number of tokens: 131072, or with k/m (x1,024 / x1,048,576): 128k, 1m."""

    name = "tokens"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        m = _TOKENS.match(str(value).strip())
        scale = {"": 1, "k": 1024, "m": 1024 * 1024}[m["unit"].lower()] if m else 0
        tokens = int(float(m["n"]) * scale) if m else 0
        if tokens <= 0 or (m is not None and scale == 1 and "." in m["n"]):
            raise UsageError(
                f"--min-context must be a number of tokens (131072, 128k), got {value!r}"
            )
        return tokens


def context_text(tokens: int, exact: bool = False) -> str:
    """262144 -> 256k, 204800 -> 200k; 244320 -> 238k (whole k, rounded down), or 244,320
    where exact is asked."""
    if tokens % 1024 == 0 or (tokens >= 1024 and not exact):
        return f"{tokens // 1024}k"
    return f"{tokens:,}"


@dataclass(frozen=True)
class Quality:
    """What is known of a profile's answers: the best score stated for it (a fraction of its
    suite), where it came from, and whether upstream picks it for the rig."""

    score: float | None
    figure: str | None  # "131/150 standard 150"
    picked: bool

    def text(self) -> str:
        parts = [self.figure or "", "pick" if self.picked else ""]
        return ", ".join(p for p in parts if p) or "-"

    def key(self) -> tuple[int, float]:
        """Scored first (best first), then upstream's picks, then the rest."""
        if self.score is not None:
            return (0, -self.score)
        return (1 if self.picked else 2, 0.0)


def quality(registry: Registry, profile: Profile, rig: Rig | None) -> Quality:
    scores: list[tuple[float, str]] = []
    for ev in profile.evidence:
        for q in ev.measured.quality:
            scores.append((q.pass_at_1 / q.total, f"{q.pass_at_1}/{q.total} {q.suite}"))
    for rec in profile.recommendations:
        if rec.kind == "quality" and _about(registry, rec.rig, rig):
            for m in _SCORE.finditer(rec.says):
                n, of = int(m["n"]), int(m["of"])
                if 0 < n <= of:
                    suite = " 8-pack" if "8-pack" in rec.says else ""
                    scores.append((n / of, f"{n}/{of}{suite}"))
    picked = any(r.kind == "pick" and _about(registry, r.rig, rig) for r in profile.recommendations)
    best = max(scores, default=None)
    return Quality(best[0] if best else None, best[1] if best else None, picked)


def _about(registry: Registry, said_of: str | None, rig: Rig | None) -> bool:
    """Whether advice about `said_of` (a rig shape, or any) holds for the rig asked about."""
    if said_of is None or rig is None:
        return True
    try:
        return same_cards(find_rig(registry, said_of), rig)
    except ProfilegenError:  # a rig shape the registry cannot name is another rig
        return False


def figure(speed: dict[str, Any] | None, for_code: bool) -> float | None:
    """The decode figure ranked: code for coding, else narrative (the other where one is
    missing)."""
    if not speed:
        return None
    first, second = ("code", "narrative") if for_code else ("narrative", "code")
    value = speed[first] if speed[first] is not None else speed[second]
    return float(value) if value is not None else None


def here(row: dict[str, Any]) -> dict[str, Any] | None:
    """The speed measured on the rig asked about or on one of the same cards."""
    speed = row.get("speed")
    return speed if speed and speed["tier"] <= 1 else None


@dataclass(frozen=True)
class ListOptions:
    fmt: str = "text"
    rig: str | None = None
    fits: bool = False
    detect: bool = False
    all: bool = False  # retired profiles too
    engines: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()  # coding, chat, long-context (any of them)
    min_context: int | None = None
    sort: str | None = None  # speed, context, quality (unset: speed on a rig, else by id)
    wide: bool = False
