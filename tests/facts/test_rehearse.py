"""Patch rehearsal on a small fixture engine tree: a diff that applies, one whose anchor
drifted (reported with the patch's own message), and a rehearsal without source."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from profilegen.facts.rehearse import rehearse_profile
from profilegen.registry import open_registry
from profilegen.render import render_profile
from tests.check.mutations import VENDORED_YAML as PATCH_YAML
from tests.support.cli import invoke_in

PROFILE = "registry/profiles/qwen38-27b-dual-fast.yaml"
DIFF = b"--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2  # tiny\n"


@pytest.fixture
def tiny(repo: Path) -> Path:
    """The repository with qwen38-27b-dual-fast patched by one vendored diff only."""
    patches = repo / "registry" / "patches"
    (patches / "vllm-tiny-vendored.yaml").write_text(
        PATCH_YAML % (len(DIFF), hashlib.sha256(DIFF).hexdigest())
    )
    (patches / "files" / "vllm-tiny-vendored").mkdir(parents=True)
    (patches / "files" / "vllm-tiny-vendored" / "fix.patch").write_bytes(DIFF)
    profile = repo / PROFILE
    text = profile.read_text()
    old = "patches: [w4a8-int8-act, vllm-pr48375-mamba-drop-eagle-block, vllm-gdn-mtp-async-spec-order]"
    assert text.count(old) == 1
    profile.unlink()
    profile.write_text(text.replace(old, "patches: [vllm-tiny-vendored]"))
    return repo


def tree(root: Path, body: str) -> Path:
    package = root / "vllm"
    package.mkdir()
    (package / "x.py").write_text(body)
    (package / "y.py").write_text("unchanged = True\n")
    return package


def rehearse(repo: Path, package: Path):  # type: ignore[no-untyped-def]
    registry = open_registry(repo)
    profile = registry.profiles["qwen38-27b-dual-fast"]
    return rehearse_profile(registry, profile, render_profile(registry, profile), package)


def test_a_diff_that_applies_is_compiled(tiny: Path, tmp_path: Path) -> None:
    package = tree(tmp_path, "def f():\n    return 1\n")
    result = rehearse(tiny, package)
    assert (result.verdict, result.message, result.compiled) == ("applies", None, ("x.py",))
    assert "vllm-tiny-vendored/fix.patch: applied" in result.said
    assert (package / "x.py").read_text() == "def f():\n    return 1\n"  # the cache is untouched


def test_an_anchor_that_drifted_is_refused_with_the_patch_s_own_message(
    tiny: Path, tmp_path: Path
) -> None:
    package = tree(tmp_path, "def f():\n    return 3\n")
    result = rehearse(tiny, package)
    assert (result.verdict, result.refusals) == ("refused", (result.message,))
    assert "speculative decoding: mtp, width 4" not in result.said  # the boot stopped there
    registry = open_registry(tiny)
    profile = registry.profiles["qwen38-27b-dual-fast"]
    rendered = render_profile(registry, profile)
    going_on = rehearse_profile(registry, profile, rendered, package, keep_going=True)
    assert (going_on.verdict, going_on.refusals) == ("refused", (result.message,))
    assert "speculative decoding: mtp, width 4" in going_on.said  # it went on to the engine
    assert result.message == (
        "patch vllm-tiny-vendored/fix.patch does not apply in "
        "/usr/local/lib/python3.12/dist-packages/vllm; refusing to boot "
        "(x.py: 1 out of 1 hunk FAILED)"
    )


def test_a_step_that_breaks_the_syntax_is_refused(tiny: Path, tmp_path: Path) -> None:
    package = tree(tmp_path, "def f():\n    return 1\n")
    broken = DIFF.replace(b"+    return 2  # tiny", b"+    return (2  # tiny")
    files = tiny / "registry" / "patches" / "files" / "vllm-tiny-vendored" / "fix.patch"
    files.write_bytes(broken)
    yaml = tiny / "registry" / "patches" / "vllm-tiny-vendored.yaml"
    yaml.write_text(PATCH_YAML % (len(broken), hashlib.sha256(broken).hexdigest()))
    result = rehearse(tiny, package)
    assert result.verdict == "refused"
    assert result.message is not None
    assert result.message.startswith("x.py does not compile: ")


def test_no_source_offline_is_said_and_never_passes(tiny: Path) -> None:
    run = invoke_in(tiny, "rehearse", "qwen38-27b-dual-fast", "--offline")
    assert run.code == 2
    assert run.out.splitlines() == [
        "qwen38-27b-dual-fast (vllm-v0.27.1): not rehearsed: cannot get the source of "
        "vllm-v0.27.1: vllm==0.27.1 is not in the release cache and --offline was given",
        "rehearse: 0 apply, 0 refused, 1 not rehearsed "
        "(1 whose patch files or source could not be had)",
    ]


def test_a_mount_the_box_cannot_hold_is_refused_for_that_profile(
    tiny: Path, tmp_path: Path
) -> None:
    engine = tiny / "registry" / "engines" / "vllm-v0.27.1.yaml"
    text = engine.read_text()
    assert text.count('patch_mount_root: "/etc/club3090"') == 1
    engine.write_text(text.replace('"/etc/club3090"', '"/dev/fd/patches"'))
    result = rehearse(tiny, tree(tmp_path, "def f():\n    return 1\n"))
    assert (result.verdict, result.message) == (
        "refused",
        "cannot place /dev/fd/patches/vllm-tiny-vendored in the box: "
        "it lands in /proc/self/fd/patches/vllm-tiny-vendored",
    )
