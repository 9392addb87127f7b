"""A serving engine's OpenAI-compatible API, as `bench` talks to it: what it serves, and one
streamed chat completion timed from the first byte sent to the last token received."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ..errors import EXIT_UNREACHABLE, ProfilegenError


class EngineUnreachable(ProfilegenError):
    """The server did not answer, or answered with something other than its API."""

    exit_code = EXIT_UNREACHABLE


@dataclass(frozen=True)
class Endpoint:
    url: str  # scheme://host:port, no trailing slash
    key: str | None = None  # sent as a bearer token
    timeout: float = 300.0  # seconds per request

    @classmethod
    def parse(cls, url: str, key: str | None, timeout: float) -> Endpoint:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EngineUnreachable(f"{url!r} is not an http(s) URL of a server")
        return cls(f"{parts.scheme}://{parts.netloc}", key, timeout)

    def _connection(self) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        return kind(parts.hostname or "", parts.port, timeout=self.timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        return headers

    def get(self, path: str) -> dict[str, Any] | None:
        """The JSON object at `path`; None when the server has no such route (404)."""
        conn = self._connection()
        try:
            conn.request("GET", path, headers=self._headers())
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise EngineUnreachable(f"{self.url}{path}: no answer ({exc})") from None
        finally:
            conn.close()
        if response.status == 404:
            return None
        if response.status != 200:
            raise EngineUnreachable(f"{self.url}{path}: HTTP {response.status} {_brief(body)}")
        try:
            data = json.loads(body)
        except ValueError:
            raise EngineUnreachable(f"{self.url}{path}: not JSON ({_brief(body)})") from None
        if not isinstance(data, dict):
            raise EngineUnreachable(f"{self.url}{path}: not a JSON object")
        return data

    def stream_chat(self, body: dict[str, Any]) -> Streamed:
        """One streamed chat completion: wall time, time to the first token, token counts."""
        request = {**body, "stream": True, "stream_options": {"include_usage": True}}
        conn = self._connection()
        try:
            sent = time.perf_counter()
            conn.request("POST", "/v1/chat/completions", json.dumps(request), self._headers())
            response = conn.getresponse()
            if response.status != 200:
                raise EngineUnreachable(
                    f"{self.url}/v1/chat/completions: HTTP {response.status} "
                    f"{_brief(response.read())}"
                )
            return _read_stream(response, sent)
        except (OSError, http.client.HTTPException) as exc:
            raise EngineUnreachable(f"{self.url}/v1/chat/completions: no answer ({exc})") from None
        finally:
            conn.close()


@dataclass(frozen=True)
class Streamed:
    wall_s: float
    ttft_s: float
    completion_tokens: int
    prompt_tokens: int | None
    # Whether the token counts came from the server's usage (else: content chunks counted).
    counted_by_server: bool


def _read_stream(response: http.client.HTTPResponse, sent: float) -> Streamed:
    first: float | None = None
    chunks = 0
    usage: dict[str, Any] = {}
    for raw in response:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            event = json.loads(data)
        except ValueError:
            continue
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content") or delta.get("reasoning_content"):
                chunks += 1
                if first is None:
                    first = time.perf_counter()
    done = time.perf_counter()
    tokens = usage.get("completion_tokens")
    return Streamed(
        wall_s=done - sent,
        ttft_s=(first if first is not None else done) - sent,
        completion_tokens=int(tokens) if isinstance(tokens, int) else chunks,
        prompt_tokens=usage.get("prompt_tokens")
        if isinstance(usage.get("prompt_tokens"), int)
        else None,
        counted_by_server=isinstance(tokens, int),
    )


def _brief(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return text[:200]
