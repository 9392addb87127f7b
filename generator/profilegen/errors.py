"""Findings: located, collected problems, and the one exception that carries them."""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
# A service that cannot be reached shares the usage code: the run proved nothing either way.
EXIT_UNREACHABLE = EXIT_USAGE


def suggest(word: str, choices: Sequence[str]) -> str | None:
    """A 'did you mean' for a misspelt key or reference."""
    return _suggest(word, tuple(choices))


@functools.lru_cache(maxsize=4096)
def _suggest(word: str, choices: tuple[str, ...]) -> str | None:
    # The same word is often asked about the same choices many times (each scenario of a
    # profile): difflib is slow enough for that to show.
    return _closest(word, choices, cutoff=0.6)


def _closest(word: str, choices: Iterable[str], cutoff: float) -> str | None:
    """What `difflib.get_close_matches(word, choices, n=1, cutoff)` answers (the best ratio,
    the greater choice among equals), with the full ratio worked out only while a choice's
    quick upper bound could still beat the best so far: an engine's few hundred variable
    names cost a few of them instead of hundreds."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    bounded = []
    for choice in choices:
        matcher.set_seq1(choice)
        if matcher.real_quick_ratio() >= cutoff and (bound := matcher.quick_ratio()) >= cutoff:
            bounded.append((bound, choice))
    bounded.sort(reverse=True)
    best: tuple[float, str] | None = None
    for bound, choice in bounded:
        if best is not None and bound < best[0]:
            break
        matcher.set_seq1(choice)
        score = (matcher.ratio(), choice)
        if score[0] >= cutoff and (best is None or score > best):
            best = score
    return None if best is None else best[1]


# Characters that a terminal or a reader cannot see for what they are: controls, line and
# paragraph separators, and format characters (bidi overrides, zero-width joiners).
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def printable(text: str, *, keep: str = "") -> str:
    """`text` with every hidden character written as an escape (`\\u202e`), so that a message
    shows registry text for what it is and no file name can forge a line of output."""
    if text.isascii() and text.isprintable():
        return text  # no ASCII character but the controls is hidden, and isprintable has none
    out = []
    for char in text:
        if char in keep or unicodedata.category(char) not in _HIDDEN:
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return "".join(out)


def one_line(text: str, limit: int) -> str:
    """What a server said, for a message: one line of at most `limit` characters (each
    character that is not printable, a line break among them, shown as a space)."""
    shown = "".join(c if c.isprintable() else " " for c in text).strip()
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


# Credentials in a URL (user:password@, a query's key or token), written as `***` wherever
# profilegen echoes text it was given: a registry value in an error, a CI log, a bug report.
# scheme://user:password@host: everything from the scheme to the host's last `@`.
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/?#\s]*@")
# ?key=..., &token=...: a query value named like a secret.
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|key|token|access[_-]?token|auth|password|passwd|secret|sig"
    r"|signature)=)[^&#;\s'\"]*"
)


def hide_credentials(text: str) -> str:
    """`text` with the user information and secret query values of every URL in it hidden."""
    if "://" not in text:
        return text
    return _QUERY_SECRET.sub(r"\1***", _USERINFO.sub(r"\1***@", text))


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Location:
    file: str
    line: int | None = None
    # The profiles that inherit the value written here through `extends`: a finding about it
    # is one mistake in this file, and names who else it reaches.
    inherited_by: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        file = printable(self.file)
        return file if self.line is None else f"{file}:{self.line}"

    def via(self, profile: str) -> Location:
        """The same place, reached through `profile`'s `extends` chain."""
        return Location(self.file, self.line, tuple(sorted({*self.inherited_by, profile})))


@dataclass(frozen=True)
class Value:
    """One value of a registry entity (`profiles`, `qwen38-27b-dual-fast`, `envelope.tp`): what
    a finding is about, or what it follows from. No node is the whole entity."""

    kind: str
    ident: str
    node: tuple[str | int, ...] = ()

    @classmethod
    def of_profile(cls, ident: str, *node: str | int) -> Value:
        return cls("profiles", ident, node)

    def overlaps(self, other: Value) -> bool:
        """The same value, or one holds the other (`envelope` holds `envelope.tp`)."""
        if (self.kind, self.ident) != (other.kind, other.ident):
            return False
        common = min(len(self.node), len(other.node))
        return self.node[:common] == other.node[:common]

    def __str__(self) -> str:
        return ".".join((self.ident, *map(str, self.node)))


@dataclass(frozen=True)
class Finding:
    """One problem, always tied to the registry file (and line) it comes from."""

    location: Location
    message: str
    hint: str | None = None
    rule: str = "schema"
    severity: Severity = Severity.ERROR
    path: str = ""
    # The value the finding reports, and the values it merely follows from: `check` leaves out
    # a finding that follows a value another finding already reports (one mistake, one
    # finding). Neither makes two findings different.
    about: Value | None = field(default=None, compare=False, repr=False)
    follows: tuple[Value, ...] = field(default=(), compare=False, repr=False)

    @property
    def inherited(self) -> str:
        """` (inherited by a, b)` when the value is reached through `extends`, else ``."""
        names = self.location.inherited_by
        return f" (inherited by {', '.join(names)})" if names else ""

    def render(self) -> str:
        """One line, whatever the registry text in it holds."""
        hint = f" ({self.hint})" if self.hint else ""
        return printable(
            f"{self.location}: {self.severity.value}: [{self.rule}] "
            f"{self.message}{self.inherited}{hint}"
        )

    def as_json(self) -> dict[str, object]:
        """The finding as `--format json` reports print it."""
        return {
            "file": self.location.file,
            "line": self.location.line,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
            "path": self.path or None,
            "inherited_by": list(self.location.inherited_by),
        }

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.location.file, self.location.line or 0, self.rule, self.message)


class ProfilegenError(Exception):
    """Base class: an error the CLI reports without a traceback."""

    exit_code = EXIT_FINDINGS


class UsageError(ProfilegenError):
    """The command line asked for something that does not exist or makes no sense."""

    exit_code = EXIT_USAGE


class NetworkError(ProfilegenError):
    """The Hub or a patch host could not be reached (or not within the deadline)."""

    exit_code = EXIT_UNREACHABLE


@dataclass
class RegistryError(ProfilegenError):
    """The registry cannot be used: it carries every finding, not just the first."""

    findings: list[Finding] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(f.render() for f in sorted(self.findings, key=Finding.sort_key))


def merge_findings(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per mistake: repeats of it (through several inheritors) are folded into one
    that names every profile that inherited the value, in first-seen order."""
    merged: dict[Finding, Finding] = {}
    for finding in findings:
        known = merged.get(finding)
        if known is None:
            merged[finding] = finding
        elif finding.location.inherited_by:
            location = known.location
            for name in finding.location.inherited_by:
                location = location.via(name)
            merged[finding] = replace(known, location=location)
    return list(merged.values())


class FindingSink:
    """Collects findings so that one run reports all of them."""

    def __init__(self) -> None:
        self._findings: dict[Finding, Finding] = {}

    @property
    def findings(self) -> list[Finding]:
        return list(self._findings.values())

    def copy(self) -> FindingSink:
        """A sink of its own holding the same (frozen) findings."""
        other = FindingSink()
        other._findings = dict(self._findings)
        return other

    def add(
        self,
        location: Location,
        message: str,
        *,
        hint: str | None = None,
        rule: str = "schema",
        severity: Severity = Severity.ERROR,
        path: str = "",
    ) -> None:
        finding = Finding(location, message, hint, rule, severity, path)
        # A value inherited by several profiles is one mistake, reported once.
        known = self._findings.get(finding)
        self._findings[finding] = merge_findings([known, finding])[0] if known else finding

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def raise_if_errors(self) -> None:
        if self.errors:
            raise RegistryError(sorted(self.findings, key=Finding.sort_key))
