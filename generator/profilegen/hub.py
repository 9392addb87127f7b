"""Verify and fetch model artifacts on the Hugging Face Hub."""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from huggingface_hub import (
    HfApi,
    ModelInfo,
    constants,
    get_hf_file_metadata,
    get_session,
    get_token,
    hf_hub_url,
    snapshot_download,
)
from huggingface_hub import utils as hf_utils
from huggingface_hub.errors import (
    DisabledRepoError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoSibling
from huggingface_hub.utils.tqdm import tqdm as hf_tqdm

__all__ = [
    "ADVISORY_CODES",
    "ArtifactRequest",
    "ArtifactResult",
    "FetchPlan",
    "FetchResult",
    "HubError",
    "HubProblem",
    "HubSettings",
    "PlannedFile",
    "RemoteFile",
    "fetch_artifact",
    "offline",
    "verify_artifacts",
]

T = TypeVar("T")

# Findings that describe the registry entry but do not stop a download.
ADVISORY_CODES = frozenset({"revision-unpinned", "size-drift"})

_COMMIT = re.compile(r"[0-9a-f]{40}")
_MAX_BACKOFF = 8.0  # seconds; same ceiling as the library's own download retries
_MAX_RETRY_AFTER = 60.0  # a longer Retry-After is a rate-limit window: fail instead of idling
_GIB_PER_GB = 2**30 / 1e9
_TRUTHY = {"1", "ON", "YES", "TRUE"}
_TRANSPORT_MODULES = {"httpx", "httpx2", "httpcore", "httpcore2", "h11"}
# Transport-layer errors that a retry cannot fix (bad endpoint, redirect loop).
_PERMANENT_TRANSPORT = {
    "UnsupportedProtocol",
    "InvalidURL",
    "TooManyRedirects",
    "LocalProtocolError",
}


# -- public data ---------------------------------------------------------------------------------


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


# -- public functions ----------------------------------------------------------------------------


def offline() -> bool:
    """Whether HF_HUB_OFFLINE is set now or was set when huggingface_hub was imported."""
    current = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _TRUTHY
    return current or bool(constants.HF_HUB_OFFLINE)


def verify_artifacts(
    requests: Sequence[ArtifactRequest],
    settings: HubSettings,
    progress: Callable[[ArtifactResult], None] | None = None,
) -> list[ArtifactResult]:
    """Check every request against the Hub; results come back in request order.

    ``progress`` is called on the calling thread as each result completes.
    """
    _require_online("verify artifacts")
    if not requests:
        return []
    hub = _Hub.create(settings)
    results: dict[int, ArtifactResult] = {}
    pool = ThreadPoolExecutor(
        max_workers=min(settings.workers, len(requests)), thread_name_prefix="profilegen-hub"
    )
    try:
        futures: dict[Future[ArtifactResult], int] = {
            pool.submit(hub.verify, request): index for index, request in enumerate(requests)
        }
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if progress is not None:
                progress(result)
    finally:
        # On error or Ctrl-C, drop queued checks; running ones end within their timeouts.
        pool.shutdown(wait=True, cancel_futures=True)
    return [results[index] for index in range(len(requests))]


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


# -- implementation ------------------------------------------------------------------------------


class _GaveUp(Exception):
    """The last error of a call after the retry budget was spent (or it was not retryable)."""

    def __init__(self, cause: Exception, attempts: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.attempts = attempts


class _QuietTqdm(hf_tqdm):
    """Progress bar that never draws: this module must not write to the terminal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class _Hub:
    """Resolved connection settings shared by the worker threads."""

    api: HfApi
    endpoint: str | None
    token: str | Literal[False]
    settings: HubSettings

    @classmethod
    def create(cls, settings: HubSettings) -> _Hub:
        # HF_ENDPOINT is read by huggingface_hub at import time; read it again now so a value
        # set later (tests, CLI flags exported to the environment) is honoured.
        endpoint = settings.endpoint or os.environ.get("HF_ENDPOINT") or None
        if endpoint is not None:
            endpoint = endpoint.rstrip("/")
        token = _resolve_token(settings.token)
        # Create the shared client and the library's lazily built header state on this thread,
        # so the workers do not race to initialise them.
        get_session()
        warm_headers = getattr(hf_utils, "build_hf_headers", None)
        if callable(warm_headers):
            warm_headers(token=False)
        return cls(HfApi(endpoint=endpoint, token=token), endpoint, token, settings)

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` with bounded retries on 429, 5xx and transport errors."""
        attempt = 1
        while True:
            try:
                return fn()
            except OfflineModeIsEnabled as exc:
                raise HubError("HF_HUB_OFFLINE is set: the Hub cannot be reached") from exc
            except Exception as exc:
                if attempt > self.settings.retries or not _retryable(exc):
                    raise _GaveUp(exc, attempt) from exc
                time.sleep(_retry_delay(exc, attempt, self.settings.backoff))
                attempt += 1

    def verify(self, request: ArtifactRequest) -> ArtifactResult:
        unpinned = not _is_commit(request.revision)
        try:
            info = self.call(
                lambda: self.api.model_info(
                    request.repo,
                    revision=request.revision,
                    files_metadata=True,
                    timeout=self.settings.timeout,
                )
            )
        except _GaveUp as failure:
            problems = [_problem_for(request, failure.cause, failure.attempts)]
            if unpinned:
                problems.insert(0, _unpinned(request, None))
            gated = isinstance(failure.cause, GatedRepoError)
            return ArtifactResult(request, None, (), None, gated, tuple(problems))
        return self._check_listing(request, info, unpinned)

    def _check_listing(
        self, request: ArtifactRequest, info: ModelInfo, unpinned: bool
    ) -> ArtifactResult:
        commit = info.sha
        problems: list[HubProblem] = [_unpinned(request, commit)] if unpinned else []
        siblings = {s.rfilename: s for s in info.siblings or ()}
        wanted = list(dict.fromkeys(request.files)) if request.files else sorted(siblings)
        missing = [path for path in wanted if path not in siblings]
        problems += [
            _say(request, "file-missing", _missing_text(path, request, commit)) for path in missing
        ]
        files = tuple(
            sorted((_remote_file(siblings[p]) for p in wanted if p in siblings), key=_by_path)
        )
        sizes = [f.size for f in files]
        total = sum(s for s in sizes if s is not None) if None not in sizes else None
        if not missing:
            problems += _size_problems(request, total)
        gated = bool(info.gated)
        if gated and files and commit is not None:
            problems += self._gate_problems(request, commit, files[0].path)
        if commit is None:
            problems.append(_say(request, "unexpected", "the Hub answered without a commit sha"))
        return ArtifactResult(request, commit, files, total, gated, tuple(problems))

    def _gate_problems(self, request: ArtifactRequest, commit: str, path: str) -> list[HubProblem]:
        """Prove the token can read a gated repo with one HEAD on a declared file."""
        url = hf_hub_url(request.repo, path, revision=commit, endpoint=self.endpoint)
        try:
            self.call(
                lambda: get_hf_file_metadata(
                    url, token=self.token, timeout=self.settings.timeout, endpoint=self.endpoint
                )
            )
        except _GaveUp as failure:
            cause = failure.cause
            if isinstance(cause, GatedRepoError) or (
                isinstance(cause, HfHubHTTPError) and _status(cause) in (401, 403)
            ):
                who = "no token was sent" if self.token is False else "the token was refused"
                text = (
                    f"repo is gated and {who} (HTTP {_status(cause)} reading {path}); "
                    "request access on the Hub and provide a token that has it"
                )
                return [_say(request, "gated-no-access", text)]
            return [_problem_for(request, cause, failure.attempts)]
        return []


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


def _require_online(action: str) -> None:
    if offline():
        raise HubError(f"HF_HUB_OFFLINE is set: cannot {action} against the Hub")


def _resolve_token(token: str | bool | None) -> str | Literal[False]:
    """Resolve the token once, so every worker sends the same one (or none)."""
    if isinstance(token, str):
        return token
    if token is False:
        return False
    if token is None and constants.HF_HUB_DISABLE_IMPLICIT_TOKEN:
        return False
    try:
        # HF_TOKEN, then the token file (OIDC exchange in CI when configured).
        resolved = get_token()
    except Exception as exc:
        raise HubError(f"cannot obtain a Hugging Face token: {exc}") from exc
    if resolved is None and token is True:
        raise HubError("a Hugging Face token is required but none is configured (set HF_TOKEN)")
    return resolved or False


def _is_commit(revision: str | None) -> bool:
    return revision is not None and _COMMIT.fullmatch(revision) is not None


def _status(exc: HfHubHTTPError) -> int | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _is_transport_error(exc: Exception) -> bool:
    """True for network-level failures; the library re-raises httpx2's exceptions unwrapped."""
    if isinstance(exc, (HfHubHTTPError, OfflineModeIsEnabled)):
        return False
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    return any(
        klass.__module__.partition(".")[0] in _TRANSPORT_MODULES for klass in type(exc).__mro__
    )


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, HfHubHTTPError):
        # Typed subclasses (repo/revision not found, gated, ...) are definitive answers.
        if type(exc) is not HfHubHTTPError:
            return False
        status = _status(exc)
        return status is not None and (status == 429 or status >= 500)
    return _is_transport_error(exc) and type(exc).__name__ not in _PERMANENT_TRANSPORT


def _retry_delay(exc: Exception, attempt: int, backoff: float) -> float:
    """Seconds to wait before attempt ``attempt + 1``: Retry-After if given, else backoff."""
    if isinstance(exc, HfHubHTTPError):
        response = getattr(exc, "response", None)
        header = response.headers.get("Retry-After") if response is not None else None
        retry_after = _parse_retry_after(header)
        if retry_after is not None:
            return min(retry_after, _MAX_RETRY_AFTER)
    delay = min(backoff * 2.0 ** (attempt - 1), _MAX_BACKOFF)
    # Jitter spreads out workers that were throttled at the same moment.
    return delay * (1.0 + 0.25 * random.random())


def _parse_retry_after(value: str | None) -> float | None:
    """Retry-After as delta-seconds (fractions accepted) or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _say(request: ArtifactRequest, code: str, text: str) -> HubProblem:
    return HubProblem(code, f"{request.key} ({request.repo}): {text}")


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _rev(request: ArtifactRequest) -> str:
    return request.revision if request.revision is not None else "main"


def _unpinned(request: ArtifactRequest, commit: str | None) -> HubProblem:
    pin = f"; pin it to {commit}" if commit else ""
    text = f"revision {_rev(request)!r} is a branch or tag, not a 40-hex commit{pin}"
    return _say(request, "revision-unpinned", text)


def _missing_text(path: str, request: ArtifactRequest, commit: str | None) -> str:
    at = commit[:12] if commit else _rev(request)
    return f"declared file {path!r} does not exist at {at}"


def _problem_for(request: ArtifactRequest, exc: Exception, attempts: int) -> HubProblem:
    """Map a failed call to a finding; GatedRepoError subclasses RepositoryNotFoundError."""
    tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(exc, GatedRepoError):
        return _say(request, "gated-no-access", "repo is gated and the token cannot read it")
    if isinstance(exc, RepositoryNotFoundError):
        text = "repository not found (or private and the token cannot read it)"
        return _say(request, "repo-not-found", text)
    if isinstance(exc, RevisionNotFoundError):
        return _say(request, "revision-not-found", f"revision {_rev(request)!r} not found")
    if isinstance(exc, DisabledRepoError):
        return _say(request, "repo-disabled", "repository is disabled on the Hub")
    if isinstance(exc, HfHubHTTPError):
        status = _status(exc)
        return _say(request, "http-error", f"HTTP {status} from the Hub {tries}")
    if _is_transport_error(exc):
        text = f"cannot reach the Hub ({type(exc).__name__}: {_first_line(exc)}) {tries}"
        return _say(request, "transport", text)
    if isinstance(exc, HFValidationError):
        return _say(request, "invalid-request", _first_line(exc))
    return _say(request, "unexpected", f"{type(exc).__name__}: {_first_line(exc)}")


def _size_problems(request: ArtifactRequest, total: int | None) -> list[HubProblem]:
    declared = request.declared_size_bytes
    if declared is None:
        return []
    if total is None:
        return [_say(request, "size-unknown", "the Hub did not report every file size")]
    tolerance = request.size_tolerance
    if abs(total - declared) <= tolerance * declared:
        return []
    change = (total - declared) / declared * 100 if declared else float("inf")
    text = (
        f"declared {declared:,} bytes but the files total {total:,} bytes "
        f"({change:+.1f}%, tolerance {tolerance:.0%})"
    )
    for ratio, hint in (
        (_GIB_PER_GB, "the declared figure looks like GiB written as GB"),
        (1 / _GIB_PER_GB, "the declared figure looks like GB written as GiB"),
    ):
        expected = declared * ratio
        if abs(total - expected) <= tolerance * expected:
            text += f"; {hint}"
    return [_say(request, "size-drift", text)]


def _remote_file(sibling: RepoSibling) -> RemoteFile:
    lfs = sibling.lfs
    size = sibling.size if sibling.size is not None else (lfs.size if lfs is not None else None)
    return RemoteFile(sibling.rfilename, size, lfs.sha256 if lfs is not None else None)


def _by_path(remote: RemoteFile) -> str:
    return remote.path


def _fnmatch_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)
