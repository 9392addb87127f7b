"""A serving engine's OpenAI-compatible API, as `bench` talks to it: what it serves, and one
streamed chat completion timed from the first byte sent to the last token received.

A URL's credentials (user:password@, a query's key or token) are used, never kept: the
endpoint's `url` is scheme://host:port and nothing else. `timeout` bounds each request whole
(connecting, the answer's every byte), not each read. A malformed answer is an error that
says what the server sent, never a guess."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ..errors import EXIT_UNREACHABLE, ProfilegenError, UsageError, one_line
from .stream import Streamed, StreamReader

__all__ = ["EngineUnreachable", "Endpoint", "Streamed", "redact_url"]

# The longest line (an event) or body read from a server.
MAX_LINE = 1 << 20
MAX_BODY = 16 << 20


class EngineUnreachable(ProfilegenError):
    """The server did not answer, or answered with something other than its API."""

    exit_code = EXIT_UNREACHABLE


class _TimedOut(Exception):
    pass


def _netloc(parts: urllib.parse.SplitResult) -> str:
    """host:port without the user information; an IPv6 host in brackets."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    return f"{host}:{port}" if port is not None else host


def redact_url(url: str) -> str:
    """The URL as it may be printed or stored: scheme://host:port, no credentials, path or
    query (a token in either stays out); a text that is no URL is named, not echoed."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            return f"{parts.scheme}://{_netloc(parts)}"
    except ValueError:
        pass
    return "(a URL that cannot be read)"


@dataclass(frozen=True)
class Endpoint:
    url: str  # scheme://host:port, no trailing slash, no credentials
    key: str | None = None  # sent as a bearer token
    timeout: float = 300.0  # seconds per request, all of it
    basic: str | None = None  # user:password from the URL, sent as basic auth (never shown)

    @classmethod
    def parse(cls, url: str, key: str | None, timeout: float) -> Endpoint:
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise EngineUnreachable(
                f"{redact_url(url)} is not an http(s) URL of a server ({exc})"
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EngineUnreachable(f"{redact_url(url)} is not an http(s) URL of a server")
        if any(c.isspace() or not c.isprintable() for c in parts.hostname):
            raise EngineUnreachable(  # http.client refuses such a host only when it connects
                f"{redact_url(url)} is not an http(s) URL of a server (a space or control "
                "character in its host)"
            )
        if ":" not in parts.hostname and not _resolvable(parts.hostname):
            raise EngineUnreachable(
                f"{redact_url(url)} is not an http(s) URL of a server (its host has an empty "
                "label or one longer than 63 characters)"
            )
        del port  # read above only to refuse a port that is no number
        if key is not None and not (key.isascii() and key.isprintable()):
            raise UsageError(  # a header cannot carry it (a line break would start another)
                "API_KEY holds a character that is not printable ASCII (a line break?): an "
                "HTTP header cannot carry it (the key is not shown)"
            )
        basic = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            basic = f"{user}:{password}"
        return cls(f"{parts.scheme}://{_netloc(parts)}", key, timeout, basic)

    def _connection(self, deadline: float) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        return kind(parts.hostname or "", parts.port, timeout=_left(deadline))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        elif self.basic:
            token = base64.b64encode(self.basic.encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        return headers

    def _late(self, path: str) -> EngineUnreachable:
        return EngineUnreachable(
            f"{self.url}{path}: no complete answer within the --timeout of {self.timeout:g} s"
        )

    def _unanswered(self, path: str, exc: BaseException, deadline: float) -> EngineUnreachable:
        if time.monotonic() >= deadline:  # the socket was cut at the deadline
            return self._late(path)
        return EngineUnreachable(f"{self.url}{path}: no answer ({_brief(str(exc).encode())})")

    def get(self, path: str) -> dict[str, Any] | None:
        """The JSON object at `path`; None when the server has no such route (404)."""
        deadline = time.monotonic() + self.timeout
        conn = self._connection(deadline)
        timer = _Cut(deadline)
        try:
            conn.request("GET", path, headers=self._headers())
            timer.hold(conn.sock)
            response = conn.getresponse()
            body = _read_body(conn, response, deadline, self.url + path)
        except (_TimedOut, TimeoutError):
            raise self._late(path) from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._unanswered(path, exc, deadline) from None
        finally:
            timer.cancel()
            conn.close()
        if response.status == 404:
            return None
        if response.status != 200:
            raise EngineUnreachable(f"{self.url}{path}: HTTP {response.status} {_brief(body)}")
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            raise EngineUnreachable(f"{self.url}{path}: not JSON ({_brief(body)})") from None
        if not isinstance(data, dict):
            raise EngineUnreachable(f"{self.url}{path}: not a JSON object")
        return data

    def send(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
        """One request as it is answered: its status and body, whatever they are (a refusal
        is an answer here; only no answer at all is an error)."""
        deadline = time.monotonic() + self.timeout
        conn = self._connection(deadline)
        timer = _Cut(deadline)
        try:
            data = None if body is None else json.dumps(body)
            conn.request(method, path, data, self._headers())
            timer.hold(conn.sock)
            response = conn.getresponse()
            return response.status, _read_body(conn, response, deadline, self.url + path)
        except (_TimedOut, TimeoutError):
            raise self._late(path) from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._unanswered(path, exc, deadline) from None
        finally:
            timer.cancel()
            conn.close()

    def stream_chat(self, body: dict[str, Any], reader: StreamReader | None = None) -> Streamed:
        """One streamed chat completion: wall time, time to the first token, token counts
        (and whatever else `reader`, a StreamReader of the caller's, keeps of its events)."""
        request = {**body, "stream": True, "stream_options": {"include_usage": True}}
        path = "/v1/chat/completions"
        deadline = time.monotonic() + self.timeout
        conn = self._connection(deadline)
        timer = _Cut(deadline)
        try:
            sent = time.perf_counter()
            conn.request("POST", path, json.dumps(request), self._headers())
            timer.hold(conn.sock)
            response = conn.getresponse()
            if response.status != 200:
                raise EngineUnreachable(
                    f"{self.url}{path}: HTTP {response.status} "
                    f"{_brief(_read_body(conn, response, deadline, self.url + path))}"
                )
            reader = reader or StreamReader(f"{self.url}{path}", sent)
            reader.sent = sent
            while not reader.done:
                _settle(conn, deadline)
                raw = response.readline(MAX_LINE + 1)
                if not raw.endswith(b"\n"):
                    _left(deadline)  # a line or end the deadline cut is none of the stream's
                if not raw:
                    break
                if len(raw) > MAX_LINE:
                    raise EngineUnreachable(f"{self.url}{path}: an event longer than 1 MiB")
                reader.feed(raw)
            return reader.result()
        except (_TimedOut, TimeoutError):
            raise self._late(path) from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._unanswered(path, exc, deadline) from None
        finally:
            timer.cancel()
            conn.close()


def _resolvable(host: str) -> bool:
    """Whether a resolver can be asked for the name (the socket module encodes it with IDNA,
    which raises on an empty label or one past 63 characters)."""
    try:
        host.encode("idna")
    except UnicodeError:
        return False
    return True


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _TimedOut
    return left


class _Cut:
    """Shuts a request's socket at its deadline: a socket's timeout bounds each read only, and
    a server sending its status line or an event a byte a second would never time out. The
    socket is held once the request is sent (http.client lets go of it for an answer that
    ends with the connection); cancel when the request is done."""

    def __init__(self, deadline: float) -> None:
        self.sock: socket.socket | None = None
        self.fired = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(max(deadline - time.monotonic(), 0.0), self.cut)
        self.timer.daemon = True
        self.timer.start()

    def hold(self, sock: socket.socket | None) -> None:
        with self.lock:
            self.sock = sock
            if self.fired:
                self._shut()

    def cut(self) -> None:
        with self.lock:
            self.fired = True
            self._shut()

    def _shut(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self.timer.cancel()


def _settle(conn: http.client.HTTPConnection, deadline: float) -> None:
    """The next read may wait only for what is left of the request's time."""
    left = _left(deadline)
    if conn.sock is not None:
        conn.sock.settimeout(left)


def _read_body(
    conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float,
    where: str,
) -> bytes:  # fmt: skip
    chunks: list[bytes] = []
    size = 0
    while True:
        _settle(conn, deadline)
        chunk = response.read1(65536)
        if not chunk:
            _left(deadline)  # an end the deadline cut is no end of the answer
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY:
            raise EngineUnreachable(f"{where}: an answer larger than 16 MiB")
        chunks.append(chunk)


def _brief(body: bytes) -> str:
    return one_line(body.decode("utf-8", errors="replace"), 200)
