"""The review record of what each container runs (compose/<id>/explain.json, written by
`render --all` and proven fresh by `check`): it says what `explain` says, scenario by scenario.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from profilegen.explain.core import Scenario, explain
from profilegen.explain.record import RECORD_NAME
from tests.support.repo import REPO, shared_registry

PROFILE = "qwen38-27b-dual-fast"


def checked_in(profile_id: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((REPO / "compose" / profile_id / RECORD_NAME).read_text())
    return record


def test_the_record_holds_the_defaults_whole_and_each_scenario_as_its_differences() -> None:
    record = checked_in(PROFILE)
    defaults = record["defaults"]
    assert defaults["launched"] and defaults["argv"].startswith("vllm serve ")
    argv = shlex.split(defaults["argv"])
    assert "--speculative-config" in argv
    assert "--speculative-config" not in shlex.split(record["SPEC=off"]["argv"])
    assert record["SPEC_N=abc"] == {
        "exit_code": 1,
        "launched": False,
        "message": "SPEC_N must be a whole number, got 'abc'",
        "patches": [],
        "said": ["SPEC_N must be a whole number, got 'abc'"],
        "unset": ["argv", "env"],
    }


def test_the_record_says_what_explain_says() -> None:
    registry = shared_registry()
    profile = registry.profiles[PROFILE]
    record = checked_in(PROFILE)
    now = explain(registry, profile, Scenario((("SPEC_N", "3"),)))
    assert shlex.join([now.exe or "", *now.argv]) == record["SPEC_N=3"].get(
        "argv", record["defaults"]["argv"]
    )
    defaults = explain(registry, profile, Scenario())
    assert {**defaults.env, **record["SPEC_N=3"].get("env", {})} == now.env
