"""`profilegen rehearse`: each profile's patch chain applied to its engine's real source.

The profile's own entrypoint runs, with its default settings, inside a throw-away mount
namespace laid out as its container is: a copy of the release's source tree at the engine's
`package_dir`, the bundle's patch folders and files at the paths the compose mounts them on.
The patch helpers act for real (verify, `patch`, installers); only the engine is a stub, so a
run that reaches it has applied every step. Every Python file a step changed, and every file
mounted over one in the package, is then byte-compiled.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import ProfilegenError
from ..explain.core import container, stubbed_script
from ..explain.sandbox import SHELL_STUBS
from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from ..render.bundle import bundle_files, write_bundle
from .releases import ReleaseError

RUN_TIMEOUT_S = 600
# Going on past a refused step (the upgrade report names every step a release refuses): each
# step runs in a subshell, so that its refusal ends the step and not the boot.
KEEP_GOING = """# <<< patch helpers
eval "pg_step_diff() $(declare -f pg_diff | tail -n +2)"
eval "pg_step_script() $(declare -f pg_script | tail -n +2)"
pg_diff() { ( pg_step_diff "$@" ) || true; }
pg_script() { ( pg_step_script "$@" ) || true; }
"""
REFUSED = "; refusing to boot"
STEP_DONE = (": applied", ": done", "already applied")
COMPILE = (
    "import json, py_compile, sys\n"
    "bad = {}\n"
    "for f in sys.argv[1:]:\n"
    "    try: py_compile.compile(f, doraise=True)\n"
    "    except py_compile.PyCompileError as e: bad[f] = e.msg.strip().splitlines()[-1]\n"
    "print(json.dumps(bad))\n"
)


class RehearsalError(ProfilegenError):
    """The machine cannot rehearse (no mount namespace): exit 2."""

    exit_code = ReleaseError.exit_code


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
            return Rehearsal(profile.id, engine.id, "unavailable", why)
        write_bundle(work / "bundle", files)
        box = container(rendered, {})
        mounts = [(pkg, package_dir)] + _patch_mounts(box.service, work / "bundle")
        missing = _overlay_problem(mounts, package_dir, pkg)
        if missing:
            return Rehearsal(profile.id, engine.id, "refused", missing)
        python = interpreter(package_dir)
        words = _with_helpers(box.words, engine.binary, keep_going)
        code, stderr, launched = _run(work, words, box.env, mounts, python)
        said = tuple(ln.removeprefix("profilegen: ") for ln in stderr.splitlines() if ln.strip())
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


def _patch_mounts(service: dict[str, object], bundle: Path) -> list[tuple[Path, str]]:
    """The compose's bind mounts of the bundle's patch folders and files."""
    mounts = []
    for volume in service.get("volumes") or []:  # type: ignore[attr-defined]
        if not isinstance(volume, dict) or volume.get("type") != "bind":
            continue
        source = str(volume.get("source", ""))
        if source.startswith("./patches/"):
            mounts.append((bundle / source.removeprefix("./"), str(volume["target"])))
    return mounts


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


def _setup(mounts: list[tuple[Path, str]], upper: Path) -> list[str]:
    """Shell lines laying the mounts out: where a target's folder does not exist, the nearest
    existing ancestor gets a throw-away overlay, so that nothing on the host changes."""
    lines = ["set -e"]
    overlaid: set[str] = set()
    for i, (source, target) in enumerate(mounts):
        anchor = Path(target)
        while not anchor.exists():
            anchor = anchor.parent
        if str(anchor) == "/" and not Path(target).exists():
            raise RehearsalError(f"cannot lay out {target}: no folder of it exists on this machine")
        if not Path(target).exists() and str(anchor) not in overlaid:
            up, wk = upper / f"up{i}", upper / f"wk{i}"
            up.mkdir(parents=True)
            wk.mkdir(parents=True)
            lines.append(
                "mount -t overlay overlay -o "
                + shlex.quote(f"lowerdir={anchor},upperdir={up},workdir={wk}")
                + f" {shlex.quote(str(anchor))}"
            )
            overlaid.add(str(anchor))
        q = shlex.quote(target)
        lines.append(f"mkdir -p {q}" if source.is_dir() else f"mkdir -p $(dirname {q}); touch {q}")
        lines.append(f"mount --bind {shlex.quote(str(source))} {q}")
    return lines


def _run(
    work: Path,
    words: list[str],
    env: dict[str, str],
    mounts: list[tuple[Path, str]],
    python: str,
) -> tuple[int | None, str, bool]:
    stubs, out, tmp = work / "stubs", work / "out", work / "tmp"
    for folder in (stubs, out, tmp):
        folder.mkdir()
    (stubs / "nvidia-smi").write_text("#!/bin/bash\n" + SHELL_STUBS + 'nvidia-smi "$@"\n')
    (stubs / "nvidia-smi").chmod(0o755)
    for name in ("python3", "python"):
        (stubs / name).symlink_to(python)
    script = "\n".join([*_setup(mounts, work / "overlay"), "exec " + shlex.join(words)])
    run_env = {
        **env,
        "PATH": f"{stubs}:/usr/local/bin:/usr/bin:/bin",
        "PG_EXPLAIN_OUT": str(out),
        "PG_EXPLAIN_GPUS": "1",
        "PG_EXPLAIN_LINK": "PHB",
        "TMPDIR": str(tmp),
        # The image's Python finds the package where it is installed (installers look it up).
        "PYTHONPATH": str(PurePosixPath(mounts[0][1]).parent),
    }
    argv = [*_unshare(), "bash", "-c", script]
    try:
        done = subprocess.run(
            argv, env=run_env, cwd=work, capture_output=True, text=True,
            timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, "the entrypoint did not finish in time", False
    except OSError as exc:
        raise RehearsalError(f"cannot start a mount namespace: {exc}") from None
    if done.returncode != 0 and "unshare:" in done.stderr and not (out / "engine.argv").exists():
        raise RehearsalError(
            "cannot start a mount namespace (" + done.stderr.strip().splitlines()[-1] + "); "
            "rehearse needs root or unprivileged user namespaces"
        )
    return done.returncode, done.stderr, (out / "engine.argv").is_file()


def _with_helpers(words: list[str], binary: str, keep_going: bool) -> list[str]:
    """The container's words with the engine stubbed (and each step alone, going on)."""
    if len(words) < 3 or words[1] != "-c":
        return words
    script = stubbed_script(words[2], binary, None)
    if keep_going:
        script = script.replace("# <<< patch helpers\n", KEEP_GOING, 1)
    return [*words[:2], script, *words[3:]]


def refusals_in(said: tuple[str, ...]) -> list[str]:
    """Each refused step's message, with the patch's own last words before it."""
    out: list[str] = []
    start = 0
    for i, line in enumerate(said):
        if not line.endswith(REFUSED) or " patch" not in f" {line}":
            continue
        own = [ln for ln in said[start:i] if not ln.endswith(STEP_DONE)]
        out.append(f"{line} ({own[-1]})" if own else line)
        start = i + 1
    return out


def _unshare() -> list[str]:
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--mount", "--propagation", "private", "--"]


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
