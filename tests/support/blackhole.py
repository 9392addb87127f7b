"""A TCP server that accepts every connection and never sends a byte: a blackholed host."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class Blackhole:
    """Use as a context manager; `port` accepts connections that never get an answer."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="blackhole", daemon=True)

    @property
    def accepted(self) -> int:
        """Connections accepted so far (each one held open, unanswered)."""
        return len(self._held)

    @property
    def port(self) -> int:
        return int(self._server.getsockname()[1])

    def _accept(self) -> None:
        self._server.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:  # the accept timeout, or the socket closed by __exit__
                continue
            self._held.append(conn)  # read nothing, answer nothing

    def __enter__(self) -> Blackhole:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._held:
            conn.close()
        self._server.close()
