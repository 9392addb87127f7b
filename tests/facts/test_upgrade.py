"""The upgrade report's pure parts: memory defaults that moved, the new entry's file."""

from __future__ import annotations

from profilegen.facts.upgrade import moved_defaults, new_engine_id, respelled
from profilegen.model import Engine

from .fixtures import facts

ENGINE = """\
# yaml-language-server: $schema=../../schema/engine.schema.json
id: vllm-v0.27.1
kind: vllm
name: "vLLM v0.27.1 OpenAI-compatible server"
image: "vllm/vllm-openai"
tag: v0.27.1
version: "0.27.1"
binary: vllm
"""


def engine() -> Engine:
    return Engine.model_validate(
        {
            "id": "vllm-v0.27.1",
            "kind": "vllm",
            "name": "vLLM v0.27.1",
            "image": "vllm/vllm-openai",
            "tag": "v0.27.1",
            "version": "0.27.1",
            "binary": "vllm",
            "container_port": 8000,
            "model_mount": "/root/.cache/huggingface",
        }
    )


def test_a_memory_default_that_moved_is_named_where_the_profile_leaves_it() -> None:
    old = facts()
    flags = {**old.model_dump(by_alias=True)["flags"]}
    flags["--gpu-memory-utilization"] = {**flags["--gpu-memory-utilization"], "default": 0.92}
    new = facts(flags=flags)
    assert moved_defaults(old, new, set()) == [
        "the default of --gpu-memory-utilization moves from 0.9 to 0.92 (the profile leaves it "
        "to the release: its memory sizing changes)"
    ]
    assert moved_defaults(old, new, {"--gpu-memory-utilization"}) == []


def test_the_new_entry_is_the_old_one_moved_to_the_new_release() -> None:
    assert new_engine_id(engine(), "0.33.0") == "vllm-v0.33.0"
    assert respelled(ENGINE, engine(), "vllm-v0.33.0", "0.33.0") == (
        "# yaml-language-server: $schema=../../schema/engine.schema.json\n"
        "# Added by `profilegen upgrade vllm-v0.27.1 --to 0.33.0` from vllm-v0.27.1: its memory "
        "facts are the old release's until measured.\n"
        "id: vllm-v0.33.0\n"
        "kind: vllm\n"
        'name: "vLLM v0.33.0 OpenAI-compatible server"\n'
        'image: "vllm/vllm-openai"\n'
        "tag: v0.33.0\n"
        'version: "0.33.0"\n'
        "binary: vllm\n"
    )
