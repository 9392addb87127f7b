"""Golden engine commands: every profile x the fixed scenario set, as `explain --format json`.

A template or registry change that alters what any container runs shows up as a reviewable
diff of tests/explain/golden/<profile>.json. Refresh them with `make golden`.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from profilegen.explain.core import explain
from profilegen.explain.report import as_json
from profilegen.explain.scenarios import scenarios_for
from profilegen.registry import Registry
from profilegen.render import render_profile
from tests.support.repo import shared_registry

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("PROFILEGEN_UPDATE_GOLDEN") == "1"


@lru_cache(maxsize=1)
def _registry() -> Registry:
    return shared_registry()


def explained(profile_id: str) -> dict[str, Any]:
    registry = _registry()
    profile = registry.profiles[profile_id]
    rendered = render_profile(registry, profile)
    out = {}
    for scenario in scenarios_for(registry, profile, rendered):
        data = as_json(explain(registry, profile, scenario, rendered))
        out[scenario.label] = {k: v for k, v in data.items() if k not in ("profile", "scenario")}
    return out


@pytest.mark.parametrize("profile_id", sorted(_registry().profiles))
def test_engine_command_matches_golden(profile_id: str) -> None:
    got = json.dumps(explained(profile_id), indent=1, sort_keys=True) + "\n"
    path = GOLDEN / f"{profile_id}.json"
    if UPDATE:
        path.write_text(got)
    assert path.is_file(), f"{path} is missing: run `make golden`"
    assert got == path.read_text(), (
        f"{profile_id} runs something else now: review, then `make golden`"
    )


def test_no_golden_without_a_profile() -> None:
    orphans = {p.stem for p in GOLDEN.glob("*.json")} - set(_registry().profiles)
    if UPDATE:
        for name in orphans:
            (GOLDEN / f"{name}.json").unlink()
        orphans = set()
    assert not orphans, f"golden files of removed profiles: {sorted(orphans)}"


def test_defaults_launch_and_a_malformed_width_is_refused() -> None:
    """The scenario set does what it says on a profile with a drafter."""
    runs = explained("qwen38-27b-dual-fast")
    assert runs["defaults"]["launched"] and runs["defaults"]["exe"] == "vllm"
    assert runs["SPEC_N=abc"] == {
        **{k: runs["SPEC_N=abc"][k] for k in ("gpus", "nvlink", "engine", "deviations", "said")},
        "launched": False,
        "patches": [],
        "exit_code": 1,
        "message": "SPEC_N must be a whole number, got 'abc'",
    }
    assert "--speculative-config" in runs["defaults"]["argv"]
    assert "--speculative-config" not in runs["SPEC=off"]["argv"]
