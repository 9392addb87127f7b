"""A stub engine that takes the time a real one would: a pause per prompt token before the
first token, then one per streamed token (the plain stub answers in microseconds, faster than
any card could)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from tests.support.openai_stub import StubEngine


class PacedEngine(StubEngine):
    def __init__(
        self, *args: Any, token_s: float = 0.02, prefill_tps: float = 5000.0, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.token_s = token_s
        self.prefill_tps = prefill_tps
        self.headers: list[str | None] = []  # each call's Authorization

    def get(self, path: str, authorization: str | None) -> tuple[int, dict[str, Any]]:
        self.headers.append(authorization)
        return super().get(path, authorization)

    def post(
        self, path: str, authorization: str | None, request: Any
    ) -> tuple[int, dict[str, Any]]:
        self.headers.append(authorization)
        return super().post(path, authorization, request)

    def events(self, request: dict[str, Any], model: str) -> Iterator[bytes]:  # type: ignore[override]
        events = super().events(request, model)
        words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))

        def paced() -> Iterator[bytes]:
            time.sleep(words / self.prefill_tps)
            for event in events:
                yield event
                time.sleep(self.token_s)

        return paced()
