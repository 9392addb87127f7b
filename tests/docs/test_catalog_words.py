"""The catalogue page says every value in words: a KV cache dtype the profile leaves to its
engine is the engine's default, named, and nothing reads "None"."""

from __future__ import annotations

import re
from pathlib import Path

from profilegen.docs.catalog import docs_plan, kv_text
from profilegen.registry import open_registry

ROOT = Path(__file__).resolve().parents[2]


def test_the_catalog_prints_no_none() -> None:
    registry = open_registry(ROOT)
    plan = docs_plan(registry)
    catalog = plan["docs/CATALOG.md"].decode()
    assert re.findall(r".{30}\bNone\b.{10}", catalog) == []
    unset = [
        p
        for p in registry.concrete_profiles()
        if p.envelope.kv_cache_dtype is None and registry.engines[p.engine].kind == "llama.cpp"
    ]
    assert unset  # llama.cpp profiles that leave the KV dtype to the engine
    row = next(ln for ln in catalog.splitlines() if f"[`{unset[0].id}`]" in ln)
    assert f"TP{unset[0].envelope.tp}, f16 (default) KV, " in row


def test_kv_text_names_the_engine_default() -> None:
    assert kv_text("q8_0", "llama.cpp") == "q8_0"
    assert kv_text(None, "llama.cpp") == "f16 (default)"
    assert kv_text(None, "vllm") == "auto (default)"
    assert kv_text(None) == "default"
