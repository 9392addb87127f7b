"""Patch files: vendored in the registry or fetched by pinned URL into a content-addressed cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ProfilegenError
from ..model import Patch
from ..model.patch import PatchFile
from ..registry import Registry
from ..resources import cache_root
from ..write import write_atomic

DOWNLOAD_TIMEOUT_S = 15.0
DOWNLOAD_ATTEMPTS = 3


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


class MissingPatchFiles(ProfilegenError):
    """Some patch files are neither vendored, cached nor downloadable right now."""

    def __init__(self, missing: list[Missing]) -> None:
        self.missing = missing
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


def _read_verified(path: Path, file: PatchFile) -> bytes | None:
    try:
        content = path.read_bytes()
    except OSError:
        return None
    if len(content) != file.size or sha256_hex(content) != file.sha256:
        return None
    return content


def _download(url: str) -> bytes:
    # urllib pulls in ssl (~0.1 s): only a download pays for it.
    import urllib.error
    import urllib.request

    last: Exception | None = None
    for attempt in range(DOWNLOAD_ATTEMPTS):
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "profilegen"})
            with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as exc:
            last = exc
            if exc.code < 500 and exc.code != 429:
                break
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = exc
        time.sleep(0.5 * 2**attempt)
    raise OSError(str(last))


def patch_file_bytes(registry: Registry, patch: Patch, file: PatchFile) -> bytes:
    """The verified bytes of one patch file, or MissingPatchFiles explaining why not."""
    if patch.source.kind == "vendored":
        path = registry.root / patch.vendored_dir / file.path
        content = _read_verified(path, file)
        if content is None:
            reason = "missing" if not path.is_file() else "does not match its pinned sha256/size"
            raise MissingPatchFiles(
                [Missing(patch.id, file.path, file.sha256, None, f"vendored file {reason}")]
            )
        return content
    cached = _read_verified(blob_path(file.sha256), file)
    if cached is not None:
        return cached
    url = patch.source.url(file)
    if offline_mode():
        raise MissingPatchFiles(
            [Missing(patch.id, file.path, file.sha256, url, "not in the cache (offline)")]
        )
    try:
        content = _download(url or "")
    except OSError as exc:
        raise MissingPatchFiles(
            [Missing(patch.id, file.path, file.sha256, url, f"download failed: {exc}")]
        ) from None
    if len(content) != file.size or sha256_hex(content) != file.sha256:
        raise MissingPatchFiles(
            [
                Missing(
                    patch.id,
                    file.path,
                    file.sha256,
                    url,
                    "downloaded content does not match the pin",
                )
            ]
        )
    write_atomic(blob_path(file.sha256), content)
    return content


def collect_patch_files(registry: Registry, patch_ids: list[str]) -> dict[str, bytes]:
    """`patches/<id>/<path>` -> bytes for every file, or one error naming all missing files."""
    out: dict[str, bytes] = {}
    missing: list[Missing] = []
    for patch_id in patch_ids:
        patch = registry.patches[patch_id]
        for file in patch.source.files:
            try:
                out[f"patches/{patch.id}/{file.path}"] = patch_file_bytes(registry, patch, file)
            except MissingPatchFiles as exc:
                missing.extend(exc.missing)
    if missing:
        raise MissingPatchFiles(missing)
    return out


def pinned_files(registry: Registry) -> dict[str, list[tuple[str, PatchFile]]]:
    """sha256 -> the (patch id, file) pairs that pin it."""
    pins: dict[str, list[tuple[str, PatchFile]]] = {}
    for patch in registry.patches.values():
        for file in patch.source.files:
            pins.setdefault(file.sha256, []).append((patch.id, file))
    return pins


def cache_add(registry: Registry, paths: list[Path]) -> list[str]:
    """Copies files into the cache when their sha256 is pinned; returns one line per file."""
    pins = pinned_files(registry)
    lines: list[str] = []
    rejected: list[str] = []
    for path in paths:
        try:
            content = path.read_bytes()
        except OSError as exc:
            rejected.append(f"{path}: cannot read ({exc.strerror})")
            continue
        digest = sha256_hex(content)
        owners = pins.get(digest)
        if not owners:
            rejected.append(f"{path}: sha256 {digest} is not pinned by any patch in the registry")
            continue
        target = blob_path(digest)
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".tmp")
            shutil.copyfile(path, tmp)
            tmp.replace(target)
        names = ", ".join(f"{p}/{f.path}" for p, f in owners)
        lines.append(f"cached {path} as {names}")
    if rejected:
        raise ProfilegenError("\n".join([*lines, *rejected]))
    return lines
