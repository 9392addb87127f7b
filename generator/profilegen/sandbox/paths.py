"""Container paths as the box will see them: the links on the way are followed inside the
box's root, never on the host.

The box's root is laid out from the host's side, before the box is entered. A mount point
made there at a path that crosses a link of the host's /usr or /etc (`/usr/lib/ssl/private
-> /etc/ssl/private`, `/usr/local/cuda -> /usr/local/cuda-12.4`) would be made through that
link, on the host. So every path the set-up writes a file or binds at is first resolved as
the box will see it: its own folders and links, the host's /usr and /etc beneath, and the
binds placed before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import ProfilegenError

MAX_LINKS = 40  # as the kernel: more links on one path is a loop
# Container paths no file or bind may land in: the box's own /proc.
_OFF_LIMITS = ("/proc",)


class PlacementError(ProfilegenError):
    """A file or bind of the box whose container path cannot be placed."""


def inside(path: str, folder: str) -> bool:
    """Whether a container path is `folder` or lies in it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class BoxView:
    """The box's tree as its set-up builds it: `links` are the root's own links (container
    path -> link text), `overlaid` the top folders that show the host's (those of `host`),
    and `bind` adds a host path at a container path (a later one shadows an earlier)."""

    def __init__(
        self, links: Mapping[str, str], overlaid: tuple[str, ...], host: Path = Path("/")
    ) -> None:
        self._links = dict(links)
        self._overlaid = overlaid
        self._host = host  # where the overlaid folders come from
        self._binds: list[tuple[str, Path]] = []

    def bind(self, target: str, source: Path) -> None:
        self._binds.append((target, source))

    def resolve(self, path: str) -> str:
        """`path` with every link on the way followed inside the box (no link is left in
        it); a path in the box's /proc, or with a loop of links, cannot be placed."""
        pending = [p for p in path.split("/") if p]
        done: list[str] = []
        hops = 0
        while pending:
            name = pending.pop(0)
            if name == ".":
                continue
            if name == "..":
                if done:
                    done.pop()
                continue
            link = self._link("/" + "/".join([*done, name]))
            if link is None:
                done.append(name)
                continue
            hops += 1
            if hops > MAX_LINKS:
                raise PlacementError(f"cannot place {path} in the box: too many links on the way")
            if link.startswith("/"):
                done = []
            pending = [p for p in link.split("/") if p] + pending
        resolved = "/" + "/".join(done)
        if any(inside(resolved, off) for off in _OFF_LIMITS):
            raise PlacementError(f"cannot place {path} in the box: it lands in {resolved}")
        return resolved

    def _link(self, path: str) -> str | None:
        if path in self._links:
            return self._links[path]
        host = self._backing(path)
        if host is None or not host.is_symlink():
            return None
        return str(host.readlink())

    def _backing(self, path: str) -> Path | None:
        """The host path the box shows at `path` (None: the box's own tmpfs)."""
        for target, source in reversed(self._binds):
            if inside(path, target):
                return source / path[len(target) :].lstrip("/")
        parts = path.split("/")
        if len(parts) > 1 and parts[1] in self._overlaid:
            return self._host / path.lstrip("/")
        return None
