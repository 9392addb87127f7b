"""What the shapes run boots: each llama.cpp profile's engine argv (as its entrypoint runs it)
and the GGUF spec of its model, adapted to one GPU and to the build (a fork's profile keeps
the flags the build knows); and what it cannot boot, with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shapes import NoSpec, gguf_spec

from profilegen.explain.core import Scenario, explain
from profilegen.registry import open_registry
from profilegen.releases.llamacpp_build import engine_build

# Flags that place work on several cards or load files the plan does not write; each is
# dropped with the note saying so (one GPU holds what the rig's cards held).
_SPLIT = ("-sm", "--split-mode", "-ts", "--tensor-split", "--main-gpu", "--max-gpu")
_FILES = {
    "--mmproj": "the vision projector (the registry holds no vision-tower facts)",
    "--spec-draft-model": "the external draft GGUF (its shape is not in the registry)",
    "-md": "the external draft GGUF (its shape is not in the registry)",
}


def _drop(words: list[str], flag: str) -> tuple[list[str], bool]:
    if flag not in words:
        return words, False
    i = words.index(flag)
    return words[:i] + words[i + 2 :], True


def _one_gpu(words: list[str], notes: list[str]) -> list[str]:
    for flag in _SPLIT:
        words, dropped = _drop(words, flag)
        if dropped:
            notes.append(f"{flag} dropped: one GPU")
    for flag, what in _FILES.items():
        words, dropped = _drop(words, flag)
        if dropped:
            notes.append(f"{flag} dropped: {what}")
            if flag in ("--spec-draft-model", "-md"):
                for spec in ("--spec-type", "--spec-draft-n-max"):
                    words, _ = _drop(words, spec)
    return words


# Flags that change what llama-server allocates; profiles equal in these (and in the GGUF)
# share one boot.
_MEMORY = ("-c", "--ctx-size", "-b", "-ub", "-ngl", "-fa", "--flash-attn", "--cache-type-k",
           "--cache-type-v", "-np", "--spec-type", "--spec-draft-n-max", "--override-kv",
           "--no-mmap", "--mmap", "-ot", "--kv-unified", "--no-kv-unified", "--fit")  # fmt: skip


def _signature(spec: dict[str, Any], words: list[str]) -> str:
    pairs = [(w, words[i + 1]) for i, w in enumerate(words[:-1]) if w in _MEMORY]
    return json.dumps([spec, sorted(pairs)], sort_keys=True)


def make_plan(root: Path, engine_id: str, rig: str) -> dict[str, Any]:
    registry = open_registry(root)
    engine = registry.engines[engine_id]
    boots: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    seen: dict[str, dict[str, Any]] = {}
    for profile in sorted(registry.concrete_profiles(), key=lambda p: p.id):
        if registry.engines[profile.engine].kind != engine.kind:
            continue
        model = registry.models[profile.model]
        try:
            spec = gguf_spec(model, model.artifacts[profile.weights])
        except NoSpec as exc:
            skipped.append({"profile": profile.id, "reason": str(exc)})
            continue
        run = explain(registry, profile, Scenario())
        if not run.launched:
            skipped.append({"profile": profile.id, "reason": f"refuses to boot: {run.message}"})
            continue
        notes: list[str] = []
        argv = _one_gpu(list(run.argv), notes)
        if profile.engine != engine_id:
            notes.append(f"a {profile.engine} profile, booted on {engine_id}")
        signature = _signature(spec, argv)
        if signature in seen:
            seen[signature]["shared_by"].append(profile.id)
            continue
        boots.append(
            {
                "key": profile.id,
                "profile": profile.id,
                "model": model.id,
                "weights": profile.weights,
                "file": (model.artifacts[profile.weights].files or [None])[0],
                "argv": argv,
                "env": {"CUDA_VISIBLE_DEVICES": "0"},
                "spec": spec,
                "notes": notes,
                "shared_by": [],
            }
        )
        seen[signature] = boots[-1]
    return {
        "engine": engine_id,
        "engine_build": engine_build(engine.tag or engine.id),
        "rig": rig,
        "boots": boots,
        "skipped": skipped,
    }
