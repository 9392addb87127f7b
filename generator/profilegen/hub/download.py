"""Downloading exactly the declared files of a verified artifact."""

from __future__ import annotations

import contextlib
import re
import threading
import time
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
from .deadline import Deadline, bounded
from .problems import _first_line, _is_transport_error
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

_POLL_S = 0.25  # how often a running download's progress is looked at


@overload
def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: Literal[True],
    progress: bool = False,
    deadline: Deadline | None = None,
) -> FetchPlan: ...


@overload
def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: Literal[False] = False,
    progress: bool = False,
    deadline: Deadline | None = None,
) -> FetchResult: ...


@overload
def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: bool = False,
    progress: bool = False,
    deadline: Deadline | None = None,
) -> FetchPlan | FetchResult: ...


def fetch_artifact(
    request: ArtifactRequest,
    local_dir: Path,
    settings: HubSettings,
    *,
    dry_run: bool = False,
    progress: bool = False,
    deadline: Deadline | None = None,
) -> FetchPlan | FetchResult:
    """Download exactly the declared files of ``request`` into ``local_dir`` at a pinned commit.

    The artifact is verified first: snapshot_download silently skips allow-listed files that
    do not exist, so a missing file, unknown repo or unreadable gated repo raises HubError
    before anything is downloaded. ``progress`` enables the library's progress bars.

    Talking to the Hub draws on ``deadline``; the transfer itself may take as long as the
    files need, but fails once no byte has arrived for the deadline's length (a stall).
    """
    _require_online("fetch artifacts")
    hub = _Hub.create(settings, deadline)
    checked = bounded(
        lambda: hub.verify(request), hub.deadline, f"checking {request.key} on the Hub"
    )
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
                etag_timeout=max(0.1, self.hub.timeout()),
                max_workers=min(8, self.hub.settings.workers),
                tqdm_class=None if self.progress else _QuietTqdm,
                dry_run=dry_run,
            )
        except OfflineModeIsEnabled as exc:
            raise HubError("HF_HUB_OFFLINE is set: the Hub cannot be reached") from exc
        except Exception as exc:
            what = "plan" if dry_run else "download"
            text = (
                f"cannot {what} {self.request.key} ({self.request.repo}@{self.commit[:12]}): "
                f"{type(exc).__name__}: {_first_line(exc)}"
            )
            code = "transport" if _is_transport_error(exc) else "download"
            raise HubError(text, [HubProblem(code, text)]) from exc

    def _watched(self) -> None:
        """The download in a daemon thread, abandoned once no byte lands for a whole deadline."""
        failure: list[BaseException] = []

        def run() -> None:
            try:
                self._snapshot(dry_run=False)
            except BaseException as exc:  # handed to the calling thread
                failure.append(exc)

        worker = threading.Thread(target=run, name="profilegen-fetch", daemon=True)
        worker.start()
        stall = self.hub.deadline.seconds
        landed, since = -1, time.monotonic()
        while worker.is_alive():
            worker.join(_POLL_S)
            size = _bytes_under(self.local_dir)
            if size != landed:
                landed, since = size, time.monotonic()
            elif time.monotonic() - since > stall:
                text = (
                    f"cannot download {self.request.key} ({self.request.repo}): no data from "
                    f"the Hub for {stall:g} s (raise it with --timeout or PROFILEGEN_NETWORK_TIMEOUT)"
                )
                raise HubError(text, [HubProblem("deadline", text)])
        if failure:
            raise failure[0]

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
        self._watched()
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


def _bytes_under(folder: Path) -> int:
    """Bytes in every file below `folder`, partial downloads included: the progress signal."""
    total = 0
    for path in folder.rglob("*") if folder.is_dir() else ():
        with contextlib.suppress(OSError):
            total += path.lstat().st_size
    return total


def _fnmatch_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)
