"""`diff`: a container variable is one setting, written as the compose file writes it."""

from __future__ import annotations

import json

from profilegen.docs.diff import env_value
from tests.support.cli import Invoke

FAST, MAX = "qwen38-27b-dual-fast", "qwen38-27b-dual-max"
ALLOC = "PYTORCH_CUDA_ALLOC_CONF"


def test_each_variable_is_said_once(invoke: Invoke) -> None:
    run = invoke("diff", FAST, MAX)
    assert run.code == 0, run.text
    lines = run.out.splitlines()
    named = [ln for ln in lines if f"env.{ALLOC}" in ln]
    assert len(named) == 1
    assert named[0].split() == [f"env.{ALLOC}", "A", f"${{{ALLOC}:-expandable_segments:True}}"]
    after = lines[lines.index(named[0]) + 1].split()
    assert after == ["B", f"${{{ALLOC}:-expandable_segments:True,max_split_size_mb:512}}"]
    assert ".default" not in run.out and ".host" not in run.out
    data = json.loads(invoke("diff", FAST, MAX, "--format", "json").out)
    env = [c for c in data["settings"] if c["what"].startswith("env.")]
    assert env == [
        {
            "what": f"env.{ALLOC}",
            "a": f"${{{ALLOC}:-expandable_segments:True}}",
            "b": f"${{{ALLOC}:-expandable_segments:True,max_split_size_mb:512}}",
        },
        # Passed through from the host by one only (a null looked like no variable at all).
        {"what": "env.VLLM_USE_DEEP_GEMM", "a": None, "b": "(the host's, passed through)"},
    ]


def test_a_variable_reads_as_the_compose_file_writes_it() -> None:
    assert env_value("1") == "1"
    assert env_value(None) == "(the host's, passed through)"
    assert env_value({"host": ["HF_HUB_OFFLINE", "OFFLINE"], "default": "0"}) == (
        "${HF_HUB_OFFLINE:-${OFFLINE:-0}}"
    )
