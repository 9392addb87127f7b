"""Nothing a cache folder holds is trusted: not to run code, not to block, not to be right.

A cache may be restored by CI from a pull request's run, copied or shared. Its entries are
signed under a key of the user's kept outside it, only regular files are read from it, a
damaged patch file in it is repaired by `cache add`, and a cache that cannot be written (a
full disk) is an error naming the file, with nothing half-written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import pickle
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from jinja2.bccache import bc_magic

from tests.support.cli import Run, invoke_in
from tests.support.cliproc import run_cli_process

BASE = Path(__file__).resolve().parents[1] / "registry" / "base"
PATCH = "registry/patches/tiny-fix.yaml"
PATCH_FILE = "registry/patches/files/tiny-fix/fix.patch"
RUNS = (("list",), ("explain", "tiny-chat"), ("check",), ("render", "tiny-chat"))
OLD_FORMAT = b"profilegen-result-cache 1\n"
NEW_FORMAT = b"profilegen-result-cache 2\n"


class _Touch:
    """Unpickled, it creates the file `path` (what a planted entry would do on the host)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache and a key of this test's own (PROFILEGEN_STATE), for it and its processes."""
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROFILEGEN_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("PROFILEGEN_NO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base registry with its patch file fetched by URL (kept beside it, as fix.patch, not
    in it; locked with another cache that holds it, so that the tests' own start empty). No
    run writes into it: the module's tests share it."""
    folder = tmp_path_factory.mktemp("tiny")
    root = folder / "tiny"
    shutil.copytree(BASE, root)
    path = root / PATCH
    text = path.read_text(encoding="utf-8")
    remote = '  kind: remote\n  base_url: "https://patches.invalid/tiny-fix/"\n'
    path.write_text(text.replace("  kind: vendored\n", remote), encoding="utf-8")
    content = (root / PATCH_FILE).read_bytes()
    (folder / "fix.patch").write_bytes(content)
    shutil.rmtree(root / "registry" / "patches" / "files")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROFILEGEN_CACHE", str(folder / "lock-cache"))
        blob = folder / "lock-cache" / "blobs" / "sha256" / hashlib.sha256(content).hexdigest()
        blob.parent.mkdir(parents=True)
        blob.write_bytes(content)
        for args in (("schema",), ("lock", "--offline")):
            run = invoke_in(root, *args)
            assert run.code == 0, run.text
    return root


@pytest.fixture
def tiny(tiny_root: Path, cache: Path, tmp_path: Path) -> Path:
    """The shared registry, with this test's own cache and a copy of the patch file at
    tmp_path / "fix.patch"."""
    shutil.copyfile(tiny_root.parent / "fix.patch", tmp_path / "fix.patch")
    return tiny_root


@pytest.fixture(scope="module")
def filled(tiny_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Run]]:
    """A cache and its key, filled from empty by RUNS (each a process of its own), and what
    each run said: tests start from a copy instead of running them again."""
    folder = tmp_path_factory.mktemp("filled")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROFILEGEN_CACHE", str(folder / "cache"))
        patch.setenv("PROFILEGEN_STATE", str(folder / "state"))
        patch.delenv("PROFILEGEN_NO_CACHE", raising=False)
        clean = [_run(tiny_root, *args) for args in RUNS]
    return folder, clean


def _fill(filled: tuple[Path, list[Run]], cache: Path) -> list[Run]:
    """This test's cache and key (PROFILEGEN_STATE, beside the cache) as RUNS left them from
    empty; what each run said."""
    folder, clean = filled
    shutil.copytree(folder / "cache", cache, dirs_exist_ok=True)
    shutil.copytree(folder / "state", cache.parent / "state", dirs_exist_ok=True)
    return clean


def _run(root: Path, *args: str) -> Run:
    """The CLI in a process of its own (nothing of this one's memos), bounded in time."""
    return run_cli_process(["--root", str(root), *args], timeout=120)


def _entries(cache: Path) -> list[Path]:
    found = [*cache.glob("results/*/*"), *cache.glob("jinja/*"), *cache.glob("schemas/*")]
    return sorted(p for p in found if p.is_file())


def _plant(cache: Path, marker: Path, head: bytes, mac: bytes) -> None:
    """Every entry replaced by one that creates `marker` when it is unpickled or its code run
    (a stored registry of parsed documents is planted too, under its fixed name)."""
    parsed = cache / "results" / "documents" / "parsed"
    parsed.parent.mkdir(parents=True, exist_ok=True)
    parsed.touch()
    for entry in _entries(cache):
        touch = pickle.dumps(_Touch(marker))
        if entry.parent.name == "jinja":
            code = compile(f"open({str(marker)!r}, 'w')", "planted", "exec")
            entry.write_bytes(bc_magic + pickle.dumps(_Touch(marker), 2) + marshal.dumps(code))
        else:
            entry.write_bytes(head + entry.name.encode() + b"\n" + mac + touch)


def test_a_planted_cache_entry_never_runs_code(
    tiny: Path, cache: Path, tmp_path: Path, filled: tuple[Path, list[Run]]
) -> None:
    clean = _fill(filled, cache)
    assert [run.code for run in clean] == [0, 0, 1, 0], [run.err for run in clean]
    assert any(p.parent.name == "jinja" for p in _entries(cache))
    marker = tmp_path / "code-ran"
    for head, mac in ((OLD_FORMAT, b""), (NEW_FORMAT, bytes(32)), (NEW_FORMAT, b"x" * 32)):
        _plant(cache, marker, head, mac)
        again = [_run(tiny, *args) for args in RUNS]
        assert not marker.exists(), f"a planted entry ({head!r}) ran code"
        assert [(r.code, r.out) for r in again] == [(r.code, r.out) for r in clean]
        assert not [r.err for r in again if "Traceback" in r.err or "internal error" in r.err]


def test_entries_are_read_back_by_later_processes_under_a_private_key(
    tiny: Path, cache: Path, tmp_path: Path
) -> None:
    first = _run(tiny, "render", "tiny-chat")
    (entry,) = (cache / "results" / "render").iterdir()
    before = entry.stat()
    again = _run(tiny, "render", "tiny-chat")
    assert again.out == first.out
    after = entry.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # a hit
    key = tmp_path / "state" / "cache-key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert re.fullmatch(rb"[0-9a-f]{64}\n", key.read_bytes())


@pytest.mark.parametrize("where", ["inside the cache", "readable by others"])
def test_a_key_that_could_be_known_signs_nothing(
    tiny: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    if where == "inside the cache":
        monkeypatch.setenv("PROFILEGEN_STATE", str(cache / "state"))
    else:
        assert _run(tiny, "list").code == 0
        shutil.rmtree(cache)
        (tmp_path / "state" / "cache-key").chmod(0o644)
    run = _run(tiny, "render", "tiny-chat")
    assert run.code == 0, run.err
    assert not list(cache.glob("results/*/*")) and not list(cache.glob("jinja/*"))


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def test_a_fifo_in_a_cache_is_never_waited_on(
    tiny: Path, cache: Path, tmp_path: Path, filled: tuple[Path, list[Run]]
) -> None:
    clean = _fill(filled, cache)
    content = (tmp_path / "fix.patch").read_bytes()
    blob = cache / "blobs" / "sha256" / hashlib.sha256(content).hexdigest()
    _fifo(blob)
    out = tmp_path / "bundle"
    run = _run(tiny, "render", "tiny-chat", "-o", str(out), "--offline")
    assert run.code == 1
    assert "  tiny-fix/fix.patch (sha256 dd5d0074ae46…): not in the cache (offline)\n" in run.err
    assert not out.exists()
    for entry in _entries(cache):
        _fifo(entry)
    again = [_run(tiny, *args) for args in RUNS]  # each bounded: a wait fails the test
    assert [(r.code, r.out) for r in again] == [(r.code, r.out) for r in clean]


def test_a_huge_file_in_a_cache_is_not_read(
    tiny: Path, cache: Path, filled: tuple[Path, list[Run]]
) -> None:
    """A sparse 8 GiB file at every entry: each run stays within 2 GiB of address space."""
    clean = _fill(filled, cache)
    for entry in _entries(cache):
        entry.unlink()
        with entry.open("wb") as handle:
            handle.truncate(8 * 2**30)
    again = [
        run_cli_process(["--root", str(tiny), *args], timeout=120, memory=2**31) for args in RUNS
    ]
    assert [(r.code, r.out) for r in again] == [(r.code, r.out) for r in clean]


def _add(root: Path, *args: str) -> Run:
    return _run(root, "cache", "add", *args)


def test_cache_add_repairs_a_damaged_entry(tiny: Path, cache: Path, tmp_path: Path) -> None:
    good = tmp_path / "fix.patch"
    blob = cache / "blobs" / "sha256" / hashlib.sha256(good.read_bytes()).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"damaged\n")
    run = _add(tiny, str(good))
    assert (run.code, run.out, run.err) == (0, f"cached {good} as tiny-fix/fix.patch\n", "")
    assert blob.read_bytes() == good.read_bytes()
    out = tmp_path / "bundle"
    assert _run(tiny, "render", "tiny-chat", "-o", str(out), "--offline").code == 0
    assert (out / "patches" / "tiny-fix" / "fix.patch").read_bytes() == good.read_bytes()


def test_cache_add_names_the_file_it_refused(tiny: Path, cache: Path, tmp_path: Path) -> None:
    good, missing = tmp_path / "fix.patch", tmp_path / "missing.patch"
    run = _add(tiny, str(missing), str(good))
    assert run.code == 1
    assert run.out == f"cached {good} as tiny-fix/fix.patch\n"
    assert run.err == (
        "error: 1 of 2 file(s) not added to the cache:\n"
        f"  {missing}: cannot read (No such file or directory)\n"
    )
    run = _add(tiny, "--format", "json", str(missing), str(good))
    assert run.code == 1
    assert json.loads(run.out) == [
        {"path": str(missing), "error": "cannot read (No such file or directory)"},
        {
            "path": str(good),
            "sha256": hashlib.sha256(good.read_bytes()).hexdigest(),
            "patch_files": ["tiny-fix/fix.patch"],
        },
    ]
    run = _add(tiny, "--format", "json", str(good))
    assert run.code == 0 and json.loads(run.out)[0]["patch_files"] == ["tiny-fix/fix.patch"]


@contextlib.contextmanager
def _tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted at `folder` (needs root), unmounted afterwards."""
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size=64k,{options}", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def full(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB file system that is full."""
    with _tmpfs(tmp_path / "full", "rw") as folder:
        with contextlib.suppress(OSError), (folder / "filler").open("wb") as filler:
            while True:
                filler.write(bytes(4096))
                filler.flush()
        yield folder


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[Path]:
    """A folder on a file system mounted read-only."""
    with _tmpfs(tmp_path / "readonly", "ro") as folder:
        yield folder


def test_a_read_only_cache_costs_speed_but_cache_add_says_it_failed(
    tiny: Path, readonly: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROFILEGEN_CACHE", str(readonly))
    for args in RUNS:
        run = _run(tiny, *args)
        assert (run.code, run.err) == ((1, run.err) if args == ("check",) else (0, "")), run.err
    good = tmp_path / "fix.patch"
    blob = readonly / "blobs" / "sha256" / hashlib.sha256(good.read_bytes()).hexdigest()
    run = _add(tiny, str(good))
    assert (run.code, run.out) == (2, "")
    assert run.err == (
        f"error: cannot write the cache file {blob}: Read-only file system; see to what is in "
        "the way there (or its permissions), or point PROFILEGEN_CACHE at another folder\n"
    )


FULL = (
    "No space left on device; free some space there, point PROFILEGEN_CACHE at a folder with room"
)


def test_a_full_cache_disk_names_the_file_and_what_to_do(
    tiny: Path, full: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = full / "cache"
    monkeypatch.setenv("PROFILEGEN_CACHE", str(cache))
    for args in RUNS:
        run = _run(tiny, *args)
        assert run.code == 2, (args, run.err)
        assert re.fullmatch(
            f"error: cannot write the cache file {re.escape(str(cache))}/\\S+: "
            f"{FULL}, or run with --no-cache\n",
            run.err,
        ), run.err
        assert _run(tiny, "--no-cache", *args).code == (1 if args == ("check",) else 0)
    good = tmp_path / "fix.patch"
    run = _run(tiny, "--no-cache", "cache", "add", str(good))  # patch files are cached anyway
    blob = cache / "blobs" / "sha256" / hashlib.sha256(good.read_bytes()).hexdigest()
    assert (run.code, run.out) == (2, "")
    assert run.err == f"error: cannot write the cache file {blob}: {FULL}\n"
    left = [p for p in cache.rglob("*") if p.is_file()]
    assert not [p for p in left if p.name.endswith(".tmp")], left
    assert not blob.exists()
