"""A facts file: written sorted, one flag a line, read back the same; a broken one is located."""

from __future__ import annotations

import json
from pathlib import Path

from profilegen.check.rules.base import CheckContext
from profilegen.check.rules.facts import facts_files
from profilegen.errors import FindingSink
from profilegen.facts.engine import dump
from profilegen.model.facts import EngineFacts
from profilegen.registry.enginefacts import load_facts
from profilegen.registry.source import Registry, Source

from .fixtures import facts


def test_a_facts_file_reads_back_as_written() -> None:
    written = dump(facts())
    text = written.decode()
    assert text.startswith('{\n  "aliases": {\n    "-sc": "--speculative-config",\n')
    assert (
        '\n    "--kv-cache-dtype": {"arity": "1", "choices": ["auto", "bfloat16", "fp8"]},\n'
        in text
    )
    assert EngineFacts.model_validate(json.loads(text), strict=False) == facts()


def test_a_declared_absence_is_a_small_file() -> None:
    absent = EngineFacts.model_validate({"engine": "fork", "none": "no public release"})
    assert (
        dump(absent)
        == b'{\n  "engine": "fork",\n  "none": "no public release",\n  "schema": 1\n}\n'
    )
    assert not absent.known


def test_broken_facts_files_are_located_findings(tmp_path: Path) -> None:
    folder = tmp_path / "registry" / "engines" / "facts"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text('{"engine": "a",\n "none": }\n')
    (folder / "b.json").write_text('{"engine": "c", "none": "x"}\n')
    (folder / "d.json").write_text('{"engine": "d"}\n')
    (folder / "notes.txt").write_text("hello\n")
    sink = FindingSink()
    registry = Registry(root=tmp_path)
    load_facts(tmp_path, registry, sink)
    assert [(str(f.location), f.message) for f in sink.findings] == [
        ("registry/engines/facts/a.json:2", "malformed JSON: Expecting value"),
        ("registry/engines/facts/b.json:1", "facts of 'c' in a file named 'b.json'"),
        (
            "registry/engines/facts/d.json:1",
            "facts: Value error, provenance: a facts file has provenance or says why none (none)",
        ),
        ("registry/engines/facts/notes.txt", "notes.txt is not a facts file (*.json)"),
    ]
    assert registry.facts == {}


def test_facts_of_no_engine_and_an_engine_without_facts_are_findings(tmp_path: Path) -> None:
    registry = Registry(root=tmp_path)
    registry.facts["vllm-v9.9.9"] = EngineFacts.model_validate(
        {"engine": "vllm-v9.9.9", "none": "x"}
    )
    registry.sources[("facts", "vllm-v9.9.9")] = Source("registry/engines/facts/vllm-v9.9.9.json")
    found = [
        (str(f.location), f.message, f.severity.value) for f in facts_files(CheckContext(registry))
    ]
    assert found == [
        (
            "registry/engines/facts/vllm-v9.9.9.json:1",
            "facts of 'vllm-v9.9.9', which is not an engine",
            "error",
        )
    ]
