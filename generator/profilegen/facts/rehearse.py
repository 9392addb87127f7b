"""`profilegen rehearse`: each profile's patch chain applied to its engine's real source.

The profile's own entrypoint runs, with its default settings, in a box (`profilegen.sandbox`)
laid out as its container is: a copy of the release's source tree at the engine's
`package_dir`, the bundle (entrypoint, helpers, patch files) at the paths the compose mounts
it on. The patch helpers act for real (verify, `patch`, installers, with the host's Python 3
as the image's); only the engine and `nvidia-smi` are stubs, so a run that reaches the engine
has applied every step. Every Python file a step changed, and every file mounted over one in
the package, is then byte-compiled (outside the box: compiling runs nothing) by the image's
Python version where this machine has it.
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import ProfilegenError
from ..explain.boxscripts import ENGINE_STUB, IDLE_NAMES, NVIDIA_SMI, RUN_DIR
from ..explain.core import Prepared, Scenario, prepare
from ..explain.layout import BUNDLE
from ..explain.sandbox import stub_path
from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from ..render.bundle import bundle_files, write_bundle
from ..render.targets.compose import HELPERS
from ..sandbox import Bind, Box, PlacementError, run

RUN_TIMEOUT_S = 600
# Going on past a refused step (the upgrade report names every step a release refuses): each
# step runs in a subshell, so that its refusal ends the step and not the boot.
KEEP_GOING = """
# rehearse: each patch step alone, going on past a refusal.
eval "pg_step_diff() $(declare -f pg_diff | tail -n +2)"
eval "pg_step_script() $(declare -f pg_script | tail -n +2)"
pg_diff() { ( pg_step_diff "$@" ) || true; }
pg_script() { ( pg_step_script "$@" ) || true; }
"""
REFUSED = "; refusing to boot"
# The verdict of a profile whose patch files or engine source could not be had.
UNAVAILABLE = "unavailable"
STEP_DONE = (": applied", ": done", "already applied")
COMPILE = (
    "import json, py_compile, sys\n"
    "bad = {}\n"
    "for f in sys.argv[1:]:\n"
    "    try: py_compile.compile(f, doraise=True)\n"
    "    except py_compile.PyCompileError as e: bad[f] = e.msg.strip().splitlines()[-1]\n"
    "print(json.dumps(bad))\n"
)


@dataclass(frozen=True)
class Rehearsal:
    profile: str
    engine: str
    # applies | refused | not-rehearsed (no release, no patches) | unavailable (not had)
    verdict: str
    message: str | None = None
    said: tuple[str, ...] = ()  # what the entrypoint and the patches said
    compiled: tuple[str, ...] = ()  # package files byte-compiled
    interpreter: str = ""
    # Every refused step with the patch's own words (the first only, unless going on).
    refusals: tuple[str, ...] = field(default=())


def patched(registry: Registry, profile: Profile) -> bool:
    """Whether the profile brings patches (steps or files mounted into the image)."""
    return bool(profile.patches)


def rehearse_profile(
    registry: Registry, profile: Profile, rendered: Rendered, tree: Path, keep_going: bool = False
) -> Rehearsal:
    """Runs the profile's entrypoint over a copy of `tree` (the release's package); with
    `keep_going`, past refused steps, to name each of them."""
    engine = registry.engines[profile.engine]
    package_dir = engine.package_dir or ""
    if not package_dir:
        return Rehearsal(profile.id, engine.id, "not-rehearsed", "the engine has no package_dir")
    with tempfile.TemporaryDirectory(prefix="profilegen-rehearse-") as tmp:
        work = Path(tmp)
        pkg = work / "pkg"
        shutil.copytree(tree, pkg, symlinks=True)
        try:
            files = bundle_files(registry, profile, rendered)
        except ProfilegenError as exc:
            why = f"cannot get its patch files: {exc}"
            return Rehearsal(profile.id, engine.id, UNAVAILABLE, why)
        if keep_going:
            files[HELPERS] = files[HELPERS] + KEEP_GOING.encode()
        write_bundle(work / BUNDLE, files)
        ready = prepare(registry, profile, Scenario(), rendered)
        for rel in ready.job.layout.dirs:
            (work / rel).mkdir(parents=True, exist_ok=True)
        _stand_in_weights(work, ready)
        mounts = [(pkg, package_dir)] + [
            (work / m.source, m.target) for m in ready.job.layout.mounts
        ]
        missing = _overlay_problem(mounts, package_dir, pkg)
        if missing:
            return Rehearsal(profile.id, engine.id, "refused", missing)
        try:
            code, stderr, launched = _run(work, ready, engine.binary, package_dir)
        except PlacementError as exc:
            return Rehearsal(profile.id, engine.id, "refused", str(exc))
        said = tuple(ln.removeprefix("profilegen: ") for ln in stderr.splitlines() if ln.strip())
        python = interpreter(package_dir)
        refusals = refusals_in(said)
        if not launched or refusals:
            first = refusals[0] if refusals else _refusal(code, said)
            return Rehearsal(
                profile.id, engine.id, "refused", first, said, interpreter=python,
                refusals=tuple(refusals) or (first,),
            )  # fmt: skip
        changed = _changed(tree, pkg) + _overlaid(mounts, package_dir, pkg)
        bad = _compile(python, pkg, changed)
        if bad:
            first = sorted(bad)[0]
            message = f"{first} does not compile: {bad[first]}"
            return Rehearsal(
                profile.id, engine.id, "refused", message, said, tuple(changed), python
            )
        return Rehearsal(profile.id, engine.id, "applies", None, said, tuple(changed), python)


def _stand_in_weights(work: Path, ready: Prepared) -> None:
    """The empty weights the explain layout puts where the entrypoint's guard looks: a
    rehearsal applies patches, it never loads a model. Only what the written bundle lacks: its
    own files (the real helpers, the patch files) stay as they are."""
    for rel, data in ready.job.layout.files.items():
        target = work / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _inside(path: str, package_dir: str) -> str | None:
    """`path` relative to the package dir, or None when it lies outside it."""
    pure, base = PurePosixPath(path), PurePosixPath(package_dir)
    return pure.relative_to(base).as_posix() if pure.is_relative_to(base) and pure != base else None


def _overlay_problem(mounts: list[tuple[Path, str]], package_dir: str, pkg: Path) -> str | None:
    """A file mounted into the package must replace one this release has."""
    for source, target in mounts[1:]:
        rel = _inside(target, package_dir)
        if rel is not None and source.is_file() and not (pkg / rel).is_file():
            return f"{source.name} is mounted over {rel}, which this release does not have"
    return None


def _overlaid(mounts: list[tuple[Path, str]], package_dir: str, pkg: Path) -> list[str]:
    out = []
    for source, target in mounts[1:]:
        rel = _inside(target, package_dir)
        if rel is not None and source.is_file() and rel.endswith(".py"):
            shutil.copyfile(source, pkg / rel)  # compiled in place, as the image would load it
            out.append(rel)
    return out


def interpreter(package_dir: str) -> str:
    """The Python the image runs (python3.12 for a dist-packages under python3.12) when this
    machine has it, else this one; the report names which compiled the files."""
    match = re.search(r"/python(3\.[0-9]+)/", package_dir + "/")
    if match is None:
        return sys.executable
    name = f"python{match.group(1)}"
    # pyenv keeps versions it does not put on PATH under ~/.pyenv/versions.
    pyenv = sorted(Path("~/.pyenv/versions").expanduser().glob(f"*/bin/{name}"), reverse=True)
    for found in [shutil.which(name), *map(str, pyenv)]:
        if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
            return found
    return sys.executable


def _run(
    work: Path, ready: Prepared, binary: str, package_dir: str
) -> tuple[int | None, str, bool]:
    """The container's launch in a box: the package (writable) and the compose's mounts at
    their paths, the engine a stub that records that it was reached."""
    out = work / "run"
    out.mkdir()
    (out / "gpus").write_text(f"{max(ready.gpus, 1)} PHB\n")  # the profile's rig
    # The stubs write where the launch file says: here, the folder bound at RUN_DIR.
    (out / "launch").write_text(f"{RUN_DIR}\n")
    (launch,) = ready.job.launches
    binds = [Bind(work / "pkg", package_dir, read_only=False)]
    binds += [Bind(work / m.source, m.target, m.read_only) for m in ready.job.layout.mounts]
    binds.append(Bind(out, RUN_DIR, read_only=False))
    files = {
        stub_path(binary): ENGINE_STUB.encode(),
        "/usr/bin/nvidia-smi": NVIDIA_SMI.encode(),
        **{stub_path(name): b"#!/bin/sh\nexit 0\n" for name in IDLE_NAMES},
    }
    # The image's Python finds the package where it is installed (installers look it up).
    env = {**dict(launch.env), "PYTHONPATH": str(PurePosixPath(package_dir).parent)}
    box = Box(binds=tuple(binds), files=files, env=env)
    done = run(box, list(launch.argv), timeout=RUN_TIMEOUT_S)
    stderr = done.stderr.decode("utf-8", errors="replace")
    if done.timed_out:
        stderr += "\nprofilegen: the entrypoint did not finish in time\n"
    return done.code, stderr, (out / "engine.argv").is_file()


def refusals_in(said: tuple[str, ...]) -> list[str]:
    """Each refused step's message, with the patch's own last words before it."""
    out: list[str] = []
    start = 0
    for i, line in enumerate(said):
        if not line.endswith(REFUSED) or " patch" not in f" {line}":
            continue
        own = _own_words([ln for ln in said[start:i] if not ln.endswith(STEP_DONE)])
        out.append(f"{line} ({own})" if own else line)
        start = i + 1
    return out


def _own_words(lines: list[str]) -> str | None:
    """What the patch said last, or, for a diff, each file whose hunks failed (`patch` names
    the file it checks, then how many hunks failed in it)."""
    failed = []
    checking = None
    for line in lines:
        if line.startswith("checking file "):
            checking = line.removeprefix("checking file ")
        elif re.fullmatch(r"[0-9]+ out of [0-9]+ hunks? FAILED", line):
            failed.append(f"{checking}: {line}" if checking else line)
    if failed:
        return "; ".join(failed)
    return lines[-1] if lines else None


def _refusal(code: int | None, said: tuple[str, ...]) -> str:
    """The entrypoint's refusal, with the patch's own last words before it."""
    last = said[-1] if said else f"the entrypoint exited {code}"
    own = [ln for ln in said[:-1] if not ln.endswith(STEP_DONE)]
    return f"{last} ({own[-1]})" if own else last


def _changed(tree: Path, pkg: Path) -> list[str]:
    """Python files of the copy that differ from the release's (or are new), relative."""
    out = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        original = tree / rel
        if not original.is_file() or not filecmp.cmp(original, path, shallow=False):
            out.append(rel.as_posix())
    return out


def _compile(python: str, pkg: Path, files: list[str]) -> dict[str, str]:
    if not files:
        return {}
    done = subprocess.run(
        [python, "-c", COMPILE, *files], cwd=pkg, capture_output=True, text=True, check=False
    )
    try:
        bad: dict[str, str] = json.loads(done.stdout or "{}")
    except ValueError:
        return {files[0]: done.stderr.strip()[-200:] or "the compiler failed"}
    return bad
