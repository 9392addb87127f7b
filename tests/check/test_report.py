"""What `check` prints: the report on stdout, severity on every line, a summary, --quiet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

PROFILE = "registry/profiles/tiny-chat.yaml"
TP_ERROR = f"{PROFILE}:13: error: [hw-tp] TP 4 needs 4 GPUs, rig 2x3090 has 2 (inherited by tiny-chat-long)"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("report") / "root")


@pytest.fixture
def broken(base: Path, tmp_path: Path) -> Path:
    """The base with one error inherited by a second profile and one warning of its own."""
    root = tmp_path / "root"
    shutil.copytree(base, root)
    profile = root / PROFILE
    profile.write_text(profile.read_text().replace("  tp: 2\n", "  tp: 4\n"))
    sibling = root / "registry" / "profiles" / "tiny-chat-long.yaml"
    sibling.write_text(sibling.read_text() + "status: retired\n")
    # What check rejects is not rendered: the generated tree stays as it was.
    assert invoke_in(root, "render", "--all").code == 1
    return root


def test_report_goes_to_stdout_with_severities_and_one_summary(broken: Path) -> None:
    run = invoke_in(broken, "check")
    assert run.code == 1
    assert run.err == ""
    lines = run.out.splitlines()
    assert TP_ERROR in lines
    assert f"{PROFILE}:18: warning: [status-evidence] sibling tiny-chat-long is retired" in (
        run.out
    )
    # Errors come first, then warnings; the summary is the last line.
    severities = [line.split(": ")[1] for line in lines[:-1]]
    assert severities == sorted(severities)
    assert lines[-1] == "check failed: 1 error, 1 warning"


def test_quiet_shows_errors_only_and_says_what_it_hid(broken: Path) -> None:
    run = invoke_in(broken, "check", "--quiet")
    assert run.code == 1
    assert run.out.splitlines() == [
        TP_ERROR,
        "check failed: 1 error, 1 warning (1 not shown: --quiet)",
    ]


def test_json_names_the_inheriting_profiles(broken: Path) -> None:
    run = invoke_in(broken, "check", "--format", "json")
    found = {f["rule"]: f for f in json.loads(run.out)}
    assert found["hw-tp"]["inherited_by"] == ["tiny-chat-long"]
    assert found["hw-tp"]["line"] == 13
    assert found["status-evidence"]["inherited_by"] == []


def test_github_annotations_name_the_inheriting_profiles(broken: Path) -> None:
    run = invoke_in(broken, "check", "--format", "github")
    assert (
        f"::error file={PROFILE},line=13,title=hw-tp::TP 4 needs 4 GPUs, rig 2x3090 has 2"
        " (inherited by tiny-chat-long)"
    ) in run.out.splitlines()


def test_clean_check_prints_only_the_summary(base: Path) -> None:
    run = invoke_in(base, "check")
    assert (run.code, run.out, run.err) == (0, "check passed: 0 errors, 0 warnings\n", "")


def test_a_todo_placeholder_fails_the_check_until_it_is_filled(base: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(base, root)
    profile = root / PROFILE
    original = profile.read_text()
    profile.write_text(
        original.replace("title: Tiny-7B bf16 + EAGLE-3, TP2", "title: TODO say what it is")
        + "caveats: [fine, 'todo: measure it']\n"
    )
    assert invoke_in(root, "render", "--all").code == 0
    run = invoke_in(root, "check", "--quiet")
    assert run.code == 1
    assert run.out.splitlines() == [
        f"{PROFILE}:3: error: [placeholder] title is still a TODO placeholder "
        "(say what the profile is before it is merged)",
        f"{PROFILE}:21: error: [placeholder] caveats is still a TODO placeholder "
        "(inherited by tiny-chat-long) (say what the profile is before it is merged)",
        "check failed: 2 errors, 0 warnings",
    ]
