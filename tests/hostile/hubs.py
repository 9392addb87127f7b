"""The fake Hubs of the hostile corpus: the base registry's two repos at their pinned commits,
answered honestly, or with file names that leave the model folder, or one byte at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tests.support.fakehub import FakeFile, FakeHub, FakeRepo

WEIGHTS = ("example/Tiny-7B", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567")
DRAFTER = ("example/Tiny-7B-Eagle3", "7654321fedcba0987654321fedcba0987654321f")
CONFIG = b'{"architectures": ["LlamaForCausalLM"]}\n'


def _files(weights_size: int, extra: Mapping[str, FakeFile]) -> dict[str, FakeFile]:
    body = FakeFile(b"\0" * 64, lfs=True, reported_size=weights_size)
    return {"config.json": FakeFile(CONFIG), "model.safetensors": body, **extra}


def _repo(hub: FakeHub, repo_id: str, commit: str, files: dict[str, FakeFile]) -> None:
    repo = FakeRepo(repo_id)
    repo.commits[commit] = files
    repo.refs["main"] = commit
    hub.repos[repo_id] = repo


def honest(extra: Mapping[str, FakeFile] | None = None) -> Callable[[FakeHub], None]:
    """Both repos as the registry declares them; the weights' repo also lists `extra`."""

    def serve(hub: FakeHub) -> None:
        _repo(hub, *WEIGHTS, _files(15_000_000_000 - len(CONFIG), extra or {}))
        _repo(hub, *DRAFTER, _files(500_000_000 - len(CONFIG), {}))

    return serve


def listing(
    rewrite: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
) -> Callable[[FakeHub], None]:
    """Both repos, the weights' listing rewritten on the way out (a Hub that lies)."""

    def serve(hub: FakeHub) -> None:
        honest()(hub)

        def tamper(payload: Any) -> Any:
            if payload.get("id") == WEIGHTS[0]:
                payload["siblings"] = rewrite(list(payload["siblings"]))
            return payload

        hub.tamper("model_info", tamper)

    return serve


def named(*names: str) -> Callable[[FakeHub], None]:
    """The weights' repo lists a file under each of `names` too."""
    return listing(lambda siblings: [*siblings, *({"rfilename": n, "size": 1} for n in names)])


def trickling(hub: FakeHub) -> None:
    """Both repos, every answer about them sent one byte every 0.1 s: each read of a client
    gets a byte well within its timeout, so only the overall deadline ends it."""
    honest()(hub)
    hub.trickle("model_info", every=0.1)
