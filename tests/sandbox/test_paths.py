"""Files and binds land where the box will see their paths: the links on the way are
followed inside the box, never through the host (a mount point made through a host link of
/usr or /etc would be made on the host)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from profilegen.sandbox import Bind, Box, PlacementError, available, run
from profilegen.sandbox.paths import BoxView


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A host's /usr and /etc with the kinds of links real ones have."""
    root = tmp_path / "host"
    (root / "etc" / "ssl" / "private").mkdir(parents=True)
    (root / "usr" / "lib" / "ssl").mkdir(parents=True)
    (root / "usr" / "local" / "cuda-12.4").mkdir(parents=True)
    (root / "usr" / "lib" / "ssl" / "private").symlink_to("/etc/ssl/private")
    (root / "usr" / "local" / "cuda").symlink_to("cuda-12.4")
    (root / "usr" / "local" / "up").symlink_to("../lib")
    (root / "usr" / "local" / "loop").symlink_to("/usr/local/loop")
    return root


def view(host: Path) -> BoxView:
    return BoxView({"/bin": "usr/bin", "/dev/fd": "/proc/self/fd"}, ("usr", "etc"), host)


@pytest.mark.parametrize(
    ("path", "resolved"),
    [
        ("/usr/lib/ssl/private/key", "/etc/ssl/private/key"),
        ("/usr/local/cuda/lib64/x.so", "/usr/local/cuda-12.4/lib64/x.so"),
        ("/usr/local/up/ssl", "/usr/lib/ssl"),
        ("/bin/vllm", "/usr/bin/vllm"),
        ("/profilegen/entrypoint.sh", "/profilegen/entrypoint.sh"),
    ],
)
def test_links_are_followed_inside_the_box(host: Path, path: str, resolved: str) -> None:
    assert view(host).resolve(path) == resolved


def test_a_link_inside_a_bind_is_read_from_the_bound_folder(host: Path, tmp_path: Path) -> None:
    bound = tmp_path / "pkg"
    bound.mkdir()
    (bound / "ops").symlink_to("/etc/ssl")
    box = view(host)
    box.bind("/opt/pkg", bound)
    assert box.resolve("/opt/pkg/ops/private") == "/etc/ssl/private"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "/usr/local/loop/x",
            "cannot place /usr/local/loop/x in the box: too many links on the way",
        ),
        ("/dev/fd/3", "cannot place /dev/fd/3 in the box: it lands in /proc/self/fd/3"),
        ("/proc/1/root", "cannot place /proc/1/root in the box: it lands in /proc/1/root"),
    ],
)
def test_paths_that_cannot_be_placed_say_why(host: Path, path: str, message: str) -> None:
    with pytest.raises(PlacementError) as caught:
        view(host).resolve(path)
    assert str(caught.value) == message


def _host_link_to_a_folder() -> tuple[str, Path] | None:
    """A link of this host's /usr or /etc to a folder, by an absolute path."""
    for top in ("/usr", "/etc"):
        for folder, dirs, _files in os.walk(top):
            for name in dirs:
                path = Path(folder, name)
                if path.is_symlink() and str(path.readlink()).startswith("/") and path.is_dir():
                    return str(path), path.resolve()
            if folder.count("/") > 3:
                dirs.clear()
    return None


@pytest.mark.skipif(available() is not None, reason="no namespaces on this machine")
def test_a_bind_through_a_host_link_writes_nothing_on_the_host(tmp_path: Path) -> None:
    found = _host_link_to_a_folder()
    if found is None:
        pytest.skip("this host's /usr and /etc have no absolute link to a folder")
    link, real = found
    name = f"profilegen-test-{os.getpid()}"
    source = tmp_path / "file"
    source.write_text("bound\n")
    try:
        box = Box(binds=(Bind(source, f"{link}/{name}"),))
        done = run(box, ["/bin/cat", f"{link}/{name}"], timeout=20)
        assert (done.code, done.stdout) == (0, b"bound\n")
        assert not (real / name).exists()
    finally:
        (real / name).unlink(missing_ok=True)  # what the set-up would have left on the host
