"""A published port, as Compose's `ports:` gives one: host address -> a box's container port.

The box has a network of its own (as a container does), so the engine listens on its
container port without clashing with anything on the host, and two boxes can both use 8080.
A relay runs in the box (its loopback brought up first) and accepts on a Unix socket in a
folder bound into the box; the host side accepts TCP on the published address and passes
each connection through that socket. The box's command is the relay, which starts the
container's own entrypoint (exec: it keeps the process id and signals a container's has).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

# The relay in the box: bring `lo` up, serve the socket in a child, exec the entrypoint.
RELAY = r"""import fcntl, os, socket, struct, sys, threading

def lo_up():
    with socket.socket() as s:
        ifr = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, ifr))[1]
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))

def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def splice(a, b):
    other = threading.Thread(target=pipe, args=(b, a), daemon=True)
    other.start()
    pipe(a, b)
    other.join()
    a.close()
    b.close()

def serve(port, path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(64)
    while True:
        client, _ = server.accept()
        try:
            engine = socket.create_connection(("127.0.0.1", port), timeout=5)
            engine.settimeout(None)
        except OSError:
            client.close()
            continue
        threading.Thread(target=splice, args=(client, engine), daemon=True).start()

port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
lo_up()
if os.fork() == 0:
    os.setsid()
    serve(port, path)
    os._exit(0)
os.execv(argv[0], argv)
"""
RELAY_PATH = "/run/profilegen-relay.py"
SOCKET_DIR = "/run/profilegen-publish"


def relay_argv(container_port: int, argv: list[str]) -> list[str]:
    """The box's command: the relay for `container_port`, then the container's argv."""
    return ["/usr/bin/python3", "-I", RELAY_PATH, str(container_port), SOCKET_DIR + "/sock", *argv]


def _pipe(a: socket.socket, b: socket.socket) -> None:
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        b.shutdown(socket.SHUT_WR)


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Both directions of a connection; both ends closed once both are done."""
    other = threading.Thread(target=_pipe, args=(b, a), daemon=True)
    other.start()
    _pipe(a, b)
    other.join()
    a.close()
    b.close()


class Published:
    """Accepts on (host, port) and passes every connection to the relay's socket."""

    def __init__(self, host: str, port: int, socket_dir: Path) -> None:
        self.path = socket_dir / "sock"
        self.server = socket.create_server((host, port))
        self.address = self.server.getsockname()[:2]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return  # closed
            relay = socket.socket(socket.AF_UNIX)
            try:
                relay.connect(str(self.path))
            except OSError:
                client.close()
                relay.close()
                continue
            threading.Thread(target=_splice, args=(client, relay), daemon=True).start()

    def close(self) -> None:
        self.server.close()
