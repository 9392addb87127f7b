"""What a profile is for and which known engine bugs it runs into, each with where it was read."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from .common import PositiveInt, Strict, Text, Word

# A file path of the catalogue a statement was read from (relative, no `..` segment).
SourcePath = Annotated[
    str,
    StringConstraints(
        pattern=r"^(?!.*(^|/)\.\.(/|$))[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]{0,299}$",
    ),
]
# A revision of that catalogue (a commit, 8-40 hex).
SourceRev = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8,40}$")]
# An issue or pull request of a project: `vllm#50021`, `llama.cpp#12345`.
IssueRef = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}#[0-9]{1,9}$")
]


class Source(Strict):
    """Where a statement was read: a file of the upstream catalogue at a revision and its line
    (no line: the file as a whole). Without `rev` the file is one of this repository."""

    file: SourcePath
    line: PositiveInt | None = None
    rev: SourceRev | None = None

    def __str__(self) -> str:
        line = f":{self.line}" if self.line else ""
        return f"{self.file}{line}" + (f" at {self.rev}" if self.rev else "")


class Exposure(Strict):
    """A known engine bug the profile runs into, what it does, and how to avoid it."""

    issue: IssueRef
    effect: Text
    mitigation: Text | None = None
    source: Source


class Recommendation(Strict):
    """Advice about a profile: a pick (for a rig or a use), a quality figure or a warning."""

    kind: Literal["pick", "quality", "warning"]
    says: Text
    # The rig shape the advice is about (`2x3090`); unset: any.
    rig: Word | None = None
    source: Source
