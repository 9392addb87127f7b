"""A stub OpenAI-compatible engine: a real HTTP server on 127.0.0.1 that answers to exactly
the model names it is given (as vLLM does: any other name is a 404) and records every call.

Asked to stream, it streams as the engines do (server-sent events, one token a chunk, usage
last when asked for); given a context it reports it as vLLM does (`max_model_len` in
`/v1/models`), or as llama-server does (`/props`) when `props` is set."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class StubEngine:
    """Use as a context manager; `port` serves /v1/models and /v1/chat/completions."""

    def __init__(
        self,
        label: str,
        names: list[str],
        key: str | None = None,
        *,
        context: int | None = None,
        props: bool = False,
        tokens: int = 24,
    ) -> None:
        self.label = label
        self.names = list(names)
        self.key = key  # set: every call must carry `Authorization: Bearer <key>` (else 401)
        self.context = context
        self.props = props
        self.tokens = tokens  # the most tokens an answer streams
        self.requests: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str | None]] = []  # (path, model asked for)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # Polled every 20 ms for shutdown (the default half second is a wait in every test).
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def asked_for(self) -> list[str | None]:
        with self._lock:
            return [model for path, model in self.calls if path.endswith("/chat/completions")]

    def _record(self, path: str, model: str | None) -> None:
        with self._lock:
            self.calls.append((path, model))

    def models(self) -> dict[str, Any]:
        data: list[dict[str, Any]] = [
            {"id": n, "object": "model", "owned_by": self.label} for n in self.names
        ]
        if self.context and not self.props:
            for model in data:
                model["max_model_len"] = self.context
        return {"object": "list", "data": data}

    def events(self, request: dict[str, Any], model: str) -> list[bytes]:
        """A streamed answer: one token a chunk, a finish, the usage when asked for."""
        count = min(int(request.get("max_tokens") or self.tokens), self.tokens)
        words = " ".join(str(m.get("content", "")) for m in request.get("messages", []))
        chunks: list[dict[str, Any]] = []
        for i in range(count):
            delta = {"content": f"w{i} "} if i else {"role": "assistant", "content": "w0 "}
            chunks.append({"model": model, "choices": [{"index": 0, "delta": delta}]})
        chunks.append(
            {"model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
        )
        if (request.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": len(words.split()), "completion_tokens": count}
            chunks.append({"model": model, "choices": [], "usage": usage})
        return [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [
            b"data: [DONE]\n\n"
        ]

    def _refused(self, authorization: str | None) -> bool:
        return bool(self.key) and authorization != f"Bearer {self.key}"

    def get(self, path: str, authorization: str | None) -> tuple[int, dict[str, Any]]:
        if self._refused(authorization):
            return 401, {"error": {"message": "invalid API key", "code": 401}}
        if path.rstrip("/").endswith("/v1/models"):
            return 200, self.models()
        if path.rstrip("/") == "/props" and self.props:
            return 200, {"default_generation_settings": {"n_ctx": self.context or 4096}}
        return 404, {"error": {"message": f"no route {path}", "code": 404}}

    def post(
        self, path: str, authorization: str | None, request: Any
    ) -> tuple[int, dict[str, Any]]:
        """The status and body of a POST (a streamed answer is sent by the handler)."""
        model = request.get("model") if isinstance(request, dict) else None
        if self._refused(authorization):
            return 401, {"error": {"message": "invalid API key", "code": 401}}
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}", "code": 404}}
        if model not in self.names:
            message = f"The model `{model}` does not exist."
            return 404, {"error": {"message": message, "type": "NotFoundError"}}
        if request.get("stream"):
            with self._lock:
                self.requests.append(request)
        return 200, _completion(self.label, str(model))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # quiet: the calls are recorded instead

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                stub._record(self.path, None)
                self._send(*stub.get(self.path, self.headers.get("Authorization")))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    request = {}
                model = request.get("model") if isinstance(request, dict) else None
                stub._record(self.path, model)
                status, body = stub.post(self.path, self.headers.get("Authorization"), request)
                if status == 200 and isinstance(request, dict) and request.get("stream"):
                    self._stream(request, str(model))
                else:
                    self._send(status, body)

            def _stream(self, request: dict[str, Any], model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for event in stub.events(request, model):
                        self.wfile.write(event)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client left mid-stream (a test of timeouts or cut streams)

        return Handler

    def __enter__(self) -> StubEngine:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _completion(label: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"{label} answered {model}"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
