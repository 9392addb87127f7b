"""The whole checked-in generated tree: compose/<id>/ for every profile (with the record of
what its container runs under the fixed scenarios), gateways/<id>/ for
every registry gateway, the docs/ pages, and k8s/<id>/ where the maintainers opted in
(registry/settings.yaml: kubernetes.checked_in)."""

from __future__ import annotations

from pathlib import Path

from ..docs.catalog import docs_plan
from ..errors import Finding, ProfilegenError
from ..explain.core import Explanation
from ..explain.record import RECORD_NAME, record
from ..explain.scenarios import explain_profiles
from ..lockfile.lock import Lock, read_lock
from ..registry import Registry
from ..render import Rendered, render_profile_cached
from ..render.estate import plan_estate
from ..render.targets.gateway import render_gateway
from ..render.targets.k8s import READ_LOCK, RenderedK8s, build_k8s, render_k8s

COMPOSE_DIR = "compose"
GATEWAYS_DIR = "gateways"
K8S_DIR = "k8s"
GENERATED_NAMES = frozenset(
    {
        "compose.yaml",
        "entrypoint.sh",
        "helpers.sh",
        "patches.manifest.json",
        ".env.example",
        RECORD_NAME,
    }
)
GATEWAY_NAMES = frozenset({"compose.yaml", "config.yaml", ".env.example"})
K8S_NAMES = frozenset({"kubernetes.yaml"})
# Folder -> the file names profilegen writes in each of its <id>/ folders.
PROFILE_DIRS = {COMPOSE_DIR: GENERATED_NAMES, K8S_DIR: K8S_NAMES}
GENERATED_DIRS = {**PROFILE_DIRS, GATEWAYS_DIR: GATEWAY_NAMES}


def render_all(registry: Registry, only: frozenset[str] | None = None) -> dict[str, Rendered]:
    """Every concrete profile (or those in `only`) rendered, by id."""
    return {
        p.id: render_profile_cached(registry, p)
        for p in registry.concrete_profiles()
        if only is None or p.id in only
    }


def k8s_all(
    registry: Registry,
    rendered: dict[str, Rendered],
    *,
    verify: bool,
    lock: Lock | None | object = READ_LOCK,
) -> dict[str, RenderedK8s | ProfilegenError]:
    """Every profile of `rendered` for Kubernetes (default options), or why it cannot be.

    `verify`: written out, read back and validated (what `render --all` writes); else only
    built (what `check` validates and compares). `lock`: as read (default: read it here).
    """
    out: dict[str, RenderedK8s | ProfilegenError] = {}
    make = render_k8s if verify else build_k8s
    try:
        locked = read_lock(registry.root) if lock is READ_LOCK else lock
    except ProfilegenError as exc:
        return dict.fromkeys(rendered, exc)
    for profile_id, result in rendered.items():
        try:
            out[profile_id] = make(
                registry, registry.profiles[profile_id], script=result.script, lock=locked
            )
        except ProfilegenError as exc:
            out[profile_id] = exc
    return out


def k8s_files(builds: dict[str, RenderedK8s | ProfilegenError]) -> dict[str, bytes]:
    """k8s/<id>/kubernetes.yaml of every profile that renders (the others are findings)."""
    files = {}
    for profile_id, built in builds.items():
        if isinstance(built, ProfilegenError):
            continue
        text = built.yaml or built.text().encode()
        files[f"{K8S_DIR}/{profile_id}/kubernetes.yaml"] = text
    return files


def plan_all(
    registry: Registry,
    rendered: dict[str, Rendered] | None = None,
    k8s: dict[str, RenderedK8s | ProfilegenError] | None = None,
    explained: dict[str, list[Explanation]] | None = None,
) -> dict[str, bytes]:
    """Relative path -> bytes of every generated file (compose/, gateways/, docs/, opted-in
    k8s/).

    Without `k8s`, the Kubernetes files are rendered here and any profile that cannot be
    rendered raises (what `render --all` needs). `explained`: the scenarios of `rendered`,
    when they have been run already (a check runs them once for all its rules).
    """
    rendered = rendered or render_all(registry)
    plan: dict[str, bytes] = {}
    for profile_id, result in rendered.items():
        for name, content in result.files().items():
            plan[f"{COMPOSE_DIR}/{profile_id}/{name}"] = content
    # What each container runs under the fixed scenarios: the review record of compose/<id>/.
    explained = explained if explained is not None else explain_profiles(registry, rendered)
    for profile_id in rendered:
        plan[f"{COMPOSE_DIR}/{profile_id}/{RECORD_NAME}"] = record(explained[profile_id])
    plan.update(docs_plan(registry))
    plan.update(plan_gateways(registry)[0])
    if registry.settings.kubernetes.checked_in:
        if k8s is None:
            k8s = k8s_all(registry, rendered, verify=True)
            for failed in k8s.values():
                if isinstance(failed, ProfilegenError):
                    raise failed
        plan.update(k8s_files(k8s))
    return plan


def plan_gateways(registry: Registry) -> tuple[dict[str, bytes], list[Finding]]:
    """gateways/<id>/ of every registry gateway that has no error, and the errors of the rest
    (`check` reports those through its gateway rules)."""
    plan: dict[str, bytes] = {}
    errors: list[Finding] = []
    for ident in sorted(registry.gateways):
        estate = plan_estate(registry, registry.gateways[ident], registered=True)
        if estate.errors:
            errors.extend(estate.errors)
            continue
        for name, content in render_gateway(registry, estate).files().items():
            plan[f"{GATEWAYS_DIR}/{ident}/{name}"] = content
    return plan, errors


def orphan_dirs(root: Path, keep: set[str], top: str = COMPOSE_DIR) -> list[Path]:
    """Folders of `top` that belong to no profile (or gateway); a symlink is none of them."""
    folder = root / top
    if folder.is_symlink() or not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if not p.is_symlink() and p.is_dir() and p.name not in keep
    )


def orphan_files(root: Path, keep: set[str], top: str = COMPOSE_DIR) -> list[Path]:
    """Generated files of profiles (or gateways) that no longer exist (nothing else)."""
    return [
        folder / name
        for folder in orphan_dirs(root, keep, top)
        for name in GENERATED_DIRS[top]
        if not (folder / name).is_symlink() and (folder / name).is_file()
    ]
