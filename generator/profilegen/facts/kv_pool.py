"""vLLM's own KV pool sizing, asked through a probe run by the release's Python.

`VllmPoolSizer` answers the queries of `fit/formulas/vllm_specs.py` with
`facts/probes/vllm_kv_pool.py`, run in the vLLM environment (`releases/vllm_env.py` builds
it; profilegen's own process never imports vLLM). Answers are kept in the result cache by
input: the query, the probe's code and the release; a second fit of the same settings
starts no process. Importing vLLM costs a probe run ~25 s, so queries can be collected
first (`collecting`) and answered in one run (`answer_pending`).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ..cache import Store

PROBE = Path(__file__).parent / "probes" / "vllm_kv_pool.py"
TIMEOUT_S = 600
_STORE = Store("vllm-pool", keep=4096)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class VllmPoolSizer:
    """Asks one vLLM environment's `get_kv_cache_configs`; answers kept by input."""

    def __init__(self, python: Path, version: str) -> None:
        self.python = python
        self.version = version
        self.collecting = False
        self.pending: dict[str, dict[str, Any]] = {}
        self._code = _digest(PROBE.read_bytes())
        self.runs = 0  # probe processes started (the cache saves the rest)

    def key(self, query: dict[str, Any]) -> str:
        text = json.dumps([self.version, self._code, query], sort_keys=True)
        return "pool-" + _digest(text.encode())

    def __call__(self, query: dict[str, Any]) -> dict[str, Any] | None:
        key = self.key(query)
        hit = _STORE.get_object(key)
        if isinstance(hit, dict):
            return hit
        if self.collecting:
            self.pending[key] = query
            return None
        self._run({key: query})
        found = _STORE.get_object(key)
        return found if isinstance(found, dict) else {"error": "no answer kept"}

    def answer_pending(self) -> None:
        """Answers every collected query in one probe run."""
        pending, self.pending = self.pending, {}
        if pending:
            self._run(pending)

    def _run(self, queries: dict[str, dict[str, Any]]) -> None:
        keys = list(queries)
        answers = self._probe([queries[k] for k in keys])
        by = f"vLLM {self.version}'s get_kv_cache_configs"
        for key, answer in zip(keys, answers, strict=True):
            if "error" not in answer:
                answer = {**answer, "by": by}
            _STORE.put_object(key, answer)

    def _probe(self, queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.runs += 1
        env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "TOKENIZERS_PARALLELISM": "false"}
        try:
            done = subprocess.run(
                [str(self.python), str(PROBE)],
                input=json.dumps({"queries": queries}),
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                env=env,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [{"error": f"the probe did not run: {exc}"}] * len(queries)
        try:
            answers = json.loads(done.stdout)["answers"]
        except (ValueError, KeyError, TypeError):
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return [{"error": f"the probe failed (exit {done.returncode}): {tail}"}] * len(queries)
        if not isinstance(answers, list) or len(answers) != len(queries):
            return [{"error": "the probe answered the wrong number of queries"}] * len(queries)
        return [a if isinstance(a, dict) else {"error": "not an answer"} for a in answers]
