"""`render --target k8s` from the command line: bundles, refusals, the opt-in checked-in tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

OPT_IN = "# yaml-language-server: $schema=../schema/settings.schema.json\nkubernetes: {checked_in: true}\n"

pytestmark = pytest.mark.usefixtures("fast_schemas")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("k8s") / "root")


@pytest.fixture
def root(built: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(built, tmp_path / "root"))


def test_bundle_holds_the_objects_the_patch_configmaps_and_the_manifest(root: Path) -> None:
    out = root.parent / "out"
    run = invoke_in(
        root, "render", "tiny-chat", "--target", "k8s", "--namespace", "llm", "-o", str(out)
    )
    assert run.code == 0, run.text
    assert run.err == f"wrote {out}/ (3 files): kubectl apply -f {out}/\n"
    assert sorted(p.name for p in out.iterdir()) == [
        "kubernetes.yaml",
        "patches.manifest.json",
        "patches.yaml",
    ]
    (patches,) = [d for d in YAML(typ="safe").load_all((out / "patches.yaml").read_text()) if d]
    assert patches["metadata"]["name"] == "tiny-chat-patch-tiny-fix"
    assert patches["metadata"]["namespace"] == "llm"
    assert (
        patches["data"]["fix.patch"]
        == (root / "registry/patches/files/tiny-fix/fix.patch").read_text()
    )
    stdout = invoke_in(root, "render", "tiny-chat", "--target", "k8s", "--namespace", "llm")
    assert stdout.out.encode() == (out / "kubernetes.yaml").read_bytes()
    assert "render with -o DIR to write them (patches.yaml)" in stdout.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--target", "k8s", "--namespace", "Tiny"),
            "error: --namespace: 'Tiny' is not a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)\n",
        ),
        (
            ("--target", "k8s", "--nodes", "3"),
            "error: registry/profiles/tiny-chat.yaml:13: tiny-chat's TP x PP = 2 GPUs do not split evenly over 3 nodes\n",
        ),
        (("--nodes", "2"), "error: --nodes applies only to --target k8s\n"),
    ],
)
def test_bad_input_is_a_usage_error_and_nothing_is_written(
    root: Path, args: tuple[str, ...], message: str
) -> None:
    out = root.parent / "out"
    run = invoke_in(root, "render", "tiny-chat", *args, "-o", str(out))
    assert (run.code, run.out, run.err) == (2, "", message)
    assert not out.exists()


def test_the_k8s_tree_is_checked_in_only_when_the_registry_opts_in(root: Path) -> None:
    refused = invoke_in(root, "render", "--all", "--target", "k8s")
    assert refused.code == 2 and "registry/settings.yaml to opt in" in refused.err
    assert not (root / "k8s").exists()
    (root / "registry" / "settings.yaml").write_text(OPT_IN)
    run = invoke_in(root, "render", "--all", "--target", "k8s")
    assert sorted(run.out.splitlines()) == [
        "wrote k8s/tiny-chat-long/kubernetes.yaml",
        "wrote k8s/tiny-chat/kubernetes.yaml",
    ]
    assert (
        invoke_in(root, "render", "--all").out
        == "compose/, docs/ and k8s/ are up to date (14 files)\n"
    )
    check = invoke_in(root, "check", "--quiet")
    assert check.code == 0, check.text
    tree = root / "k8s" / "tiny-chat" / "kubernetes.yaml"
    tree.write_text(tree.read_text().replace("replicas: 1", "replicas: 3"))
    (root / "k8s" / "stray").mkdir()
    check = invoke_in(root, "check", "--quiet")
    assert check.code == 1
    assert "k8s/tiny-chat/kubernetes.yaml differs from a fresh render" in check.out
    assert "k8s/stray/ has no profile registry/profiles/stray.yaml" in check.out
    (root / "registry" / "settings.yaml").unlink()
    (root / "k8s" / "stray").rmdir()
    check = invoke_in(root, "check", "--quiet")
    assert (
        "k8s/: error: [disk-orphan] k8s/ is generated only when registry/settings.yaml sets kubernetes.checked_in (delete it, or opt in)"
        in check.out
    )


def test_explain_shows_what_each_pod_of_a_group_runs(root: Path) -> None:
    worker = invoke_in(
        root, "explain", "tiny-chat", "--target", "k8s", "--nodes", "2", "--role", "worker"
    )
    assert worker.code == 0, worker.text
    assert "runs: ray\n  start\n  --block\n  --address=tiny-chat-0.tiny-chat:6379\n" in worker.out
    leader = invoke_in(root, "explain", "tiny-chat", "--target", "k8s", "--nodes", "2")
    assert "  --distributed-executor-backend ray\n" in leader.out
    pinned = invoke_in(root, "explain", "tiny-chat", "--target", "k8s", "-e", "TP=4")
    assert (pinned.code, pinned.err) == (
        2,
        "error: -e TP: the manifest sets it on the container, not a tunable\n",
    )
    assert invoke_in(root, "explain", "tiny-chat", "--role", "leader").code == 2
