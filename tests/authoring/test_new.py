"""`profilegen new`, then render and check: the "add a profile" pull request."""

from __future__ import annotations

import json
from pathlib import Path

from profilegen.registry import open_registry
from tests.support.cli import Invoke

NEW = "qwen38-27b-dual-test"
SIBLING = "qwen38-27b-dual-superfast"
MODELINE = "# yaml-language-server: $schema=../../schema/profile.schema.json"


def new_file(repo: Path) -> Path:
    return repo / "registry" / "profiles" / f"{NEW}.yaml"


def test_new_writes_one_small_file_that_extends_the_sibling(repo: Path, invoke: Invoke) -> None:
    before = {p.name for p in (repo / "registry" / "profiles").iterdir()}
    run = invoke("new", NEW, "--from", SIBLING)
    assert run.code == 0, run.text
    after = {p.name for p in (repo / "registry" / "profiles").iterdir()}
    assert after - before == {f"{NEW}.yaml"}
    text = new_file(repo).read_text()
    lines = text.splitlines()
    assert lines[0] == MODELINE
    assert len(lines) <= 30
    assert f"extends: {SIBLING}" in lines
    assert "status: incubating" in lines
    # The next steps name the commands of the pull request.
    assert "profilegen render --all" in run.out and "profilegen check" in run.out
    assert "evidence" in run.out and "caveats" in run.out

    registry = open_registry(repo)
    profile, sibling = registry.profiles[NEW], registry.profiles[SIBLING]
    assert profile.extends == SIBLING
    assert profile.envelope == sibling.envelope  # inherited, not copied
    others = {p.port for i, p in registry.profiles.items() if i != NEW}
    assert profile.port not in others
    # The free port nearest the sibling's (above it on a tie).
    nearest = min(
        (q for q in range(sibling.port - 50, sibling.port + 51) if q not in others),
        key=lambda q: (abs(q - sibling.port), q < sibling.port),
    )
    assert profile.port == nearest


def test_new_applies_dotted_overrides_as_typed_values(repo: Path, invoke: Invoke) -> None:
    run = invoke(
        "new",
        NEW,
        "--from",
        SIBLING,
        "--set",
        "envelope.max_model_len=131072",
        "--set",
        "drafter.width=5",
        "--set",
        "best_for=a test: with a colon",
    )
    assert run.code == 0, run.text
    assert len(new_file(repo).read_text().splitlines()) <= 30
    shown = invoke("show", NEW, "--format", "json")
    data = json.loads(shown.out)
    assert data["envelope"]["max_model_len"] == 131072
    assert data["envelope"]["kv_cache_dtype"] == "fp8_e4m3"  # the rest of the envelope is inherited
    assert (data["drafter"]["id"], data["drafter"]["width"]) == ("syvai-qwen38-dflash2", 5)
    assert data["best_for"] == "a test: with a colon"


def test_the_new_profiles_words_come_from_its_own_facts(repo: Path, invoke: Invoke) -> None:
    """The sibling's title ("... DFlash2 n=7, TP2") and best_for are not
    copied: the TODO lines say what the new profile resolves to, and what sets it apart."""
    run = invoke(
        "new", NEW, "--from", SIBLING,
        "--set", "drafter.width=5", "--set", "envelope.max_model_len=131072",
    )  # fmt: skip
    assert run.code == 0, run.text
    lines = new_file(repo).read_text().splitlines()
    assert lines[5] == (
        "title: 'TODO: Qwen3.8-27B INT4 AutoRound + DFlash n=5, fp8_e4m3 KV, TP2 on 2x3090-pcie, 128K'"
    )
    assert lines[-1] == (
        f"best_for: 'TODO: who should pick it over {SIBLING} (DFlash n=5, not n=7; 128K "
        "context, not 256K)'"
    )
    registry = open_registry(repo)
    profile, sibling = registry.profiles[NEW], registry.profiles[SIBLING]
    assert sibling.title == "Qwen3.8-27B INT4 AutoRound + DFlash2 n=7, TP2"
    assert sibling.best_for and sibling.best_for not in (profile.best_for or "")
    assert "n=7" not in profile.title and "256K" not in profile.title
    # Nothing stated of its own: the best_for placeholder says so.
    other = invoke("new", "qwen38-27b-dual-copy", "--from", SIBLING)
    assert other.code == 0, other.text
    copy = open_registry(repo).profiles["qwen38-27b-dual-copy"]
    assert (
        copy.title
        == "TODO: Qwen3.8-27B INT4 AutoRound + DFlash n=7, fp8_e4m3 KV, TP2 on 2x3090-pcie, 256K"
    )
    assert (
        copy.best_for
        == f"TODO: who should pick it over {SIBLING} (it states no fact of its own yet)"
    )


def test_check_names_the_missing_output_until_render_all(repo: Path, invoke: Invoke) -> None:
    assert invoke("new", NEW, "--from", SIBLING).code == 0

    failed = invoke("check")
    assert failed.code == 1
    assert f"registry/profiles/{NEW}.yaml:1: error: [disk-missing]" in failed.out
    assert f"compose/{NEW}/compose.yaml is missing" in failed.out
    # The catalogue now lacks the new row.
    assert "docs/CATALOG.md:" in failed.out and "error: [docs-stale]" in failed.out

    rendered = invoke("render", "--all")
    assert rendered.code == 0, rendered.text
    assert f"wrote compose/{NEW}/compose.yaml" in rendered.out
    assert "wrote docs/CATALOG.md" in rendered.out

    # The TODO title and best_for `new` wrote fail the check until they say what it is.
    todo = invoke("check", "--quiet")
    assert todo.code == 1
    assert f"registry/profiles/{NEW}.yaml:6: error: [placeholder] title is still a TODO" in todo.out
    assert f"{NEW}.yaml:10: error: [placeholder] best_for is still a TODO" in todo.out
    path = new_file(repo)
    lines = path.read_text().splitlines()
    lines[5] = "title: Qwen3.8 27B dual, a test of the pull request"
    lines[9] = "best_for: trying the pull request"
    path.write_text("\n".join(lines) + "\n")
    assert invoke("render", "--all").code == 0

    passed = invoke("check")
    assert passed.code == 0, passed.out
    assert "check passed" in passed.out
    assert NEW in (repo / "docs" / "CATALOG.md").read_text()


def test_new_refuses_an_existing_id(repo: Path, invoke: Invoke) -> None:
    original = (repo / "registry" / "profiles" / f"{SIBLING}.yaml").read_bytes()
    run = invoke("new", SIBLING, "--from", "qwen38-27b-dual-fast")
    assert run.code == 2
    assert "already exists" in run.err
    assert (repo / "registry" / "profiles" / f"{SIBLING}.yaml").read_bytes() == original


def test_new_refuses_an_unknown_sibling_with_a_suggestion(repo: Path, invoke: Invoke) -> None:
    run = invoke("new", NEW, "--from", "qwen38-27b-dual-superfst")
    assert run.code == 2
    assert f"did you mean {SIBLING!r}" in run.err
    assert not new_file(repo).exists()


def test_new_writes_nothing_when_the_result_is_invalid(repo: Path, invoke: Invoke) -> None:
    run = invoke("new", NEW, "--from", SIBLING, "--set", "envelope.tp=two")
    assert run.code == 1
    assert f"registry/profiles/{NEW}.yaml:" in run.err  # located in the file it would write
    assert "envelope.tp" in run.err
    assert not new_file(repo).exists()
    # The drafter's maximum is only known once the profile is resolved.
    run = invoke("new", NEW, "--from", SIBLING, "--set", "drafter.width=99")
    assert run.code == 1
    assert "exceeds" in run.err
    assert not new_file(repo).exists()


def test_new_refuses_a_profile_that_fails_the_hardware_rules(repo: Path, invoke: Invoke) -> None:
    run = invoke("new", NEW, "--from", SIBLING, "--set", "envelope.tp=4")
    assert run.code == 1, run.text
    assert run.err.splitlines() == [
        f"registry/profiles/{NEW}.yaml:10: error: [hw-tp] TP 4 needs 4 GPUs, rig 2x3090-pcie "
        "has 2 (use TP 1 or 2)",
        # The fit of an envelope whose TP the rig cannot hold says nothing more: the sibling's
        # own KV shortfall is not reported again for it.
        "1 error, 0 warnings",
    ]
    assert not new_file(repo).exists()
    # On a WSL2 rig, the utilization it inherits breaks the rig's policy: named, and refused.
    run = invoke("new", NEW, "--from", SIBLING, "--set", "rig=2x3090-pcie-x16x4-wsl2")
    assert run.code == 1, run.text
    assert "error: [hw-memory] utilization" in run.err
    assert f"(inherited by {NEW})" in run.err
    assert not new_file(repo).exists()


def test_new_rejects_malformed_overrides(invoke: Invoke) -> None:
    for bad in ("envelope.max_model_len", "id=other", "a..b=1"):
        run = invoke("new", NEW, "--from", SIBLING, "--set", bad)
        assert run.code == 2, (bad, run.text)


def test_new_from_an_abstract_base_lists_no_sibling(repo: Path, invoke: Invoke) -> None:
    run = invoke(
        "new",
        NEW,
        "--from",
        "qwen3.8-27b-autoround-int4-vllm-v0.27.1-base",
        "--set",
        "rig=2x3090-pcie",
        "--set",
        "envelope.tp=2",
        "--set",
        "envelope.max_model_len=131072",
    )
    assert run.code == 0, run.text
    registry = open_registry(repo)
    profile = registry.profiles[NEW]
    assert profile.siblings == []  # an abstract base is not a profile a user can pick
    assert profile.title == ("TODO: Qwen3.8-27B INT4 AutoRound, TP2 on 2x3090-pcie, 128K")
    assert profile.best_for == "TODO: who should pick it, and over which sibling"
    assert profile.port not in {p.port for i, p in registry.profiles.items() if i != NEW}
