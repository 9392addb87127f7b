"""Benchmark: verify 200 artifacts against a fake Hub that answers every request in 100 ms."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Runs as a plain script: make the repo (for tests.support) and the package importable.
for entry in (ROOT, ROOT / "generator"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from tests.support.fakehub import FakeFile, FakeHub  # noqa: E402

from profilegen.hub.client import verify_artifacts  # noqa: E402
from profilegen.hub.types import ArtifactRequest, HubSettings  # noqa: E402

ARTIFACTS = 200
LATENCY = 0.1  # seconds added by the fake Hub to every request
RUNS = 3
TARGET = 2.5  # seconds, median wall time
CONFIG = b'{"model_type": "bench"}'


def build(hub: FakeHub) -> list[ArtifactRequest]:
    """Synthetic catalogue: two shards and a config per model, sizes in the tens of GB."""
    requests = []
    for index in range(ARTIFACTS):
        shard = 5_000_000_000 + index * 1_000_003
        files = {
            "config.json": FakeFile(CONFIG),
            "model-00001-of-00002.safetensors": FakeFile(b"", lfs=True, reported_size=shard),
            "model-00002-of-00002.safetensors": FakeFile(b"", lfs=True, reported_size=shard),
        }
        repo = hub.add_repo(f"bench/model-{index:03d}", files)
        requests.append(
            ArtifactRequest(
                key=f"model-{index:03d}/bf16",
                repo=repo.repo_id,
                revision=repo.head,
                files=tuple(files),
                declared_size_bytes=2 * shard + len(CONFIG),
            )
        )
    return requests


def main() -> int:
    with FakeHub(latency=LATENCY) as hub:
        requests = build(hub)
        settings = HubSettings(endpoint=hub.url, token=False)  # default workers/timeouts
        timings: list[float] = []
        failures = 0
        for _ in range(RUNS):
            hub.clear_log()
            started = time.perf_counter()
            results = verify_artifacts(requests, settings)
            timings.append(time.perf_counter() - started)
            failures += sum(1 for r in results if r.problems)
            if hub.count("model_info") != ARTIFACTS:
                print(f"expected {ARTIFACTS} model_info calls, saw {hub.count('model_info')}")
                return 1

    median = statistics.median(timings)
    serial = ARTIFACTS * LATENCY
    ideal = -(-ARTIFACTS // settings.workers) * LATENCY  # rounds of `workers` parallel calls
    rows = [(f"run {i + 1}", t) for i, t in enumerate(timings)]
    rows += [
        ("median", median),
        ("serial lower bound", serial),
        (f"ideal with {settings.workers} workers", ideal),
    ]
    print(f"verify_artifacts: {ARTIFACTS} artifacts, {LATENCY * 1000:.0f} ms per request")
    print(f"{'':<26}{'seconds':>9}")
    for label, seconds in rows:
        print(f"{label:<26}{seconds:>9.2f}")
    print(f"{'speed-up vs serial':<26}{serial / median:>8.1f}x")
    met = median <= TARGET and failures == 0
    verdict = "met" if met else "MISSED"
    print(
        f"target <= {TARGET:.1f} s: {verdict}"
        + (f" ({failures} failed checks)" if failures else "")
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
