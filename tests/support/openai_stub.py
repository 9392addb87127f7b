"""A stub OpenAI-compatible engine: a real HTTP server on 127.0.0.1 that answers to exactly
the model names it is given (as vLLM does: any other name is a 404) and records every call."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class StubEngine:
    """Use as a context manager; `port` serves /v1/models and /v1/chat/completions."""

    def __init__(self, label: str, names: list[str], key: str | None = None) -> None:
        self.label = label
        self.names = list(names)
        self.key = key  # set: every call must carry `Authorization: Bearer <key>` (else 401)
        self.calls: list[tuple[str, str | None]] = []  # (path, model asked for)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def asked_for(self) -> list[str | None]:
        with self._lock:
            return [model for path, model in self.calls if path.endswith("/chat/completions")]

    def _record(self, path: str, model: str | None) -> None:
        with self._lock:
            self.calls.append((path, model))

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
                if stub.key and self.headers.get("Authorization") != f"Bearer {stub.key}":
                    self._send(401, {"error": {"message": "invalid API key", "code": 401}})
                elif self.path.rstrip("/").endswith("/v1/models"):
                    models = [
                        {"id": n, "object": "model", "owned_by": stub.label} for n in stub.names
                    ]
                    self._send(200, {"object": "list", "data": models})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "code": 404}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    request = {}
                model = request.get("model") if isinstance(request, dict) else None
                stub._record(self.path, model)
                if stub.key and self.headers.get("Authorization") != f"Bearer {stub.key}":
                    self._send(401, {"error": {"message": "invalid API key", "code": 401}})
                elif not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "code": 404}})
                elif model not in stub.names:
                    message = f"The model `{model}` does not exist."
                    self._send(404, {"error": {"message": message, "type": "NotFoundError"}})
                else:
                    self._send(200, _completion(stub.label, str(model)))

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
