"""Patch files: vendored in the registry or fetched by pinned URL into a content-addressed cache."""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import write_file
from ..errors import EXIT_FINDINGS, EXIT_UNREACHABLE, NetworkError, ProfilegenError
from ..model import Patch
from ..model.patch import PatchFile
from ..registry import Registry
from ..registry.files import MAX_VENDORED_FILE, NotRegular, Refused, read_inside, read_regular
from ..resources import cache_root
from .deadline import Deadline, parallel

DOWNLOAD_TIMEOUT_S = 15.0  # per request, and never past the operation's deadline
DOWNLOAD_ATTEMPTS = 3
DOWNLOAD_WORKERS = 8
_CHUNK = 64 * 1024


def offline_mode() -> bool:
    """No network for patch files when PROFILEGEN_OFFLINE or HF_HUB_OFFLINE is set."""
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in ("PROFILEGEN_OFFLINE", "HF_HUB_OFFLINE")
    )


def blob_path(sha256: str) -> Path:
    return cache_root() / "blobs" / "sha256" / sha256


def sha256_hex(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@dataclass(frozen=True)
class Missing:
    patch: str
    path: str
    sha256: str
    url: str | None
    reason: str
    network: bool = False  # the host could not be reached (in time)


class MissingPatchFiles(ProfilegenError):
    """Some patch files are neither vendored, cached nor downloadable right now."""

    def __init__(self, missing: list[Missing]) -> None:
        self.missing = missing
        # An unreachable host is exit 2 (try again later); a wrong or absent file is 1.
        self.exit_code = EXIT_UNREACHABLE if any(m.network for m in missing) else EXIT_FINDINGS
        lines = [f"{len(missing)} patch file(s) are not available:"]
        for m in missing:
            lines.append(f"  {m.patch}/{m.path} (sha256 {m.sha256[:12]}…): {m.reason}")
        urls = [m.url for m in missing if m.url]
        if urls:
            lines.append("Download them on a connected machine, then add them to the cache with:")
            lines.append(
                "  profilegen cache add FILE…   (only files whose sha256 is pinned are accepted)"
            )
            lines.extend(f"  {u}" for u in urls)
        super().__init__("\n".join(lines))


def _verified(content: bytes | None, file: PatchFile) -> bytes | None:
    if content is None or len(content) != file.size or sha256_hex(content) != file.sha256:
        return None
    return content


def read_cached(file: PatchFile) -> bytes | None:
    """The cached bytes of `file` when they match its pin: only a regular file is read (a
    FIFO is refused, not waited on), and no more than the pinned size."""
    try:
        content, _size = read_regular(blob_path(file.sha256), file.size)
    except (OSError, NotRegular):
        return None
    return _verified(content, file)


def _vendored(registry: Registry, patch: Patch, file: PatchFile) -> bytes | Missing:
    path = registry.root / patch.vendored_dir / file.path
    try:
        content = _verified(read_inside(registry.root, path, MAX_VENDORED_FILE), file)
    except Refused as exc:
        return Missing(patch.id, file.path, file.sha256, None, f"vendored file {exc}")
    if content is None:
        reason = "vendored file does not match its pinned sha256/size"
        return Missing(patch.id, file.path, file.sha256, None, reason)
    return content


class _Unreachable(Exception):
    """The host did not answer (in time): a network failure, not a wrong file."""


def _read(response: Any, limit: int, deadline: Deadline) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(_CHUNK):
        size += len(chunk)
        if size > limit:
            raise ValueError(f"the server sent more than the pinned {limit:,} bytes")
        if deadline.expired:
            raise _Unreachable(f"still downloading after the {deadline.seconds:g} s deadline")
        chunks.append(chunk)
    return b"".join(chunks)


def _download(url: str, limit: int, deadline: Deadline) -> bytes:
    """The body at `url` (at most `limit` bytes), retried while the deadline allows."""
    # urllib pulls in ssl (~0.1 s): only a download pays for it.
    import urllib.error
    import urllib.request

    last: Exception = _Unreachable(f"no answer within the {deadline.seconds:g} s deadline")
    for attempt in range(DOWNLOAD_ATTEMPTS):
        if deadline.expired:
            break
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "profilegen"})
            timeout = deadline.timeout(DOWNLOAD_TIMEOUT_S)
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return _read(response, limit, deadline)
        except urllib.error.HTTPError as exc:
            if exc.code < 500 and exc.code != 429:
                raise ValueError(f"HTTP {exc.code} {exc.reason}") from None
            last = _Unreachable(f"HTTP {exc.code} {exc.reason}")
        except (urllib.error.URLError, OSError, NetworkError) as exc:
            reason = getattr(exc, "reason", None) or exc
            last = _Unreachable(f"{type(exc).__name__}: {reason}")
        delay = 0.5 * 2**attempt
        if deadline.remaining() <= delay:
            break
        time.sleep(delay)
    raise last


def _fetch(patch: Patch, file: PatchFile, deadline: Deadline) -> bytes | Missing:
    """One remote file: downloaded, checked against its pin and cached, or why not."""
    url = patch.source.url(file) or ""
    try:
        content = _verified(_download(url, file.size, deadline), file)
    except _Unreachable as exc:
        return Missing(patch.id, file.path, file.sha256, url, f"download failed: {exc}", True)
    except (ValueError, OSError) as exc:
        return Missing(patch.id, file.path, file.sha256, url, f"download failed: {exc}")
    if content is None:
        reason = "downloaded content does not match the pin"
        return Missing(patch.id, file.path, file.sha256, url, reason)
    # A read-only cache costs a later download; a full one is said, with the file it is.
    write_file(blob_path(file.sha256), content, durable=True, results=False)
    return content


Job = tuple[Patch, PatchFile]


def _fetch_all(jobs: list[Job], deadline: Deadline) -> list[bytes | Missing]:
    """Downloads in parallel (a bounded pool), all within one deadline, in job order: what
    has not answered by then is reported as unreachable (and its worker abandoned)."""
    results = parallel(lambda job: _fetch(*job, deadline), jobs, DOWNLOAD_WORKERS, deadline)
    late = f"no answer within the {deadline.seconds:g} s deadline"
    return [
        results[i] if i in results else Missing(p.id, f.path, f.sha256, p.source.url(f), late, True)
        for i, (p, f) in enumerate(jobs)
    ]


def collect_patch_files(
    registry: Registry,
    patch_ids: list[str],
    deadline: Deadline | None = None,
    offline: bool = False,
) -> dict[str, bytes]:
    """`patches/<id>/<path>` -> bytes for every file, or one error naming all missing files.

    Vendored files are read from the registry, remote ones from the cache; the rest are
    downloaded in parallel within one deadline (`deadline`, else a fresh default one), unless
    `offline` (or PROFILEGEN_OFFLINE / HF_HUB_OFFLINE) says no.
    """
    jobs = [(registry.patches[i], f) for i in patch_ids for f in registry.patches[i].source.files]
    found: list[bytes | Missing | None] = []
    for patch, file in jobs:
        if patch.source.kind == "vendored":
            found.append(_vendored(registry, patch, file))
        elif (cached := read_cached(file)) is not None:
            found.append(cached)
        elif offline or offline_mode():
            reason = "not in the cache (offline)"
            found.append(Missing(patch.id, file.path, file.sha256, patch.source.url(file), reason))
        else:
            found.append(None)  # to download
    remote = [i for i, got in enumerate(found) if got is None]
    if remote:
        fetched = _fetch_all([jobs[i] for i in remote], deadline or Deadline.start())
        for i, got in zip(remote, fetched, strict=True):
            found[i] = got
    missing = [m for m in found if isinstance(m, Missing)]
    if missing:
        raise MissingPatchFiles(missing)
    return {
        f"patches/{p.id}/{f.path}": c
        for (p, f), c in zip(jobs, found, strict=True)
        if isinstance(c, bytes)
    }


def pinned_files(registry: Registry) -> dict[str, list[tuple[str, PatchFile]]]:
    """sha256 -> the (patch id, file) pairs that pin it."""
    pins: dict[str, list[tuple[str, PatchFile]]] = {}
    for patch in registry.patches.values():
        for file in patch.source.files:
            pins.setdefault(file.sha256, []).append((patch.id, file))
    return pins
