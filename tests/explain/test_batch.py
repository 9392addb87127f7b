"""Explain runs started while profiles are still being rendered, and rules that read them
run after the others: the same records and the same findings as one batch run at the end."""

from __future__ import annotations

import pytest

from profilegen.check.driver import run_rules
from profilegen.check.rules import CheckContext
from profilegen.explain.record import RECORD_NAME, record
from profilegen.explain.scenarios import Explaining
from profilegen.generated.tree import render_all
from tests.support.repo import REPO, shared_registry

# Two vLLM profiles (one with patches) and two llama.cpp ones.
PROFILES = frozenset(
    {
        "qwen38-27b-dual-dflash15-fast",
        "qwen38-27b-dual-fast",
        "qwen38-27b-single-iq4xs",
        "qwen-35b-a3b-dual",
    }
)


@pytest.fixture
def uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run really runs (nothing is recalled from the result cache)."""
    monkeypatch.setenv("PROFILEGEN_NO_CACHE", "1")


@pytest.mark.usefixtures("uncached")
def test_boxes_started_profile_by_profile_give_the_checked_in_records() -> None:
    registry = shared_registry()
    rendered = render_all(registry, PROFILES)
    explaining = Explaining(registry, least=1)
    for profile_id, result in sorted(rendered.items()):
        explaining.add(profile_id, result)
    # Boxes were sent while profiles were still being added, not all at the end.
    assert explaining.started >= 1
    explained = explaining.finish()
    assert sorted(explained) == sorted(PROFILES)
    for profile_id, explanations in explained.items():
        written = (REPO / "compose" / profile_id / RECORD_NAME).read_bytes()
        assert record(explanations) == written, profile_id


@pytest.mark.usefixtures("uncached")
def test_rules_that_wait_for_the_runs_report_as_if_the_runs_came_first() -> None:
    registry = shared_registry()
    ahead = CheckContext(registry, focus=PROFILES)
    found_ahead = run_rules(ahead)
    first = CheckContext(registry, focus=PROFILES)
    assert set(first.explained) == PROFILES  # run before any rule
    assert found_ahead == run_rules(first)
    assert [f.rule for f in found_ahead] == [f.rule for f in run_rules(first)]
