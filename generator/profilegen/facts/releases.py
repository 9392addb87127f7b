"""Engine releases from the package index, cached by content; the environments they run in.

Beside `hub/`, this is the one module of profilegen that reaches the network: it shells out
to `pip download` (a release's wheel or source archive) and `pip install` (a throw-away
environment in the user cache, never in the repository). Everything is cached: an artifact
under `releases/blobs/<sha256>/`, found again by its requirement without the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import NetworkError, ProfilegenError
from ..registry.safejson import load_json_file
from ..resources import cache_root
from ..write import write_atomic

PIP_TIMEOUT_S = 1800
# The CPU build of torch that the environments get (vLLM's parser imports torch; the local
# wheel is taken where the machine has one).
TORCH = "torch==2.13.0"
# A release's dependencies that only a GPU build needs, or whose native operators fail to
# load beside a CPU torch: never installed in a facts environment.
GPU_ONLY = re.compile(
    r"^(torch|torchaudio|torchvision|torchcodec|triton|xformers|flashinfer|flash[-_]attn|"
    r"nvidia[-_]|nvtx|cupy|pynvvideocodec|tilelang|quack|tokenspeed|humming|deep[-_]|"
    r"fastsafetensors|apache[-_]tvm|sgl[-_]kernel|sglang[-_]kernel|cuda|ray|numba|"
    r"flashmla|kt[-_]kernel|mooncake|torchao|decord|kernels)",
    re.IGNORECASE,
)


class ReleaseError(ProfilegenError):
    """A release that cannot be had or installed (exit 2: the index or the machine)."""

    exit_code = NetworkError.exit_code


@dataclass(frozen=True)
class Artifact:
    """A downloaded release file: the requirement that named it, its name and sha256."""

    requirement: str
    name: str
    sha256: str
    path: Path


def releases_dir() -> Path:
    return cache_root() / "releases"


def _index_file(requirement: str, source: bool) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.=-]", "_", requirement)
    return releases_dir() / "index" / f"{slug}.{'sdist' if source else 'wheel'}.json"


def cached(requirement: str, source: bool = False) -> Artifact | None:
    """The artifact already downloaded for `requirement`, or None (never the network)."""
    index = _index_file(requirement, source)
    try:
        entry = load_json_file(index, 4096)
        path = releases_dir() / "blobs" / entry["sha256"] / entry["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Artifact(requirement, entry["name"], entry["sha256"], path) if path.is_file() else None


def download(requirement: str, *, source: bool = False, offline: bool = False) -> Artifact:
    """The release file for `requirement` (a wheel, or the source archive with `source`)."""
    hit = cached(requirement, source)
    if hit is not None:
        return hit
    if offline:
        raise ReleaseError(f"{requirement} is not in the release cache and --offline was given")
    name = re.split(r"[=<>!~ ]", requirement, maxsplit=1)[0]
    kind = [f"--no-binary={name}"] if source else ["--only-binary=:all:"]
    releases_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=releases_dir(), prefix=".download-") as tmp:
        _pip(["download", "--no-deps", *kind, requirement, "-d", tmp], f"download {requirement}")
        files = sorted(Path(tmp).iterdir())
        if len(files) != 1:
            raise ReleaseError(f"pip download {requirement} gave {len(files)} files, not one")
        got = files[0]
        digest = _sha256(got)
        blob = releases_dir() / "blobs" / digest / got.name
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(got), blob)
    entry = {"name": blob.name, "sha256": digest}
    write_atomic(_index_file(requirement, source), json.dumps(entry).encode(), durable=False)
    return Artifact(requirement, blob.name, digest, blob)


def index_versions(dist: str) -> list[str]:
    """Every version of `dist` the package index has (`pip index versions`)."""
    out = _pip(["index", "versions", dist], f"list the versions of {dist}")
    for line in out.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.partition(":")[2].split(",") if v.strip()]
    raise ReleaseError(f"pip index versions {dist} listed no versions")


def environment(artifact: Artifact, dist: str, torch: bool) -> Path:
    """A throw-away virtual environment (in the user cache) holding the release and the
    dependencies it needs on a CPU: its Python's path. Built once per artifact.

    Where the cache already holds an environment of another release of the same package,
    the new one sees its packages (torch, the dependencies they share) through a path file
    and installs only what its own pins ask for beyond them."""
    # Named by the artifact and the recipe: a changed recipe builds a new environment.
    recipe = hashlib.sha256(f"{TORCH}\0{GPU_ONLY.pattern}\0{dist}".encode()).hexdigest()
    home = cache_root() / "envs" / f"{artifact.sha256[:16]}-{recipe[:8]}"
    python = home / "bin" / "python"
    if (home / ".complete").is_file():
        return python
    lender = _lender(home, recipe[:8])
    shutil.rmtree(home, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(home)], "create an environment")
    if lender is not None:
        (_site(python) / "lent.pth").write_text(str(_site(lender)) + "\n", encoding="utf-8")
    elif torch:
        _pip([TORCH], "install torch (CPU)", python=python, install=True)
    _pip(["--no-deps", str(artifact.path)], f"install {artifact.name}", python=python, install=True)
    kept = [r for r in requirements_of(python, dist) if not GPU_ONLY.match(r)]
    if kept:
        _pip(kept, "install the release's dependencies", python=python, install=True)
    (home / ".complete").write_text(artifact.name + "\n", encoding="utf-8")
    return python


def _lender(home: Path, recipe: str) -> Path | None:
    """A complete environment of another release made by the same recipe (so of the same
    package) that lends nothing itself: the first by name, or None."""
    for other in sorted(home.parent.glob(f"*-{recipe}")):
        lends = not any(other.glob("lib/*/site-packages/lent.pth"))
        if other != home and (other / ".complete").is_file() and lends:
            return other / "bin" / "python"
    return None


def _site(python: Path) -> Path:
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages"))
    if not found:
        raise ReleaseError(f"{python.parent.parent} has no site-packages")
    return found[0]


def requirements_of(python: Path, dist: str) -> list[str]:
    """The release's own dependencies (without extras) as its metadata lists them."""
    code = (
        "import sys, importlib.metadata as m\n"
        "for r in m.distribution(sys.argv[1]).requires or []:\n"
        "    if 'extra ==' not in r: print(r)\n"
    )
    out = _run([str(python), "-c", code, dist], f"read {dist}'s dependencies")
    return [line for line in out.splitlines() if line.strip()]


def run_probe(python: Path, probe: Path, args: Sequence[str] = ()) -> str:
    """Runs a probe script with the environment's Python; its stdout."""
    return _run([str(python), str(probe), *args], f"read the release with {probe.name}")


def run_pip(python: Path, args: Sequence[str], what: str) -> str:
    """`python -m pip ARGS` in an environment built elsewhere (an engine's own environment,
    `releases/vllm_env.py`): its stdout, or a ReleaseError saying what could not be done."""
    return _pip(list(args), what, python=python)


def _pip(args: list[str], what: str, python: Path | None = None, install: bool = False) -> str:
    exe = str(python) if python else sys.executable
    verb = ["install", "--quiet"] if install else []
    return _run([exe, "-m", "pip", *verb, "--disable-pip-version-check", *args], what)


def _run(argv: list[str], what: str) -> str:
    env = {**os.environ, "PIP_NO_INPUT": "1", "VLLM_TARGET_DEVICE": "cpu"}
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReleaseError(f"cannot {what}: {exc}") from None
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.splitlines() if ln.strip() and "is ignored" not in ln]
        raise ReleaseError(f"cannot {what}: " + (tail[-1] if tail else f"exit {done.returncode}"))
    return done.stdout


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
