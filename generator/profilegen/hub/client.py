"""Checking artifacts on the Hub: one model_info each, bounded retries and timeouts."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from huggingface_hub import (
    HfApi,
    ModelInfo,
    constants,
    get_hf_file_metadata,
    get_session,
    get_token,
    hf_hub_url,
)
from huggingface_hub import utils as hf_utils
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    OfflineModeIsEnabled,
)
from huggingface_hub.hf_api import RepoSibling

from ..lockfile.paths import listing_problems, sha256_problem, shown, size_problem
from .deadline import Deadline, parallel
from .logredact import hide_in_library_logs
from .problems import (
    OutOfTime,
    _by_path,
    _is_commit,
    _missing_text,
    _problem_for,
    _remote_file,
    _retry_delay,
    _retryable,
    _say,
    _size_problems,
    _status,
    _unpinned,
)
from .types import (
    ArtifactRequest,
    ArtifactResult,
    HubError,
    HubProblem,
    HubSettings,
    RemoteFile,
)

T = TypeVar("T")
_TRUTHY = {"1", "ON", "YES", "TRUE"}
# Requests time out at the deadline themselves; this only lets their answer arrive first.
_GRACE_S = 0.25


def offline() -> bool:
    """Whether HF_HUB_OFFLINE is set now or was set when huggingface_hub was imported."""
    current = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _TRUTHY
    return current or bool(constants.HF_HUB_OFFLINE)


def verify_artifacts(
    requests: Sequence[ArtifactRequest],
    settings: HubSettings,
    progress: Callable[[ArtifactResult], None] | None = None,
    deadline: Deadline | None = None,
) -> list[ArtifactResult]:
    """Check every request against the Hub; results come back in request order.

    ``progress`` is called on the calling thread as each result completes. All requests
    share one ``deadline`` (default: a fresh one of PROFILEGEN_NETWORK_TIMEOUT or 30 s);
    a request still unanswered when it passes gets a ``deadline`` problem.
    """
    _require_online("verify artifacts")
    if not requests:
        return []
    deadline = deadline or Deadline.start()
    hub = _Hub.create(settings, deadline)
    # Requests time out at the deadline themselves (the grace lets their answer arrive); one
    # that never ends is abandoned with its daemon worker.
    results = parallel(
        hub.verify, requests, settings.workers, deadline, grace=_GRACE_S, progress=progress
    )
    return [
        results.get(index) or _late(request, deadline) for index, request in enumerate(requests)
    ]


def _late(request: ArtifactRequest, deadline: Deadline) -> ArtifactResult:
    text = str(OutOfTime(deadline.seconds))
    return ArtifactResult(request, None, (), None, False, (_say(request, "deadline", text),))


class _GaveUp(Exception):
    """The last error of a call after the retry budget was spent (or it was not retryable)."""

    def __init__(self, cause: Exception, attempts: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.attempts = attempts


@dataclass(frozen=True)
class _Hub:
    """Resolved connection settings shared by the worker threads."""

    api: HfApi
    endpoint: str | None
    token: str | Literal[False]
    settings: HubSettings
    deadline: Deadline

    @classmethod
    def create(cls, settings: HubSettings, deadline: Deadline | None = None) -> _Hub:
        # HF_ENDPOINT is read by huggingface_hub at import time; read it again now so a value
        # set later (tests, CLI flags exported to the environment) is honoured.
        endpoint = settings.endpoint or os.environ.get("HF_ENDPOINT") or None
        if endpoint is not None:
            endpoint = endpoint.rstrip("/")
        token = _resolve_token(settings.token)
        # The library's user-agent telemetry fetches a registry of "agent harnesses" from the
        # endpoint with its own 3 s timeout, outside any deadline of ours (and a request a
        # catalogue check has no use for): the documented HF_HUB_DISABLE_TELEMETRY turns it off.
        constants.HF_HUB_DISABLE_TELEMETRY = True
        hide_in_library_logs()  # its download warnings name the URL, HF_ENDPOINT's user:pass too
        # Create the shared client and the library's lazily built header state on this thread,
        # so the workers do not race to initialise them.
        get_session()
        warm_headers = getattr(hf_utils, "build_hf_headers", None)
        if callable(warm_headers):
            warm_headers(token=False)
        api = HfApi(endpoint=endpoint, token=token)
        return cls(api, endpoint, token, settings, deadline or Deadline.start())

    def timeout(self) -> float:
        """The next request's timeout: the per-request one, cut to what the deadline leaves."""
        return min(self.settings.timeout, self.deadline.remaining())

    def call(self, fn: Callable[[float], T]) -> T:
        """Run ``fn(timeout)`` with bounded retries on 429, 5xx and transport errors.

        No attempt starts, and no retry waits, past the deadline.
        """
        attempt = 1
        while True:
            if self.deadline.expired:
                raise _GaveUp(OutOfTime(self.deadline.seconds), attempt - 1)
            try:
                return fn(self.timeout())
            except OfflineModeIsEnabled as exc:
                raise HubError("HF_HUB_OFFLINE is set: the Hub cannot be reached") from exc
            except Exception as exc:
                if _retryable(exc) and self.deadline.remaining() < _GRACE_S:
                    raise _GaveUp(OutOfTime(self.deadline.seconds, exc), attempt) from exc
                delay = _retry_delay(exc, attempt, self.settings.backoff)
                out_of_time = delay >= self.deadline.remaining()
                if attempt > self.settings.retries or not _retryable(exc) or out_of_time:
                    raise _GaveUp(exc, attempt) from exc
                time.sleep(delay)
                attempt += 1

    def verify(self, request: ArtifactRequest) -> ArtifactResult:
        unpinned = not _is_commit(request.revision)
        try:
            info = self.call(
                lambda timeout: self.api.model_info(
                    request.repo, revision=request.revision, files_metadata=True, timeout=timeout
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
        listed = list(info.siblings or ())
        siblings = {s.rfilename: s for s in listed}
        wanted = list(dict.fromkeys(request.files)) if request.files else sorted(siblings)
        missing = [path for path in wanted if path not in siblings]
        problems += [
            _say(request, "file-missing", _missing_text(path, request, commit)) for path in missing
        ]
        files = tuple(
            sorted((_remote_file(siblings[p]) for p in wanted if p in siblings), key=_by_path)
        )
        odd = _odd_listing(request, listed, files)
        if odd is not None:
            # An answer naming a path outside the model folder is not recorded, in part or whole.
            return ArtifactResult(request, commit, (), None, bool(info.gated), (odd,))
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
                lambda timeout: get_hf_file_metadata(
                    url, token=self.token, timeout=timeout, endpoint=self.endpoint
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


def _odd_listing(
    request: ArtifactRequest, listed: list[RepoSibling], files: tuple[RemoteFile, ...]
) -> HubProblem | None:
    """The first thing wrong with a listing: a name that leaves the folder or repeats, or a
    size or sha256 no file has (None: it is sound)."""
    bad = listing_problems(s.rfilename for s in listed)
    for f in files:
        if (odd := size_problem(f.size) or sha256_problem(f.sha256)) is not None:
            bad.append(f"file {shown(f.path)} {odd}")
    if not bad:
        return None
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    return _say(request, "bad-listing", f"the Hub's answer is refused: {bad[0]}{more}")


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
