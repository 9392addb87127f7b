"""Explain runs started while profiles are still being rendered, and rules that read them
run after the others: the same records and the same findings as one batch run at the end."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import profilegen.explain.batch as batch_module
from profilegen.check.driver import run_rules
from profilegen.check.rules import CheckContext
from profilegen.explain.batch import Batch
from profilegen.explain.record import RECORD_NAME, record
from profilegen.explain.sandbox import StagedBox
from profilegen.explain.scenarios import Explaining, prepare_profiles
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
    """Every explain run really runs: none is recalled from the result cache (renders and
    the rest still are)."""
    monkeypatch.setattr(batch_module, "recall", lambda _keys: None)


@pytest.fixture
def boxes_run(monkeypatch: pytest.MonkeyPatch) -> list[StagedBox]:
    """The boxes that ran, in the order they began."""
    ran: list[StagedBox] = []
    real_run = StagedBox.run

    def counted(self: StagedBox) -> None:
        ran.append(self)
        real_run(self)

    monkeypatch.setattr(StagedBox, "run", counted)
    return ran


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
    seed = frozenset({"qwen38-27b-dual-dflash15-fast"})
    ahead = CheckContext(registry, focus=seed)
    found_ahead = run_rules(ahead)
    first = CheckContext(registry, focus=seed)
    assert set(first.explained) == seed  # run before any rule
    found_first = run_rules(first)
    assert found_ahead == found_first
    assert [f.rule for f in found_ahead] == [f.rule for f in found_first]


@pytest.mark.usefixtures("uncached")
def test_a_cancelled_batch_runs_no_box_it_had_not_begun_and_leaves_no_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, boxes_run: list[StagedBox]
) -> None:
    """An interrupted check waits for the boxes running, not for those still to come."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    registry = shared_registry()
    rendered = render_all(registry, PROFILES)
    batch = Batch(boxes=1, least=1)
    for profile_id, result in sorted(rendered.items()):
        batch.add(prepare_profiles(registry, {profile_id: result}))
    assert batch.started == len(PROFILES)  # a box staged for each profile
    batch.cancel()
    assert 1 <= len(boxes_run) < len(PROFILES)
    assert not list(tmp_path.glob("profilegen-explain-*"))


EXITS = """
import sys
from pathlib import Path
import profilegen.explain.batch as batch_module
from profilegen.explain.batch import Batch
from profilegen.explain.sandbox import StagedBox
from profilegen.explain.scenarios import prepare_profiles
from profilegen.generated.tree import render_all
from tests.support.repo import shared_registry

log = Path(sys.argv[1])
real_run = StagedBox.run
def counted(self):
    with log.open("a") as out:
        out.write("ran\\n")
    real_run(self)
StagedBox.run = counted
batch_module.recall = lambda _keys: None  # every run really runs (the registry is still cached)
registry = shared_registry()
batch = Batch(boxes=1, least=1)
for profile_id, result in sorted(render_all(registry, frozenset(sys.argv[2:])).items()):
    batch.add(prepare_profiles(registry, {profile_id: result}))
raise SystemExit(130)  # as an interrupted check ends: nothing finishes or cancels the batch
"""


def test_a_process_that_ends_mid_batch_does_not_wait_for_boxes_not_begun(tmp_path: Path) -> None:
    log = tmp_path / "ran"
    argv = [sys.executable, "-c", EXITS, str(log), *sorted(PROFILES)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, timeout=120, check=False)
    assert done.returncode == 130, done.stderr.decode()
    assert 1 <= len(log.read_text().splitlines()) < len(PROFILES)


def test_a_profiles_runs_are_one_stored_entry_and_are_not_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, boxes_run: list[StagedBox]
) -> None:
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))
    registry = shared_registry()
    rendered = render_all(registry, PROFILES)
    items = prepare_profiles(registry, rendered)

    def batch_runs() -> list[object]:
        batch = Batch(least=1)
        for profile_id in sorted(PROFILES):
            batch.add([item for item in items if item.profile.id == profile_id])
        return list(batch.finish())

    first = batch_runs()
    boxes = len(boxes_run)
    entries = list((tmp_path / "cache" / "results" / "explain").iterdir())
    assert boxes >= 1 and len(entries) == len(PROFILES)
    assert batch_runs() == first and len(boxes_run) == boxes
