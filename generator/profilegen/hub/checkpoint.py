"""A checkpoint's metadata, read at a pinned commit: from the Hub, or from a local folder.

`model add` needs a few small files (config.json, generation_config.json) and the header of
a GGUF file, never the weights: small files are read whole up to a cap, GGUF headers by
ranged reads. Every request draws on one deadline.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from huggingface_hub import get_session, hf_hub_url, hf_raise_for_status, snapshot_download
from huggingface_hub.errors import LocalEntryNotFoundError
from huggingface_hub.utils import _headers

from ..errors import EXIT_USAGE, NetworkError, ProfilegenError, UsageError, printable
from ..registry.files import NotRegular, file_kind, read_regular
from .client import _GaveUp, _Hub, _require_online
from .deadline import Deadline, bounded
from .problems import _problem_for, _remote_file
from .types import NETWORK_CODES, ArtifactRequest, HubError, HubSettings

# config.json of the largest models is a few hundred kB; anything past this is not a config.
JSON_LIMIT = 4 * 2**20
COMMIT = re.compile(r"^[0-9a-f]{40}$")
# Bytes of weights no checkpoint comes near (a pebibyte): a header or index saying more lies.
MAX_WEIGHTS = 2**50


class CheckpointError(ProfilegenError):
    """A checkpoint file is missing, too large or not what its name says: bad input, exit 2.
    The message is one line: a file name or a header's text in it is shown with its hidden
    characters escaped (a newline in a file name could forge a line of a CI log)."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


@dataclass(frozen=True)
class CheckpointFile:
    path: str
    size: int | None
    sha256: str | None  # LFS files only (the Hub knows no sha256 of plain git files)


class Checkpoint(Protocol):
    """What `model add` reads facts from."""

    repo: str
    commit: str
    files: dict[str, CheckpointFile]
    gated: bool
    # True when files and sizes are the Hub's own listing (a lock entry can be resolved).
    from_hub: bool

    @property
    def where(self) -> str:
        """Where the files were read from, for messages: `repo@commit` or a folder."""
        ...

    def read(self, path: str, limit: int = JSON_LIMIT) -> bytes | None: ...

    def read_range(self, path: str, start: int, end: int) -> bytes: ...


def read_json(checkpoint: Checkpoint, path: str, limit: int = JSON_LIMIT) -> dict[str, Any] | None:
    """A JSON object file of the checkpoint; None when the checkpoint has no such file."""
    raw = checkpoint.read(path, limit)
    if raw is None:
        return None
    return json_object(raw, f"{checkpoint.where}: {path}")


def json_object(raw: bytes, where: str) -> dict[str, Any]:
    """A JSON object from untrusted bytes: refused past the nesting and digit caps below."""
    try:
        text = raw.decode("utf-8")
        _refuse_extremes(text, where)
        data = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{where} is not valid JSON ({exc})") from exc
    except _NotFinite as exc:
        raise CheckpointError(f"{where} holds the number {exc}, which is not finite") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{where} is not a JSON object")
    return data


# A config nests a few levels and its longest integers are token ids and seeds (at most 20
# digits); past these a file is not a config, and Python's parser would fail on it instead.
MAX_JSON_DEPTH = 64
MAX_JSON_DIGITS = 40
_TOKENS = re.compile(
    rf'"(?:[^"\\]|\\.)*"|[\[\]{{}}]|(?<![.0-9])-?[0-9]{{{MAX_JSON_DIGITS + 1},}}(?![.0-9eE])'
)


class _NotFinite(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


def _no_constant(text: str) -> float:
    raise _NotFinite(text)


def _refuse_extremes(text: str, where: str) -> None:
    """Nesting past MAX_JSON_DEPTH and integers longer than MAX_JSON_DIGITS, at their line."""
    depth = 0
    for token in _TOKENS.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line = text.count("\n", 0, token.start()) + 1
                raise CheckpointError(
                    f"{where}:{line}: nests deeper than {MAX_JSON_DEPTH} levels; no config does"
                )
        elif mark in "]}":
            depth -= 1
        elif not mark.startswith('"'):
            line = text.count("\n", 0, token.start()) + 1
            digits = len(mark.lstrip("-"))
            raise CheckpointError(
                f"{where}:{line}: an integer {digits:,} digits long; no config holds one longer "
                f"than {MAX_JSON_DIGITS}"
            )


# -- the Hub -------------------------------------------------------------------------------------


@dataclass
class RemoteCheckpoint:
    repo: str
    commit: str
    files: dict[str, CheckpointFile]
    gated: bool
    hub: _Hub
    from_hub: bool = True
    bytes_read: int = 0  # what the ranged and whole reads transferred, for the report

    @property
    def where(self) -> str:
        return f"{self.repo}@{self.commit[:12]}"

    def _get(self, path: str, headers: dict[str, str], limit: int) -> bytes:
        url = hf_hub_url(self.repo, path, revision=self.commit, endpoint=self.hub.endpoint)
        sent = _headers.build_hf_headers(token=self.hub.token, headers=headers)

        def once(timeout: float) -> bytes:
            with get_session().stream(
                "GET", url, headers=sent, timeout=timeout, follow_redirects=True
            ) as response:
                hf_raise_for_status(response)
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise CheckpointError(
                            f"{self.where}: {path} is larger than {limit:,} bytes; "
                            "it is not a checkpoint metadata file"
                        )
                return bytes(body)

        data: bytes = _call(self.hub, self.repo, self.commit, once)
        self.bytes_read += len(data)
        return data

    def read(self, path: str, limit: int = JSON_LIMIT) -> bytes | None:
        if path not in self.files:
            return None
        return self._get(path, {}, limit)

    def read_range(self, path: str, start: int, end: int) -> bytes:
        """Bytes start..end-1 (fewer at the end of the file); a server that ignores the range
        and sends the whole file is cut off at the cap instead of being read to the end."""
        data = self._get(path, {"Range": f"bytes={start}-{end - 1}"}, end - start)
        return data[: end - start]


def _call(hub: _Hub, repo: str, revision: str | None, fn: Callable[[float], Any]) -> Any:
    try:
        # A body that trickles in never trips a read timeout: the deadline cuts the call.
        return bounded(lambda: hub.call(fn), hub.deadline, f"reading {repo} on the Hub")
    except _GaveUp as failure:
        if isinstance(failure.cause, ProfilegenError):
            raise failure.cause from None
        problem = _problem_for(
            ArtifactRequest(repo, repo, revision, (), None), failure.cause, failure.attempts
        )
        if problem.code in NETWORK_CODES:
            raise NetworkError(problem.message) from failure.cause
        raise UsageError(problem.message) from failure.cause
    except HubError as exc:
        raise NetworkError(str(exc)) from exc


def open_remote(
    repo: str, revision: str | None, deadline: Deadline, settings: HubSettings | None = None
) -> RemoteCheckpoint:
    """The repo's listing at `revision` (default: main), resolved to its commit."""
    try:
        _require_online("read a checkpoint")
    except HubError as exc:
        raise NetworkError(str(exc)) from exc  # `model add` says how to work without it
    hub = _Hub.create(settings or HubSettings(), deadline)
    info = _call(
        hub,
        repo,
        revision,
        lambda timeout: hub.api.model_info(
            repo, revision=revision, files_metadata=True, timeout=timeout
        ),
    )
    if not isinstance(info.sha, str) or not COMMIT.fullmatch(info.sha):
        raise NetworkError(f"{repo}: the Hub answered without a commit sha")
    files = {}
    for sibling in info.siblings or ():
        remote = _remote_file(sibling)
        files[remote.path] = CheckpointFile(remote.path, remote.size, remote.sha256)
    return RemoteCheckpoint(repo, info.sha, files, bool(info.gated), hub)


# -- a local folder ------------------------------------------------------------------------------


@dataclass
class LocalCheckpoint:
    """A checkpoint folder: a Hub cache snapshot (`…/snapshots/<commit>/`) or a download made
    with `--local-dir` (its `.cache/huggingface/download/*.metadata` name the commit)."""

    folder: Path
    repo: str
    commit: str
    files: dict[str, CheckpointFile] = field(default_factory=dict)
    gated: bool = False
    from_hub: bool = False

    @property
    def where(self) -> str:
        return str(self.folder)

    def _read(self, path: str, limit: int, offset: int = 0) -> tuple[bytes, int]:
        """Through the one bounded, non-blocking reader: a FIFO or device is refused."""
        target = self.folder / path
        try:
            return read_regular(target, limit, offset)
        except OSError as exc:
            raise CheckpointError(f"{target}: cannot be read ({exc.strerror or exc})") from None
        except NotRegular as exc:
            raise CheckpointError(f"{target}: is {file_kind(exc.mode)}, not a file") from None

    def read(self, path: str, limit: int = JSON_LIMIT) -> bytes | None:
        if path not in self.files:
            return None
        data, size = self._read(path, limit)
        if len(data) > limit:
            raise CheckpointError(
                f"{self.folder / path}: {size:,} bytes, larger than {limit:,}; it is not a "
                "checkpoint metadata file"
            )
        return data

    def read_range(self, path: str, start: int, end: int) -> bytes:
        return self._read(path, end - start, start)[0][: end - start]


def _local_files(folder: Path) -> dict[str, CheckpointFile]:
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        out[rel.as_posix()] = CheckpointFile(rel.as_posix(), path.stat().st_size, None)
    return out


def _recorded_commit(folder: Path) -> str | None:
    """The commit a folder was downloaded at, where the Hub client left a note of it."""
    resolved = folder.resolve()
    if resolved.parent.name == "snapshots" and COMMIT.fullmatch(resolved.name):
        return resolved.name
    commits = set()
    for meta in (folder / ".cache" / "huggingface" / "download").rglob("*.metadata"):
        try:
            first = read_regular(meta, 4096)[0].decode("utf-8").splitlines()[:1]
        except (OSError, NotRegular, UnicodeDecodeError):
            continue
        if first and COMMIT.fullmatch(first[0].strip()):
            commits.add(first[0].strip())
    return commits.pop() if len(commits) == 1 else None


def open_local(folder: Path, repo: str, revision: str | None) -> LocalCheckpoint:
    if not folder.is_dir():
        raise UsageError(f"--from-dir {folder}: no such folder")
    recorded = _recorded_commit(folder)
    if revision is not None and not COMMIT.fullmatch(revision):
        raise UsageError(
            f"--revision {revision!r}: a local checkpoint is pinned by its 40-hex commit, "
            "not a branch or tag"
        )
    if revision is not None and recorded is not None and revision != recorded:
        raise UsageError(f"--revision {revision} but {folder} was downloaded at {recorded}")
    commit = revision or recorded
    if commit is None:
        raise UsageError(
            f"{folder}: cannot tell which commit these files are; pass --revision with the "
            "40-hex commit they were downloaded at (the Hub page's 'Files' tab shows it)"
        )
    return LocalCheckpoint(folder, repo, commit, _local_files(folder))


def hf_cache() -> Path:
    """The Hugging Face cache as huggingface_hub finds it now (HF_HUB_CACHE, else HF_HOME/hub)."""
    explicit = os.environ.get("HF_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    home = (
        os.environ.get("HF_HOME")
        or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface"
    )
    return Path(home).expanduser() / "hub"


def open_cached(repo: str, revision: str | None) -> LocalCheckpoint:
    """The copy of `repo` at `revision` (default: main) that the Hugging Face cache holds,
    read without the network."""
    cache = hf_cache()
    try:
        folder = snapshot_download(repo, revision=revision, cache_dir=cache, local_files_only=True)
    except (LocalEntryNotFoundError, OSError):
        raise UsageError(
            f"{repo}: the Hugging Face cache ({cache}) has no copy at {revision or 'main'}; "
            "offline, `model add` reads only that cache (or --from-dir DIR)"
        ) from None
    return open_local(
        Path(folder), repo, revision if revision and COMMIT.fullmatch(revision) else None
    )
