"""The tiny Qwen3 models the real vLLM serves in the tests, made once and kept by content.

`tinyqwen_make.py` writes it with the vLLM environment's Python (random weights from a fixed
seed, a tokenizer trained on the script's own text): no hub, no network. The folder is kept in
the build cache beside the environment (`PROFILEGEN_BUILD_CACHE`), named by a digest of the
script and of the environment that ran it, written in a folder of its own and renamed into
place, so a changed script makes a new model and a killed run leaves no half model.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from profilegen.releases.llamacpp_build import build_cache_root
from profilegen.releases.vllm_env import VllmEnv

SCRIPT = Path(__file__).with_name("tinyqwen_make.py")
FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
         "tokenizer_config.json", "special_tokens_map.json")  # fmt: skip


def tiny_model(env: VllmEnv, kind: str) -> Path:
    """The model folder of `kind` (`tinyqwen_make.KINDS`), made now if the cache has none for
    this script and environment."""
    blob = SCRIPT.read_bytes() + json.dumps([kind, env.info["vllm"], env.info["torch"]]).encode()
    key = hashlib.sha256(blob).hexdigest()[:16]
    root = build_cache_root() / "tiny-models"
    folder = root / f"{kind}-{key}"
    if all((folder / name).is_file() for name in FILES):
        return folder
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{kind}-{key}.", dir=root))
    try:
        done = subprocess.run(
            [str(env.python), str(SCRIPT), str(staging / "model"), kind],
            capture_output=True, text=True, timeout=300, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0:
            raise AssertionError(f"the tiny model could not be made:\n{done.stderr[-3000:]}")
        try:
            (staging / "model").rename(folder)
        except OSError:
            if not all((folder / name).is_file() for name in FILES):  # not made meanwhile
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def place(model: Path, models: Path, local_dir: str) -> Path:
    """A copy of the model at `models/local_dir`, where a profile's command looks for its
    weights (a megabyte: copied, so the model folder the box mounts holds files, not links)."""
    target = models / local_dir
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copy2(model / name, target / name)
    return target
