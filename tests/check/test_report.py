"""What `check` prints: the report on stdout, severity on every line, a summary, --quiet; a
repeated warning kind as one line (`--verbose` lists each), retired profiles silent, a profile
in service predicted not to boot an error unless its caveats say so, `--strict`, `--changed`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

PROFILE = "registry/profiles/tiny-chat.yaml"
TP_ERROR = (
    f"{PROFILE}:13: error: [hw-tp] TP 4 needs 4 GPUs, rig 2x3090 has 2 (inherited by "
    "tiny-chat-long) (use TP 1 or 2)"
)


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
        " (inherited by tiny-chat-long) (use TP 1 or 2)"
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
        f"{PROFILE}:{len(original.splitlines()) + 1}: error: [placeholder] caveats is still a "
        "TODO placeholder "
        "(inherited by tiny-chat-long) (say what the profile is before it is merged)",
        "check failed: 2 errors, 0 warnings",
    ]


HEAD = "# yaml-language-server: $schema=../../schema/profile.schema.json\n"


def _profile(root: Path, ident: str, body: str) -> None:
    text = f"{HEAD}id: {ident}\nextends: tiny-chat\ntitle: {ident} profile\n{body}"
    (root / "registry/profiles" / f"{ident}.yaml").write_text(text)


@pytest.fixture(scope="module")
def crowded_once(base: Path) -> Path:
    """Three profiles that each name a retired sibling (one warning kind, three times); the
    retired one asks for more sequences than its pool holds, which nobody is warned about."""
    root = base.parent / "crowded"
    shutil.copytree(base, root)
    _profile(root, "tiny-old", "status: retired\nport: 8210\nenvelope: {max_num_seqs: 64}\n")
    for i, name in enumerate(("tiny-a", "tiny-b", "tiny-c")):
        _profile(root, name, f"port: {8211 + i}\nsiblings: [tiny-old]\n")
    assert invoke_in(root, "render", "--all").code == 0
    return root


@pytest.fixture
def crowded(crowded_once: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(crowded_once, tmp_path / "root"))


def test_a_repeated_warning_kind_is_one_line_and_verbose_lists_each(crowded: Path) -> None:
    run = invoke_in(crowded, "check")
    assert run.code == 0, run.text
    assert run.out.splitlines() == [
        "registry/profiles/tiny-a.yaml:6: warning: [status-evidence] sibling tiny-old is retired "
        "(and 2 more like it: `profilegen check --verbose` lists them)",
        "check passed: 0 errors, 3 warnings; 3 warning(s) summarised: --verbose lists them",
    ]
    verbose = invoke_in(crowded, "check", "--verbose").out.splitlines()
    assert [line.split(":")[0] for line in verbose[:-1]] == [
        f"registry/profiles/tiny-{x}.yaml" for x in "abc"
    ]
    assert verbose[-1] == "check passed: 0 errors, 3 warnings"
    strict = invoke_in(crowded, "check", "--strict")
    assert strict.code == 1 and strict.out.splitlines()[-1].startswith("check failed: 0 errors")


def test_retired_profiles_do_not_warn(crowded: Path) -> None:
    verbose = invoke_in(crowded, "check", "--verbose").out
    assert "tiny-old.yaml" not in verbose and "fit-capacity" not in verbose
    # The same envelope on a profile in service is warned about.
    old = crowded / "registry/profiles/tiny-old.yaml"
    old.write_text(old.read_text().replace("status: retired\n", ""))
    assert invoke_in(crowded, "render", "--all").code == 0
    run = invoke_in(crowded, "check", "--verbose")
    assert "registry/profiles/tiny-old.yaml:2: warning: [fit-capacity] predicted KV pool" in run.out


def test_a_profile_predicted_not_to_boot_is_an_error_unless_its_caveats_say_so(
    base: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(base, root)
    # A pool 1.5% short of one 131,072-token request: inside fit's error, but not booting.
    envelope = (
        "envelope: {max_model_len: 131072, gpu_memory_utilization: 0.73, "
        "max_num_batched_tokens: 8192}\n"
    )
    _profile(root, "tiny-tight", f"port: 8220\n{envelope}")
    assert invoke_in(root, "render", "--all").code == 1  # what check rejects is not rendered
    run = invoke_in(root, "check")
    assert run.code == 1 and "[fit-capacity]" not in run.out  # said once
    assert (
        "registry/profiles/tiny-tight.yaml:1: error: [fit-boots] fit predicts it cannot boot on "
        "2x3090: a KV pool of 129,136 tokens for one 131,072-token request (0.98x, within fit's "
        "5%: a boot on the rig decides)"
    ) in run.out
    path = root / "registry/profiles/tiny-tight.yaml"
    path.write_text(path.read_text() + "caveats: ['Predicted not to boot at 131072 on 2x3090.']\n")
    assert invoke_in(root, "render", "--all").code == 0
    assert invoke_in(root, "check").code == 0


def _git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(root), "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_changed_shows_the_change_first_and_the_rest_in_one_line(crowded: Path) -> None:
    _git(crowded, "init", "-q")
    _git(crowded, "add", "-A")
    _git(crowded, "commit", "-q", "-m", "base")
    # The change: one profile's port, which now clashes with nothing but is its own file.
    path = crowded / "registry/profiles/tiny-b.yaml"
    path.write_text(path.read_text().replace("port: 8212", "port: 8222"))
    assert invoke_in(crowded, "render", "--all").code == 0
    run = invoke_in(crowded, "check", "--changed", "HEAD")
    assert run.code == 0, run.text
    lines = run.out.splitlines()
    assert lines[0] == (
        "registry/profiles/tiny-b.yaml:6: warning: [status-evidence] sibling tiny-old is retired"
    )
    assert lines[1] == (
        "registry: warning: [elsewhere] 2 warning(s) outside the change since HEAD "
        "(status-evidence 2): `profilegen check --verbose` lists them"
    )
    github = invoke_in(crowded, "check", "--changed", "HEAD", "--format", "github").out.splitlines()
    assert github[0].startswith("::warning file=registry/profiles/tiny-b.yaml,line=6,")
    assert invoke_in(crowded, "check", "--changed", "HEAD", "--strict").code == 1
