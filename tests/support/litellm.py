"""The real LiteLLM proxy (a dev dependency), started on a generated config.yaml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.ready import wait_ready

READY_WITHIN = 90.0  # seconds: the proxy imports for several seconds on a slow machine


def proxy_binary() -> str | None:
    beside = Path(sys.executable).parent / "litellm"
    return str(beside) if beside.is_file() else shutil.which("litellm")


def proxy_env(home: Path, engine_key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "OPENAI_"))}
    # The packaged price list, never a download; no key asked of clients.
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HOME": str(home), "NO_COLOR": "1"})
    if engine_key is not None:
        env["ENGINE_API_KEY"] = engine_key  # what the gateway's .env holds
    return env


def start_proxy(
    config: Path, port: int, work: Path, *, engine_key: str | None
) -> subprocess.Popen[bytes]:
    """Starts the proxy on 127.0.0.1:port; its output goes to work/proxy.log."""
    binary = proxy_binary()
    if binary is None:
        raise FileNotFoundError("the LiteLLM proxy is not installed (pip install -e '.[dev]')")
    work.mkdir(parents=True, exist_ok=True)
    argv = [binary, "--config", str(config), "--port", str(port)]
    argv += ["--host", "127.0.0.1", "--num_workers", "1"]
    with (work / "proxy.log").open("wb") as sink:
        return subprocess.Popen(
            argv,
            cwd=work,
            env=proxy_env(work, engine_key),
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def wait_proxy(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    wait_ready(proc, f"{url}/health/readiness", log, READY_WITHIN, "the proxy")
