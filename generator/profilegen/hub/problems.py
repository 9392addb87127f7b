"""Classifying Hub failures: retries, and the sentence each problem becomes."""

from __future__ import annotations

import random
import re
import time
from email.utils import parsedate_to_datetime

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

from .types import ArtifactRequest, HubProblem, RemoteFile

_COMMIT = re.compile(r"[0-9a-f]{40}")
_MAX_BACKOFF = 8.0  # seconds; same ceiling as the library's own download retries
_MAX_RETRY_AFTER = 60.0  # a longer Retry-After is a rate-limit window: fail instead of idling
_GIB_PER_GB = 2**30 / 1e9
_TRANSPORT_MODULES = {"httpx", "httpx2", "httpcore", "httpcore2", "h11"}
# Transport-layer errors that a retry cannot fix (bad endpoint, redirect loop).
_PERMANENT_TRANSPORT = {
    "UnsupportedProtocol",
    "InvalidURL",
    "TooManyRedirects",
    "LocalProtocolError",
}


class OutOfTime(Exception):
    """The operation's deadline passed before a request could (again) be made."""

    def __init__(self, seconds: float, last: BaseException | None = None) -> None:
        tried = f" (last: {type(last).__name__}: {_first_line(last)})" if last else ""
        hint = "; raise it with --timeout or PROFILEGEN_NETWORK_TIMEOUT"
        super().__init__(f"no answer from the Hub within the {seconds:g} s deadline{tried}{hint}")


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
    if isinstance(exc, (ConnectionError, TimeoutError, OutOfTime)):
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
    if isinstance(exc, OutOfTime):
        return _say(request, "deadline", str(exc))
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
