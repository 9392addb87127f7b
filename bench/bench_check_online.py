"""`profilegen check --online` over 200 synthetic artifacts, 100 ms latency per request."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from _timing import ROOT, median_seconds, table
from click.testing import CliRunner

sys.path.insert(0, str(ROOT))
from tests.support.fakehub import FakeFile, FakeHub  # noqa: E402

from profilegen.cli import cli  # noqa: E402

ARTIFACTS = 200
LATENCY_S = 0.1
TARGET_S = 2.5
RUNS = 3
MODELINE = "# yaml-language-server: $schema=../../schema/model.schema.json\n"


def synthetic_registry(root: Path) -> None:
    """The shipped GPUs, rigs and engines, plus one model with 200 Hub artifacts."""
    for kind in ("gpus", "rigs", "engines"):
        shutil.copytree(ROOT / "registry" / kind, root / "registry" / kind)
    shutil.copytree(ROOT / "schema", root / "schema")
    lines = [
        MODELINE,
        "id: synthetic\nname: Synthetic\nfamily: synthetic\nserved_name: synthetic\n",
        "architecture: {num_layers: 2, full_attention_layers: 2, hidden_size: 64,"
        " num_attention_heads: 4, num_kv_heads: 2, head_dim: 16, vocab_size: 100,"
        " max_position_embeddings: 4096}\n",
        "artifacts:\n",
    ]
    for i in range(ARTIFACTS):
        lines.append(
            f"  v{i:03d}: {{repo: bench/model-{i:03d}, size: {{value: 1000, unit: B}},"
            f" format: safetensors, local_dir: model-{i:03d}}}\n"
        )
    (root / "registry" / "models").mkdir(parents=True)
    (root / "registry" / "models" / "synthetic.yaml").write_text("".join(lines))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, FakeHub(latency=LATENCY_S) as hub:
        root = Path(tmp)
        synthetic_registry(root)
        for i in range(ARTIFACTS):
            hub.add_repo(
                f"bench/model-{i:03d}", {"model.safetensors": FakeFile(b"x" * 1000, lfs=True)}
            )
        os.environ.update(HF_ENDPOINT=hub.url, HF_HOME=str(root / "hf"))
        os.environ.pop("HF_TOKEN", None)

        def check() -> None:
            CliRunner().invoke(cli, ["--root", str(root), "check", "--online", "--format", "json"])

        check()  # the library's one-time warm-up request, as in any real run
        hub.clear_log()
        seconds = median_seconds(check, RUNS)
        requests = hub.count("model_info") // RUNS
    print(
        table(
            [
                ("artifacts", str(ARTIFACTS)),
                ("injected latency per request", f"{LATENCY_S * 1000:.0f} ms"),
                ("model_info requests per run", str(requests)),
                ("serial lower bound", f"{ARTIFACTS * LATENCY_S:.1f} s"),
                ("`check --online` (median)", f"{seconds:.2f} s (target <= {TARGET_S} s)"),
            ]
        )
    )
    return 0 if seconds <= TARGET_S and requests == ARTIFACTS else 1


if __name__ == "__main__":
    sys.exit(main())
