"""What a Hub check asks and answers: requests, results, settings, plans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# What the lock records (requests, remote files, results) lives with the lock file.
from ..lockfile.records import ArtifactRequest as ArtifactRequest
from ..lockfile.records import ArtifactResult as ArtifactResult
from ..lockfile.records import HubProblem as HubProblem
from ..lockfile.records import RemoteFile as RemoteFile

# Findings that describe the registry entry but do not stop a download.
ADVISORY_CODES = frozenset({"revision-unpinned", "size-drift"})
# Problems that say the Hub could not be asked (not what it answered): exit 2, not findings.
NETWORK_CODES = frozenset({"transport", "http-error", "deadline"})


# -- public data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HubSettings:
    """How to reach the Hub; ``retries`` counts attempts beyond the first."""

    endpoint: str | None = None
    token: str | bool | None = None
    timeout: float = 10.0
    retries: int = 4
    backoff: float = 0.5
    workers: int = 16

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise ValueError("timeout must be > 0")
        if self.retries < 0:
            raise ValueError("retries must be >= 0")
        if self.backoff < 0:
            raise ValueError("backoff must be >= 0")
        if self.workers < 1:
            raise ValueError("workers must be >= 1")


@dataclass(frozen=True)
class PlannedFile:
    """A file a fetch would place in the target folder."""

    path: str
    size: int | None
    local_path: Path
    will_download: bool


@dataclass(frozen=True)
class FetchPlan:
    """What ``fetch_artifact`` would do (dry run)."""

    request: ArtifactRequest
    repo: str
    revision: str  # the resolved commit that would be fetched
    local_dir: Path
    files: tuple[PlannedFile, ...]
    problems: tuple[HubProblem, ...]  # advisory findings only

    @property
    def to_download(self) -> tuple[PlannedFile, ...]:
        return tuple(f for f in self.files if f.will_download)

    @property
    def download_bytes(self) -> int:
        return sum(f.size or 0 for f in self.to_download)


@dataclass(frozen=True)
class FetchResult:
    """Files of an artifact present in ``local_dir`` at a pinned commit."""

    request: ArtifactRequest
    repo: str
    revision: str
    local_dir: Path
    files: tuple[RemoteFile, ...]
    paths: tuple[Path, ...]
    total_size: int | None
    problems: tuple[HubProblem, ...]  # advisory findings only


class HubError(Exception):
    """A failure that is not a per-artifact finding (offline mode, bad settings, aborted fetch)."""

    def __init__(self, message: str, problems: Sequence[HubProblem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)
