"""Writes are whole or absent, even under a real SIGINT, and get the mode the umask gives.

The corpus (cases_writes2.py) holds the refusals; here are what needs a process or the
umask: a writer interrupted between its first file and its last, in a process of its own
stopped at that moment, and the mode of every file the write commands make.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from profilegen.write import ASIDE_PREFIX as ASIDE
from profilegen.write import STAGE_PREFIX, signals_held, write_folder
from tests.hostile.build import PATCH_FILE
from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.cliproc import start_cli_process
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

PATCH = "registry/patches/tiny-fix.yaml"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("writes") / "base")


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` by relative path (folders by a marker)."""
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(folder.rglob("*"))
    }


def wait_for(predicate: object, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < end, "the writer never got there"
        time.sleep(0.0005)


def outside_stage(folder: Path) -> dict[str, bytes]:
    """The folder as its reader sees it: every file but a writer's stage and set-aside."""
    return {k: v for k, v in tree(folder).items() if not k.startswith((STAGE_PREFIX, ASIDE))}


def _stopped(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "TtZX"
    except OSError:
        return True


def stop_while_staging(pid: int, out: Path, unchanged: object, alive: object) -> None:
    """Stops the writer (SIGSTOP, then waits until it is stopped) at a moment when it is
    staging and has not touched `out` yet: each try is judged while the writer stands still,
    so a busy machine cannot let it slip past staging between the look and the stop."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        os.kill(pid, signal.SIGSTOP)
        wait_for(lambda: _stopped(pid), limit=10)
        if staging(out) and unchanged():  # type: ignore[operator]
            return
        os.kill(pid, signal.SIGCONT)
        assert alive(), "the writer finished before it could be stopped"  # type: ignore[operator]
        time.sleep(0.0005)
    raise AssertionError("the writer was never seen staging")


# -- the writer itself, in a process of its own --------------------------------------------

WRITER = textwrap.dedent(
    """
    import signal
    import sys
    from pathlib import Path
    from profilegen.write import write_folder
    # Ctrl-C as from a terminal, even where the suite was started with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out, tag = Path(sys.argv[1]), sys.argv[2]
    files = {f"patches/p/f{i:04d}.py": f"{tag} {i}\\n".encode() * 64 for i in range(3000)}
    files["compose.yaml"] = tag.encode()
    try:
        write_folder(out, files, stale=["patches"])
    except KeyboardInterrupt:
        sys.exit(130)
    """
)


def staging(folder: Path) -> bool:
    """Whether a writer has begun filling a stage folder (in `folder` or beside it)."""
    for where in (folder, folder.parent):
        for stage in where.glob(f"{STAGE_PREFIX}*") if where.is_dir() else ():
            if any(stage.rglob("*.py")):
                return True
    return False


def interrupted_writer(out: Path, tag: str) -> subprocess.CompletedProcess[bytes]:
    """The writer, stopped while it stages its files, sent SIGINT, then let go."""
    before = outside_stage(out)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(out), tag], stderr=subprocess.PIPE)
    try:
        wait_for(lambda: staging(out) or proc.poll() is not None)
        stop_while_staging(
            proc.pid, out, lambda: outside_stage(out) == before, lambda: proc.poll() is None
        )
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGCONT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, b"", err)


@pytest.mark.parametrize("old", [False, True], ids=["new-folder", "over-an-old-bundle"])
def test_a_sigint_while_staging_leaves_the_old_folder_whole(tmp_path: Path, old: bool) -> None:
    out = tmp_path / "out"
    if old:
        write_folder(out, {"compose.yaml": b"old", "patches/q/old.py": b"old\n", "keep": b"mine"})
    before = tree(out)
    run = interrupted_writer(out, "new")
    assert run.returncode == 130, run.stderr.decode()
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if old else [])


def test_an_uninterrupted_writer_replaces_the_named_entries_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_folder(out, {"compose.yaml": b"old", "patches/q/old.py": b"old\n", "keep": b"mine"})
    run = subprocess.run([sys.executable, "-c", WRITER, str(out), "new"], check=False)
    assert run.returncode == 0
    files = tree(out)
    assert files["compose.yaml"] == b"new" and files["keep"] == b"mine"
    assert "patches/q/old.py" not in files and len(files) == 3000 + 2 + 2  # + patches/, p/


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt here, as in a terminal, even where the suite was
    started with it ignored (a background job of a shell)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c")
def test_signals_are_held_while_the_renames_run_then_delivered() -> None:
    got: list[str] = []
    with pytest.raises(KeyboardInterrupt), signals_held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # the handler runs between bytecodes: it had its chance
        got.append("renamed")
    assert got == ["renamed"]


# -- the real CLI ----------------------------------------------------------------------------


def many_files(root: Path, count: int) -> None:
    """tiny-fix carries `count` more vendored files."""
    folder = (root / PATCH_FILE).parent
    lines = []
    for i in range(count):
        data = f"# file {i}\n".encode()
        (folder / f"f{i:04d}.py").write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        lines.append(f"    - {{path: f{i:04d}.py, size: {len(data)}, sha256: {digest}}}\n")
    text = (root / PATCH).read_text()
    (root / PATCH).write_text(
        text.replace("    - {path: fix.patch", "".join(lines) + "    - {path: fix.patch")
    )


@pytest.fixture
def crowded(base: Path, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "root"
    shutil.copytree(base, root)
    many_files(root, 200)
    yield root


def test_render_interrupted_while_staging_writes_nothing(crowded: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    err = tmp_path / "err"
    args = ["--root", str(crowded), "render", "tiny-chat", "-o", str(out)]
    child = start_cli_process(args, tmp_path / "stdout", err, cwd=tmp_path)
    try:
        wait_for(lambda: staging(out) or not child.is_alive(), limit=60)
        pid = child.pid
        assert pid is not None, err.read_text()
        stop_while_staging(pid, out, lambda: not out.exists(), child.is_alive)
        os.kill(child.pid, signal.SIGINT)  # type: ignore[arg-type]
        os.kill(child.pid, signal.SIGCONT)  # type: ignore[arg-type]
        child.join(60)
    finally:
        child.kill()
    assert child.exitcode == 130, err.read_text()
    assert err.read_text() == "interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["err", "root", "stdout"]


# -- modes -----------------------------------------------------------------------------------


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    yield
    os.umask(old)


def modes(folder: Path) -> dict[str, int]:
    return {
        p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


@pytest.mark.usefixtures("umask_027")
def test_every_write_command_gives_the_umasks_mode(base: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(base, root)
    (root / "registry" / "profiles" / "tiny-chat.yaml").write_text(
        (root / "registry" / "profiles" / "tiny-chat.yaml")
        .read_text()
        .replace("title: Tiny-7B bf16 + EAGLE-3, TP2", "title: Tiny renamed")
    )
    for args in (
        ("render", "--all"),
        ("lock", "--offline"),
        ("new", "tiny-new", "--from", "tiny-chat"),
        ("render", "tiny-chat", "-o", str(tmp_path / "bundle")),
        ("gateway", "tiny-chat", "-o", str(tmp_path / "gateway")),
    ):
        run = invoke_in(root, *args)
        assert run.code == 0, run.text
    written = [
        root / "compose" / "tiny-chat" / "compose.yaml",
        root / "docs" / "CATALOG.md",
        root / "profilegen.lock.json",
        root / "registry" / "profiles" / "tiny-new.yaml",
    ]
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in written} == {
        p.name: 0o640 for p in written
    }
    bundle = modes(tmp_path / "bundle")
    assert set(bundle.values()) == {0o640, 0o750}, bundle
    assert bundle["."] == bundle["patches"] == bundle["patches/tiny-fix"] == 0o750
    assert modes(tmp_path / "gateway") == {
        ".": 0o750,
        "compose.yaml": 0o640,
        "config.yaml": 0o640,
        ".env.example": 0o640,
    }
