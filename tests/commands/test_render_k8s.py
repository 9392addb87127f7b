"""`render --target k8s` from the command line: bundles, refusals, the opt-in checked-in tree."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from profilegen.commands.render import command as render_command
from profilegen.commands.render_k8s import k8s_options
from profilegen.registry import find_profile
from profilegen.render.targets.k8s import RenderedK8s, render_k8s
from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.repo import fast_schemas, shared_registry  # noqa: F401 (fixture)

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
        (
            ("--model-volume", "shared", "--storage-class", "nfs"),
            "error: --model-volume, --storage-class apply only to --target k8s\n",
        ),
        (
            ("--target", "k8s", "--model-volume", "shared"),
            "error: --model-volume: shared is one ReadWriteMany claim for every pod: name a "
            "storage class that provides ReadWriteMany (NFS, CephFS, EFS, Filestore) with "
            "--storage-class\n",
        ),
        (
            ("--target", "k8s", "--model-volume", "hostpath:srv"),
            "error: --model-volume: 'srv' is not an absolute path on the nodes\n",
        ),
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
        == "compose/, docs/ and k8s/ are up to date (16 files)\n"
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


# --------------------------------------------------------------------------- the README


REPO = Path(__file__).resolve().parents[2]
VALUED = {"-n", "-c", "-l", "-f"}


def readme_commands() -> list[list[str]]:
    """The shell lines of the README's Kubernetes section, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## Kubernetes\n")
    section = text[start : text.index("\n## ", start + 1)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [shlex.split(line, comments=True) for block in blocks for line in block.splitlines()]


def kubectl_args(argv: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """Positional words, options (`-n NS`, `--for=...`, `--server-side`) and the values of
    `--from-literal` of a kubectl line; `-f` takes a file only where it is not `--follow`."""
    valued = {*VALUED} if argv[1] == "apply" else VALUED - {"-f"}
    words, options, literals, rest = [], {}, [], iter(argv[1:])
    for word in rest:
        if word in valued:
            options[word] = next(rest)
        elif word.startswith("--from-literal="):
            literals.append(word.split("=", 1)[1])
        elif word.startswith("-"):
            name, _, value = word.partition("=")
            options[name] = value
        else:
            words.append(word)
    return words, options, literals


def render_like_the_cli(args: list[str]) -> tuple[RenderedK8s, str]:
    """`profilegen render ARGS` parsed by the command's own options, rendered (stdout)."""
    params = render_command.make_context("render", list(args)).params
    options, _ = k8s_options(
        params["target"],
        params["namespace"],
        params["replicas"],
        params["nodes"],
        params["model_volume"],
        params["storage_class"],
        params["hf_secret"],
    )
    assert options is not None and params["output"] is not None, args
    registry = shared_registry()
    rendered = render_k8s(registry, find_profile(registry, params["profile"]), options)
    return rendered, str(params["output"])


def pod_of(rendered: RenderedK8s, target: str) -> dict[str, Any]:
    """The pod a kubectl target names: deploy/NAME, or a LeaderWorkerSet's NAME-0, NAME-0-1."""
    if target == f"deploy/{rendered.name}":
        assert not rendered.layout.multi_node
        return rendered.pod("server")
    assert rendered.layout.multi_node, target
    role = {f"{rendered.name}-0": "leader", f"{rendered.name}-0-1": "worker"}[target]
    return rendered.pod(role)


def check_kubectl(argv: list[str], rendered: RenderedK8s) -> None:
    words, options, literals = kubectl_args(argv)
    objects = {(o["kind"], o["metadata"]["name"]): o for o in rendered.objects}
    namespace = rendered.plan.options.namespace
    assert options.get("-n", namespace) == namespace, argv
    verb = words[0]
    if words[:2] == ["create", "namespace"]:
        assert words[2] == namespace
    elif words[:3] == ["create", "secret", "generic"]:
        assert words[3] == rendered.plan.options.hf_secret
        keys = {literal.split("=", 1)[0] for literal in literals}
        text = rendered.yaml.decode()
        assert all(f"key: {key}" in text for key in keys) and keys
    elif verb == "logs":
        spec = pod_of(rendered, words[1])
        names = [c["name"] for c in [*spec["initContainers"], *spec["containers"]]]
        assert options["-c"] in names, (argv, names)
    elif words[:2] == ["rollout", "status"]:
        assert ("Deployment", words[2].removeprefix("deploy/")) in objects
    elif verb == "wait" and words[1] == "job":
        labels = dict(pair.split("=") for pair in options["-l"].split(","))
        jobs = [o for o in rendered.objects if o["kind"] == "Job"]
        assert jobs and all(labels.items() <= j["metadata"]["labels"].items() for j in jobs)
    elif verb == "wait":
        assert options["--for"] == "condition=Ready"
        pod_of(rendered, words[1].removeprefix("pod/"))
    elif verb == "port-forward":
        service = objects[("Service", words[1].removeprefix("svc/"))]
        assert [p["port"] for p in service["spec"]["ports"]] == [int(words[2])]
    else:
        raise AssertionError(f"the README runs a kubectl command no test checks: {argv}")


def test_the_readme_walk_through_names_what_the_renders_create() -> None:
    """Every command of the README's Kubernetes walk-through, against the objects the render
    line before it creates: namespace, Secret and its keys, pods and their loader containers,
    the Job and the Service."""
    rendered: dict[str, RenderedK8s] = {}
    current: RenderedK8s | None = None
    checked = renders = 0
    for argv in readme_commands():
        if argv[0].endswith("/profilegen"):
            assert argv[1:3] == ["render", argv[2]] and "--target" in argv
            out, folder = render_like_the_cli(argv[2:])
            rendered[folder] = current = out
            renders += 1
        elif argv[:2] == ["kubectl", "apply"]:
            _, options, _ = kubectl_args(argv)
            if "--server-side" in options:  # LeaderWorkerSet itself, from its release
                assert options["-f"].endswith("/v0.10.0/manifests.yaml")
                continue
            current = rendered[options["-f"].rstrip("/")]
        elif argv[:2] == ["kubectl", "get"]:
            assert argv[2] == "storageclass"
        else:
            assert argv[0] == "kubectl" and current is not None, argv
            check_kubectl(argv, current)
            checked += 1
    assert (renders, checked) == (3, 10)
