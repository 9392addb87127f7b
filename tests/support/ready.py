"""Waiting for a server the tests started: until its URL answers 200, or it exits."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path


def tail(log: Path, lines: int = 40) -> str:
    """The last lines of a server's log (nothing when it has none yet)."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    return "\n".join(text.splitlines()[-lines:])


def ended(pid: int) -> bool:
    """Whether a process that is not this one's child has ended: gone, or a zombie (which
    signal 0 still reaches until its parent waits for it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def wait_ready(
    proc: subprocess.Popen[bytes], url: str, log: Path, timeout: float, who: str
) -> None:
    """Until `url` answers 200; an exit or the timeout is raised with the log's tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{who} exited {proc.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    raise AssertionError(
        f"{who} did not answer {url} with 200 within {timeout:.0f} s:\n{tail(log)}"
    )
