"""A small in-process fake of the Hugging Face Hub HTTP API for tests and benchmarks."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

# Route names used by fault injection and the request log.
ROUTES = (
    "model_info",
    "paths_info",
    "tree",
    "resolve_head",
    "resolve_get",
    "agent_harnesses",
    "other",
)

_LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {size}\n"


def git_blob_oid(content: bytes) -> str:
    """Git object id of a blob, as the Hub reports it for non-LFS files."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass(frozen=True)
class FakeFile:
    """One file in a commit; LFS files report their sha256 like the real Hub.

    ``reported_size`` makes the metadata claim a size the content does not have (for
    checkpoint-sized numbers without checkpoint-sized memory); such files cannot be downloaded.
    """

    content: bytes
    lfs: bool = False
    reported_size: int | None = None

    @property
    def size(self) -> int:
        return len(self.content) if self.reported_size is None else self.reported_size

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def pointer(self) -> bytes:
        return _LFS_POINTER.format(sha=self.sha256, size=self.size).encode()

    @property
    def blob_id(self) -> str:
        # The git blob of an LFS file is its pointer file, not the payload.
        return git_blob_oid(self.pointer if self.lfs else self.content)

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.blob_id

    def sibling(self, path: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"rfilename": path, "size": self.size, "blobId": self.blob_id}
        if self.lfs:
            entry["lfs"] = {
                "sha256": self.sha256,
                "size": self.size,
                "pointerSize": len(self.pointer),
            }
        return entry

    def tree_entry(self, path: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "type": "file",
            "path": path,
            "size": self.size,
            "oid": self.blob_id,
        }
        if self.lfs:
            entry["lfs"] = {"oid": self.sha256, "size": self.size, "pointerSize": len(self.pointer)}
        return entry


FileSpec = bytes | FakeFile


@dataclass
class FakeRepo:
    """A model repo: commits (sha -> files), refs (branch/tag -> sha), access rules."""

    repo_id: str
    commits: dict[str, dict[str, FakeFile]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    gated: str | bool = False
    private: bool = False
    tokens: frozenset[str] = frozenset()

    @property
    def head(self) -> str:
        return self.refs["main"]

    def commit(self, files: Mapping[str, FileSpec], *, ref: str = "main") -> str:
        """Add a commit with exactly ``files`` and point ``ref`` at it; returns its sha."""
        sha = secrets.token_hex(20)
        self.commits[sha] = {
            path: spec if isinstance(spec, FakeFile) else FakeFile(spec)
            for path, spec in files.items()
        }
        self.refs[ref] = sha
        return sha

    def resolve(self, revision: str) -> str | None:
        if revision in self.refs:
            return self.refs[revision]
        return revision if revision in self.commits else None


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake Hub saw it."""

    method: str
    path: str
    query: str
    route: str
    repo: str | None
    status: int
    authorization: str | None
    range: str | None = None  # the Range header of a ranged GET
    sent: int = 0  # body bytes sent


@dataclass
class _Fault:
    statuses: list[int]
    retry_after: str | None
    repo: str | None


@dataclass
class _Cut:
    repo: str
    filename: str
    after: int
    times: int


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Benchmarks open dozens of connections at once; the default backlog of 5 drops some.
    request_queue_size = 256
    hub: FakeHub

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (its deadline passed, it exited) is expected."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeHub:
    """Threaded HTTP fake of the Hub; use as a context manager, ``url`` is the endpoint."""

    def __init__(self, *, latency: float = 0.0, page_size: int | None = None) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.latency = latency  # seconds slept before answering every request
        self.repo_latency: dict[str, float] = {}  # extra seconds for requests about one repo
        self.page_size = page_size  # tree listing page size; None = one page
        self.stall_routes: set[str] = set()  # routes that read the request and never answer
        # routes whose answer goes out one byte every so many seconds (never a read timeout)
        self.trickle_routes: dict[str, float] = {}
        # routes whose JSON answer is rewritten first: a Hub that lies
        self.tampered: dict[str, Callable[[Any], Any]] = {}
        self._faults: dict[str, list[_Fault]] = {}
        self._cuts: list[_Cut] = []
        self._log: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeHub:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.hub = self
        self._server = server
        self._release.clear()
        # A short poll interval keeps stop() (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.02,), name="fakehub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # wake stalled handlers so their threads can finish
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeHub is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- configuration -------------------------------------------------------------------------

    def add_repo(
        self,
        repo_id: str,
        files: Mapping[str, FileSpec],
        *,
        lfs: Iterable[str] = (),
        gated: str | bool = False,
        private: bool = False,
        tokens: Iterable[str] = (),
        refs: Iterable[str] = (),
    ) -> FakeRepo:
        """Create ``repo_id`` with one commit on main (also reachable as each name in refs).

        ``lfs`` names files stored in LFS; ``tokens`` are the bearer tokens that may read a
        gated or private repo.
        """
        lfs_set = set(lfs)
        specs = {
            path: (spec if isinstance(spec, FakeFile) else FakeFile(spec, lfs=path in lfs_set))
            for path, spec in files.items()
        }
        repo = FakeRepo(repo_id, gated=gated, private=private, tokens=frozenset(tokens))
        sha = repo.commit(specs)
        for ref in refs:
            repo.refs[ref] = sha
        with self._lock:
            self.repos[repo_id] = repo
        return repo

    def fail(
        self,
        route: str,
        statuses: Iterable[int],
        *,
        retry_after: float | str | None = None,
        repo: str | None = None,
    ) -> None:
        """Answer the next requests on ``route`` (optionally for one repo) with ``statuses``."""
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}")
        fault = _Fault(list(statuses), None if retry_after is None else str(retry_after), repo)
        with self._lock:
            self._faults.setdefault(route, []).append(fault)

    def cut(self, repo: str, filename: str, *, after: int, times: int = 1) -> None:
        """The next `times` downloads of one file send `after` bytes of the body (announcing
        all of it) and then close the connection, as a dropped link does."""
        with self._lock:
            self._cuts.append(_Cut(repo, filename, after, times))

    def _take_cut(self, repo: str, filename: str) -> int | None:
        with self._lock:
            for cut in self._cuts:
                if (cut.repo, cut.filename) == (repo, filename) and cut.times > 0:
                    cut.times -= 1
                    return cut.after
        return None

    def stall(self, *routes: str) -> None:
        """Accept requests on ``routes`` and never answer them (until the hub stops)."""
        self.stall_routes.update(routes)

    def trickle(self, *routes: str, every: float = 0.5) -> None:
        """Answer ``routes`` one byte every ``every`` seconds: each read of the client gets a
        byte well within its timeout, so only an overall deadline ends the request."""
        self.trickle_routes.update(dict.fromkeys(routes, every))

    def tamper(self, route: str, rewrite: Callable[[Any], Any]) -> None:
        """Answer ``route`` with ``rewrite(payload)`` instead of its JSON payload."""
        self.tampered[route] = rewrite

    # -- request log ---------------------------------------------------------------------------

    @property
    def log(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    def requests(
        self, route: str | None = None, *, repo: str | None = None, method: str | None = None
    ) -> list[RecordedRequest]:
        return [
            r
            for r in self.log
            if (route is None or r.route == route)
            and (repo is None or r.repo == repo)
            and (method is None or r.method == method)
        ]

    def count(self, route: str | None = None, *, repo: str | None = None) -> int:
        return len(self.requests(route, repo=repo))

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    # -- internals used by the handler ---------------------------------------------------------

    def _record(self, entry: RecordedRequest) -> None:
        with self._lock:
            self._log.append(entry)

    def _take_fault(self, route: str, repo: str | None) -> tuple[int, str | None] | None:
        with self._lock:
            for fault in self._faults.get(route, []):
                if fault.statuses and fault.repo in (None, repo):
                    return fault.statuses.pop(0), fault.retry_after
        return None

    def _wait_stalled(self) -> None:
        self._release.wait()


@dataclass
class _Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None  # bytes of the body sent before the connection is dropped


def _json(status: int, payload: Any, **headers: str) -> _Reply:
    return _Reply(
        status, json.dumps(payload).encode(), {"Content-Type": "application/json", **headers}
    )


def _error(status: int, message: str, code: str | None = None) -> _Reply:
    headers = {"X-Error-Code": code} if code else {}
    return _json(status, {"error": message}, **headers)


_API_MODEL = re.compile(
    r"^/api/models/([^/]+)/([^/]+)(?:/(revision|paths-info|tree)/([^/]+)(/.*)?)?$"
)
_RESOLVE = re.compile(r"^/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real Hub
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK
    # adds ~40 ms to every response.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Keep test output quiet."""

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    # -- dispatch ------------------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        hub = self.server.hub
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        route, repo_id = _classify(method, split.path)
        delay = hub.latency + hub.repo_latency.get(repo_id or "", 0.0)
        if delay:
            time.sleep(delay)
        if route in hub.stall_routes:
            hub._wait_stalled()
            self.close_connection = True
            return
        fault = hub._take_fault(route, repo_id)
        if fault is not None:
            status, retry_after = fault
            reply = _error(status, f"injected {status}")
            if retry_after is not None:
                reply.headers["Retry-After"] = retry_after
        else:
            reply = self._route(hub, method, route, split.path, split.query, body)
            if route in hub.tampered and reply.status == 200:
                reply.body = json.dumps(hub.tampered[route](json.loads(reply.body))).encode()
        hub._record(
            RecordedRequest(
                method=method,
                path=split.path,
                query=split.query,
                route=route,
                repo=repo_id,
                status=reply.status,
                authorization=self.headers.get("Authorization"),
                range=self.headers.get("Range"),
                sent=0 if method == "HEAD" else len(reply.body[: reply.cut_after]),
            )
        )
        self._send(method, reply)

    def _send(self, method: str, reply: _Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if "Content-Length" not in reply.headers:
            self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        every = self.server.hub.trickle_routes.get(_classify(method, urlsplit(self.path).path)[0])
        if method != "HEAD" and reply.body and every:
            for i in range(len(reply.body)):
                self.wfile.write(reply.body[i : i + 1])
                self.wfile.flush()
                if self.server.hub._release.wait(every):
                    return  # the hub is stopping
        elif method != "HEAD" and reply.body:
            self.wfile.write(reply.body[: reply.cut_after])
        if reply.cut_after is not None:
            self.wfile.flush()
            self.close_connection = True

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None

    def _route(
        self, hub: FakeHub, method: str, route: str, path: str, query: str, body: bytes
    ) -> _Reply:
        if route == "agent_harnesses":
            return _error(404, "not served by the fake hub")
        if route == "other":
            return _error(404, f"no route for {method} {path}")
        if route == "resolve_head" or route == "resolve_get":
            return self._resolve(hub, method, path)
        return self._api(hub, path, query, body)

    # -- access control ------------------------------------------------------------------------

    def _repo_or_error(self, hub: FakeHub, repo_id: str) -> FakeRepo | _Reply:
        repo = hub.repos.get(repo_id)
        token = self._token()
        if repo is None or (repo.private and token not in repo.tokens):
            # The Hub answers 401 for anonymous callers and 404 otherwise; both say RepoNotFound.
            return _error(401 if token is None else 404, "Repository not found", "RepoNotFound")
        return repo

    def _content_access(self, repo: FakeRepo) -> _Reply | None:
        if not repo.gated:
            return None
        token = self._token()
        if token is None:
            return _error(401, "Access to this model is restricted", "GatedRepo")
        if token not in repo.tokens:
            return _error(403, "Access to this model is restricted", "GatedRepo")
        return None

    # -- API routes ----------------------------------------------------------------------------

    def _api(self, hub: FakeHub, path: str, query: str, body: bytes) -> _Reply:
        match = _API_MODEL.match(path)
        if match is None:
            return _error(404, "bad path")
        ns, name, kind, raw_rev, sub = match.groups()
        repo = self._repo_or_error(hub, f"{unquote(ns)}/{unquote(name)}")
        if isinstance(repo, _Reply):
            return repo
        revision = unquote(raw_rev) if raw_rev else "main"
        sha = repo.resolve(revision)
        if sha is None:
            return _error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        files = repo.commits[sha]
        if kind is None or kind == "revision":
            blobs = parse_qs(query).get("blobs", ["false"])[0].lower() == "true"
            return _json(200, _model_info(repo, sha, files, blobs=blobs))
        if kind == "paths-info":
            wanted = parse_qs(body.decode()).get("paths", [])
            return _json(200, [files[p].tree_entry(p) for p in wanted if p in files])
        return self._tree(hub, path, query, files, unquote(sub or "").strip("/"))

    def _tree(
        self, hub: FakeHub, path: str, query: str, files: dict[str, FakeFile], prefix: str
    ) -> _Reply:
        params = parse_qs(query)
        recursive = params.get("recursive", ["false"])[0].lower() == "true"
        entries = _tree_entries(files, prefix, recursive=recursive)
        if prefix and not entries:
            return _error(404, f"{prefix} does not exist", "EntryNotFound")
        start = int(params.get("cursor", ["0"])[0])
        if hub.page_size is None:
            return _json(200, entries[start:])
        end = start + hub.page_size
        headers: dict[str, str] = {}
        if end < len(entries):
            next_query = f"recursive={str(recursive).lower()}&expand=false&cursor={end}"
            headers["Link"] = f'<{hub.url}{path}?{next_query}>; rel="next"'
        return _json(200, entries[start:end], **headers)

    # -- file routes ---------------------------------------------------------------------------

    def _resolve(self, hub: FakeHub, method: str, path: str) -> _Reply:
        match = _RESOLVE.match(path)
        if match is None:
            return _error(404, "bad path")
        ns, name, raw_rev, raw_file = match.groups()
        repo = self._repo_or_error(hub, f"{unquote(ns)}/{unquote(name)}")
        if isinstance(repo, _Reply):
            return repo
        denied = self._content_access(repo)
        if denied is not None:
            return denied
        revision = unquote(raw_rev)
        sha = repo.resolve(revision)
        if sha is None:
            return _error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        filename = unquote(raw_file)
        item = repo.commits[sha].get(filename)
        if item is None:
            return _error(404, f"Entry not found: {filename}", "EntryNotFound")
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{item.etag}"',
            "Content-Length": str(item.size),
            "Content-Type": "application/octet-stream",
            "Accept-Ranges": "bytes",
        }
        wanted = self.headers.get("Range")
        reply = (
            _ranged(item, wanted, headers)
            if method == "GET" and wanted
            else _Reply(200, item.content if method == "GET" else b"", headers)
        )
        if method == "GET":
            reply.cut_after = hub._take_cut(repo.repo_id, filename)
        return reply


_RANGE = re.compile(r"^bytes=([0-9]+)-([0-9]*)$")


def _ranged(item: FakeFile, wanted: str, headers: dict[str, str]) -> _Reply:
    """A single byte range (RFC 9110), as the Hub's storage serves it: 206 or 416."""
    match = _RANGE.match(wanted.strip())
    size = len(item.content)
    if match is None:
        return _Reply(200, item.content, headers)  # a range we do not parse: the whole file
    start = int(match.group(1))
    end = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
    if start >= size or end < start:
        return _Reply(
            416, b"", {**headers, "Content-Range": f"bytes */{size}", "Content-Length": "0"}
        )
    body = item.content[start : end + 1]
    return _Reply(
        206,
        body,
        {
            **headers,
            "Content-Range": f"bytes {start}-{end}/{size}",
            "Content-Length": str(len(body)),
        },
    )


def _classify(method: str, path: str) -> tuple[str, str | None]:
    """Route name and repo id of a request path (for faults and the log)."""
    if path == "/api/agent-harnesses":
        return "agent_harnesses", None
    api = _API_MODEL.match(path)
    if api is not None:
        ns, name, kind = api.group(1), api.group(2), api.group(3)
        repo_id = f"{unquote(ns)}/{unquote(name)}"
        if kind is None or kind == "revision":
            return ("model_info" if method == "GET" else "other"), repo_id
        if kind == "paths-info":
            return ("paths_info" if method == "POST" else "other"), repo_id
        return ("tree" if method == "GET" else "other"), repo_id
    resolve = _RESOLVE.match(path)
    if resolve is not None:
        repo_id = f"{unquote(resolve.group(1))}/{unquote(resolve.group(2))}"
        if method == "HEAD":
            return "resolve_head", repo_id
        return ("resolve_get" if method == "GET" else "other"), repo_id
    return "other", None


def _model_info(
    repo: FakeRepo, sha: str, files: dict[str, FakeFile], *, blobs: bool
) -> dict[str, Any]:
    siblings = [
        item.sibling(path) if blobs else {"rfilename": path} for path, item in sorted(files.items())
    ]
    return {
        "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "modelId": repo.repo_id,
        "sha": sha,
        "private": repo.private,
        "gated": repo.gated,
        "disabled": False,
        "downloads": 0,
        "likes": 0,
        "tags": [],
        "siblings": siblings,
        "lastModified": "2025-01-01T00:00:00.000Z",
        "createdAt": "2025-01-01T00:00:00.000Z",
    }


def _tree_entries(
    files: dict[str, FakeFile], prefix: str, *, recursive: bool
) -> list[dict[str, Any]]:
    base = f"{prefix}/" if prefix else ""
    entries: dict[str, dict[str, Any]] = {}
    for path, item in sorted(files.items()):
        if not path.startswith(base):
            continue
        rest = path[len(base) :]
        parts = rest.split("/")
        # Folders on the way down are listed too, as the Hub does.
        for depth in range(1, len(parts)):
            if not recursive and depth > 1:
                break
            folder = base + "/".join(parts[:depth])
            entries.setdefault(
                folder,
                {
                    "type": "directory",
                    "path": folder,
                    "size": 0,
                    "oid": git_blob_oid(folder.encode()),
                },
            )
        if recursive or len(parts) == 1:
            entries[path] = item.tree_entry(path)
    return list(entries.values())
