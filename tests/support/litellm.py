"""The real LiteLLM proxy (a dev dependency), started on a generated config.yaml.

Importing the proxy takes seconds of CPU, and a session starts it more than once (the gateway
test, the real-engine tier). So a session keeps one process that has imported it (the
*preloaded* proxy, as a pre-forking server does) and each start is a fork of it, running the
proxy's own command line (`litellm --config ...`) on its own port, folder, log and
environment. Where that process is not there (a test run on its own), the proxy is started
as a command.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.ready import ended, wait_ready
from tests.support.shared import SHARED

READY_WITHIN = 90.0  # seconds: the proxy imports for several seconds on a slow machine
SOCKET, PID, LOG, HOME = "litellm.sock", "litellm.pid", "litellm.log", "litellm-home"
# What the proxy reads as it is imported: set before the import, for every start alike.
IMPORT_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}


def proxy_binary() -> str | None:
    beside = Path(sys.executable).parent / "litellm"
    return str(beside) if beside.is_file() else shutil.which("litellm")


def proxy_env(home: Path, engine_key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "OPENAI_"))}
    # The packaged price list, never a download; no key asked of clients.
    env.update({**IMPORT_ENV, "HOME": str(home)})
    if engine_key is not None:
        env["ENGINE_API_KEY"] = engine_key  # what the gateway's .env holds
    return env


def start_proxy(config: Path, port: int, work: Path, *, engine_key: str | None) -> Any:
    """Starts the proxy on 127.0.0.1:port; its output goes to work/proxy.log. The handle
    answers poll(), terminate(), kill() and wait() as a Popen does."""
    binary = proxy_binary()
    if binary is None:
        raise FileNotFoundError("the LiteLLM proxy is not installed (pip install -e '.[dev]')")
    work.mkdir(parents=True, exist_ok=True)
    args = ["--config", str(config), "--port", str(port)]
    args += ["--host", "127.0.0.1", "--num_workers", "1"]
    env = proxy_env(work, engine_key)
    forked = _fork_preloaded(args, work, env)
    if forked is not None:
        return forked
    with (work / "proxy.log").open("wb") as sink:
        return subprocess.Popen(
            [binary, *args], cwd=work, env=env, stdout=sink, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


def wait_proxy(proc: Any, url: str, log: Path) -> None:
    wait_ready(proc, f"{url}/health/readiness", log, READY_WITHIN, "the proxy")


# ------------------------------------------------------------- the preloaded proxy


def start_preloaded(shared: Path) -> subprocess.Popen[bytes] | None:
    """Starts the session's preloaded proxy (returns at once; None when not installed)."""
    if proxy_binary() is None:
        return None
    (shared / HOME).mkdir(exist_ok=True)
    code = "import sys; from pathlib import Path; from tests.support.litellm import preloaded; "
    code += "preloaded(Path(sys.argv[1]))"
    env = proxy_env(shared / HOME, None)
    with (shared / LOG).open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(shared)],
            cwd=Path(__file__).resolve().parents[2], env=env, stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    (shared / PID).write_text(str(proc.pid))  # a start asked for from now on waits for it
    return proc


class Forked:
    """A proxy forked from the preloaded one: not this process's child, so its end is read
    from the exit file the preloaded process writes when it reaps it."""

    def __init__(self, pid: int, exit_file: Path) -> None:
        self.pid, self._exit_file = pid, exit_file
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        # The exit file first: once the proxy is reaped, its pid may be another process's.
        if not self._exit_file.is_file():
            if not ended(self.pid):
                return None
            time.sleep(0.05)  # a zombie: the preloaded process writes the file as it reaps it
        self.returncode = self._exit_code()
        return self.returncode

    def _exit_code(self) -> int:
        """What the preloaded process recorded; SIGKILL's code when it ended first."""
        with contextlib.suppress(OSError, ValueError):
            return int(self._exit_file.read_text())
        return -signal.SIGKILL

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"proxy {self.pid}", timeout or 0)
            time.sleep(0.05)
        return self.returncode or 0

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)


def _fork_preloaded(args: list[str], work: Path, env: dict[str, str]) -> Forked | None:
    """A fork of the session's preloaded proxy, or None when there is none to ask."""
    shared = os.environ.get(SHARED)
    where = Path(shared) / SOCKET if shared else None
    if where is None or not _waited_for(where):
        return None
    exit_file = work / "proxy.exit"
    exit_file.unlink(missing_ok=True)
    request = {"args": args, "cwd": str(work), "env": env, "exit": str(exit_file)}
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        try:
            sock.connect(str(where))
            sock.sendall(json.dumps(request).encode() + b"\n")
            answer = sock.makefile("rb").readline()
        except OSError:
            return None
    return Forked(int(answer), exit_file) if answer.strip().isdigit() else None


def _waited_for(where: Path) -> bool:
    """Whether the preloaded proxy listens (it imports for seconds after the session starts;
    a failed one leaves its pid file without a socket)."""
    pid_file = where.with_name(PID)
    deadline = time.monotonic() + READY_WITHIN
    while not where.exists():
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            return False
        if ended(pid) or time.monotonic() > deadline:  # a crashed one is a zombie until reaped
            return False
        time.sleep(0.05)
    return True


def preloaded(shared: Path) -> None:
    """The preloaded process: imports the proxy, then forks one per request until the session
    ends (SIGTERM, or its shared folder goes), ending its proxies with it."""
    import litellm.proxy.proxy_server  # noqa: F401  (the seconds every start would take)
    from litellm.proxy.proxy_cli import run_server

    children: dict[int, Path] = {}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGCHLD, lambda *_: _reap(children))
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(shared / f"{SOCKET}.new"))
    listener.listen(8)
    listener.settimeout(1.0)
    (shared / f"{SOCKET}.new").rename(shared / SOCKET)
    try:
        while shared.is_dir():
            _reap(children)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                request = json.loads(conn.makefile("rb").readline())
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    _run_forked(run_server, request)
                children[pid] = Path(request["exit"])
                conn.sendall(f"{pid}\n".encode())
    finally:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        # Tearing down the proxy's thousands of modules would take the session's last second.
        os._exit(0)


def _reap(children: dict[int, Path]) -> None:
    for pid, exit_file in list(children.items()):
        with contextlib.suppress(ChildProcessError):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done != pid:
                continue
            with contextlib.suppress(OSError):
                exit_file.write_text(str(os.waitstatus_to_exitcode(status)))
        children.pop(pid, None)


def _run_forked(run_server: Any, request: dict[str, Any]) -> None:
    """In the fork: the proxy's command line, in its folder, environment and log."""
    code = 1
    try:
        os.setsid()
        os.chdir(request["cwd"])
        log = os.open("proxy.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.environ.clear()
        os.environ.update(request["env"])
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        run_server.main(args=request["args"], prog_name="litellm", standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)
