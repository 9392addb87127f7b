"""Downloading exactly the declared files of a verified artifact."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from huggingface_hub import (
    snapshot_download,
)
from huggingface_hub.errors import (
    OfflineModeIsEnabled,
)
from huggingface_hub.utils.tqdm import tqdm as hf_tqdm

from .client import _Hub, _require_online
from .problems import _first_line
from .types import (
    ADVISORY_CODES,
    ArtifactRequest,
    FetchPlan,
    FetchResult,
    HubError,
    HubProblem,
    HubSettings,
    PlannedFile,
    RemoteFile,
)


@overload
def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: Literal[True],
    progress: bool = False,
) -> FetchPlan: ...


@overload
def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: Literal[False] = False,
    progress: bool = False,
) -> FetchResult: ...


@overload
def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: bool = False,
    progress: bool = False,
) -> FetchPlan | FetchResult: ...


def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: bool = False,
    progress: bool = False,
) -> FetchPlan | FetchResult:
    """Download exactly the declared files of ``request`` into ``local_dir`` at a pinned commit.

    The artifact is verified first: snapshot_download silently skips allow-listed files that
    do not exist, so a missing file, unknown repo or unreadable gated repo raises HubError
    before anything is downloaded. ``progress`` enables the library's progress bars.
    """
    _require_online("fetch artifacts")
    hub = _Hub.create(settings)
    checked = hub.verify(request)
    blocking = [p for p in checked.problems if p.code not in ADVISORY_CODES]
    if blocking or checked.commit is None:
        details = "; ".join(p.message for p in blocking) or "the Hub returned no commit"
        raise HubError(f"cannot fetch {request.key}: {details}", checked.problems)
    advisory = tuple(p for p in checked.problems if p.code in ADVISORY_CODES)
    download = _Download(hub, request, checked.commit, checked.files, local_dir, progress)
    if dry_run:
        return download.plan(advisory)
    return download.run(advisory, checked.total_size)


class _QuietTqdm(hf_tqdm):
    """Progress bar that never draws: this module must not write to the terminal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class _Download:
    """One snapshot_download of the declared files at a verified commit."""

    hub: _Hub
    request: ArtifactRequest
    commit: str
    files: tuple[RemoteFile, ...]
    local_dir: Path
    progress: bool

    def _snapshot(self, *, dry_run: bool) -> Any:
        # allow_patterns are fnmatch globs: escape the declared names so "[1]" or "*" in a
        # file name matches only itself. An empty allowlist means the whole repo.
        patterns = [_fnmatch_escape(f.path) for f in self.files] if self.request.files else None
        try:
            return snapshot_download(
                self.request.repo,
                revision=self.commit,
                local_dir=self.local_dir,
                allow_patterns=patterns,
                endpoint=self.hub.endpoint,
                token=self.hub.token,
                etag_timeout=self.hub.settings.timeout,
                max_workers=min(8, self.hub.settings.workers),
                tqdm_class=None if self.progress else _QuietTqdm,
                dry_run=dry_run,
            )
        except OfflineModeIsEnabled as exc:
            raise HubError("HF_HUB_OFFLINE is set: the Hub cannot be reached") from exc
        except Exception as exc:
            what = "plan" if dry_run else "download"
            raise HubError(
                f"cannot {what} {self.request.key} ({self.request.repo}@{self.commit[:12]}): "
                f"{type(exc).__name__}: {_first_line(exc)}"
            ) from exc

    def plan(self, advisory: tuple[HubProblem, ...]) -> FetchPlan:
        infos: dict[str, Any] = {}
        # The library's dry run creates local_dir and lock files in it; a folder that does not
        # exist holds nothing, so every file would download and no call is needed.
        if self.local_dir.exists():
            infos = {info.filename: info for info in self._snapshot(dry_run=True)}
        planned = tuple(
            PlannedFile(
                path=f.path,
                size=f.size,
                local_path=self.local_dir / f.path,
                will_download=bool(getattr(infos.get(f.path), "will_download", True)),
            )
            for f in self.files
        )
        return FetchPlan(
            self.request, self.request.repo, self.commit, self.local_dir, planned, advisory
        )

    def run(self, advisory: tuple[HubProblem, ...], total: int | None) -> FetchResult:
        self._snapshot(dry_run=False)
        # snapshot_download returns an existing local_dir as-is when the Hub is unreachable
        # (it only logs a warning), so confirm every file really is there with the right size.
        paths = tuple(self.local_dir / f.path for f in self.files)
        incomplete = [
            f.path
            for f, path in zip(self.files, paths, strict=True)
            if not path.is_file() or (f.size is not None and path.stat().st_size != f.size)
        ]
        if incomplete:
            raise HubError(
                f"download of {self.request.key} ({self.request.repo}) is incomplete: "
                + ", ".join(incomplete)
            )
        return FetchResult(
            self.request,
            self.request.repo,
            self.commit,
            self.local_dir,
            self.files,
            paths,
            total,
            advisory,
        )


def _fnmatch_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)
