"""What the lock records of a Hub artifact: the request, the files found, the outcome."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArtifactRequest:
    """One registry artifact to check on the Hub.

    Sizes are plain bytes. Catalogues quote checkpoints in GB (1e9 bytes) or GiB (2**30
    bytes); the caller converts before building the request. The two units differ by 7.4%,
    more than the default 5% tolerance, so a unit mix-up is reported as size drift (with a
    hint naming the likely confusion) instead of being silently absorbed.
    """

    key: str
    repo: str
    revision: str | None
    files: tuple[str, ...]
    declared_size_bytes: int | None
    size_tolerance: float = 0.05

    def __post_init__(self) -> None:
        if self.size_tolerance < 0:
            raise ValueError(f"{self.key}: size_tolerance must be >= 0")
        if self.declared_size_bytes is not None and self.declared_size_bytes < 0:
            raise ValueError(f"{self.key}: declared_size_bytes must be >= 0")


@dataclass(frozen=True)
class RemoteFile:
    """A file as the Hub reports it at the resolved commit."""

    path: str
    size: int | None
    sha256: str | None  # from the LFS pointer; None for files stored in plain git


@dataclass(frozen=True)
class HubProblem:
    """One finding about an artifact; ``code`` is stable, ``message`` is for humans."""

    code: str
    message: str


@dataclass(frozen=True)
class ArtifactResult:
    """Outcome of checking one artifact; ``problems`` is empty when it is sound."""

    request: ArtifactRequest
    commit: str | None
    files: tuple[RemoteFile, ...]
    total_size: int | None
    gated: bool
    problems: tuple[HubProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems
