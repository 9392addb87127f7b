"""Corpus: where bundles may be written, and writes that happen whole or not at all (items 8-10).

A case's `{out}` is the folder beside the registry root that the run writes to; a setup step
may fill it first (an older bundle, the user's own files).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.hostile.build import CHILD, PROFILE, Case, edit, rerender
from tests.support.cli import invoke_in

OTHER = (
    "holds the bundle of profile tiny-chat: choose another folder, or pass --force to replace "
    "it with the bundle of {0} (your .env and other files stay)"
)
NOT_A_BUNDLE = (
    "is not empty and holds no profilegen bundle: choose an empty or new folder, or pass "
    "--force to add the bundle to it (entries of the same names are replaced, nothing else is "
    "touched)"
)
INSIDE = (
    "is inside the registry ({root}/registry): a bundle is written outside it (choose another -o)"
)


def out_of(root: Path) -> Path:
    return root.parent / "out"


def bundle_of(profile: str, *extra: str) -> object:
    """Setup: {out} holds `profile`'s bundle, plus the user's .env and models/, and `extra`
    entries an older render left (a patch folder since dropped, a Kubernetes file)."""

    def apply(root: Path) -> None:
        out = out_of(root)
        run = invoke_in(root, "render", profile, "-o", str(out))
        assert run.code == 0, run.text
        (out / ".env").write_text("API_KEY=hunter2\n")
        (out / "models").mkdir()
        (out / "models" / "weights.bin").write_bytes(b"\0" * 16)
        for rel in extra:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text("from an older render\n")

    return apply


def user_folder(root: Path) -> None:
    out = out_of(root)
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    (out / "compose.yaml").write_text("services: {mine: {image: busybox}}\n")


def patches_is_a_file(root: Path) -> None:
    out = out_of(root)
    out.mkdir()
    (out / "patches").write_text("not a folder\n")


def manifest_profile(out: Path) -> str:
    return str(json.loads((out / "patches.manifest.json").read_text())["profile"])


def replaced_whole(profile: str) -> object:
    """The new bundle is `profile`'s, no entry of the older render survives, and the user's
    .env and models/ are untouched."""

    def judge(root: Path, out: Path) -> None:
        assert manifest_profile(out) == profile
        names = sorted(p.name for p in out.iterdir())
        assert names == [
            ".env",
            ".env.example",
            "compose.yaml",
            "entrypoint.sh",
            "helpers.sh",
            "models",
            "patches",
            "patches.manifest.json",
        ], names
        assert sorted(p.name for p in (out / "patches").iterdir()) == ["tiny-fix"]
        assert (out / ".env").read_text() == "API_KEY=hunter2\n"
        assert (out / "models" / "weights.bin").read_bytes() == b"\0" * 16

    return judge


def added_beside_user_files(root: Path, out: Path) -> None:
    assert manifest_profile(out) == "tiny-chat"
    assert (out / "notes.txt").read_text() == "mine\n"
    assert "io.profilegen.profile: tiny-chat" in (out / "compose.yaml").read_text()


def orphan_gone(root: Path, out: Path) -> None:
    assert not (root / "compose" / "tiny-gone").exists()
    assert "Tiny renamed" in (root / "compose" / "tiny-chat" / "compose.yaml").read_text()


def write_cases2() -> list[Case]:
    render = ("render", "tiny-chat", "-o")
    stale = ("patches/gone-patch/old.patch", "kubernetes.yaml")
    return [
        Case(
            "render-into-registry-profiles",
            args=(*render, "{root}/registry/profiles"),
            code=2,
            says=("error: {root}/registry/profiles " + INSIDE,),
        ),
        Case(
            "render-into-the-registry-itself",
            args=(*render, "{root}/registry"),
            code=2,
            says=("error: {root}/registry " + INSIDE,),
        ),
        Case(
            "render-into-the-registry-through-a-symlink",
            setup=(lambda root: (root.parent / "link").symlink_to(root / "registry"),),
            args=(*render, "{root}/../link/profiles/new"),
            code=2,
            says=("error: {root}/../link/profiles/new " + INSIDE,),
        ),
        Case(
            "render-into-an-empty-name",
            args=(*render, ""),
            code=2,
            says=("error: -o needs a folder (an empty name would mean the current folder)",),
        ),
        Case(
            "render-into-a-blank-name",
            args=(*render, "  "),
            code=2,
            says=("error: -o needs a folder (an empty name would mean the current folder)",),
        ),
        Case(
            "render-into-proc",
            args=(*render, "/proc/profilegen-bundle"),
            code=2,
            says=("error: cannot write /proc/profilegen-bundle: No such file or directory",),
        ),
        Case(
            "render-into-another-profiles-bundle",
            setup=(bundle_of("tiny-chat"),),
            args=("render", "tiny-chat-long", "-o", "{out}"),
            code=2,
            says=("error: {out} " + OTHER.format("profile tiny-chat-long"),),
        ),
        Case(
            "render-k8s-into-another-profiles-bundle",
            setup=(bundle_of("tiny-chat"),),
            args=("render", "tiny-chat-long", "--target", "k8s", "-o", "{out}"),
            code=2,
            says=("error: {out} " + OTHER.format("profile tiny-chat-long"),),
        ),
        Case(
            "gateway-into-a-profiles-bundle",
            setup=(bundle_of("tiny-chat"),),
            args=("gateway", "tiny-chat", "-o", "{out}"),
            code=2,
            says=("error: {out} " + OTHER.format("gateway gateway"),),
        ),
        Case(
            "render-into-another-profiles-bundle-forced",
            setup=(bundle_of("tiny-chat", *stale),),
            args=("render", "tiny-chat-long", "-o", "{out}", "--force"),
            code=0,
            leaves=replaced_whole("tiny-chat-long"),
        ),
        Case(
            "render-again-replaces-the-older-bundle-whole",
            setup=(bundle_of("tiny-chat", *stale),),
            args=(*render, "{out}"),
            code=0,
            leaves=replaced_whole("tiny-chat"),
        ),
        Case(
            "render-into-a-folder-of-other-files",
            setup=(user_folder,),
            args=(*render, "{out}"),
            code=2,
            says=("error: {out} " + NOT_A_BUNDLE,),
        ),
        Case(
            "render-into-a-folder-of-other-files-forced",
            setup=(user_folder,),
            args=(*render, "{out}", "--force"),
            code=0,
            leaves=added_beside_user_files,
        ),
        Case(
            "render-where-patches-is-a-file",
            setup=(patches_is_a_file,),
            args=(*render, "{out}"),
            code=2,
            says=("error: {out} " + NOT_A_BUNDLE,),
        ),
        Case(
            "render-all-blocked-halfway-writes-nothing",
            # tiny-chat-long's folder is a file: its compose cannot be written, so no other
            # file of the tree (tiny-chat's compose, the catalogue) may change either.
            setup=(
                lambda root: shutil.rmtree(root / "compose" / "tiny-chat-long"),
                lambda root: (root / "compose" / "tiny-chat-long").write_text("in the way\n"),
                edit(PROFILE, "title: Tiny-7B bf16 + EAGLE-3, TP2", "title: Tiny renamed"),
                edit(CHILD, "title: Tiny-7B bf16 + EAGLE-3, TP2, 128K", "title: Long renamed"),
            ),
            args=("render", "--all"),
            says=(
                "error: cannot access {root}/compose/tiny-chat-long/.env.example: Not a directory",
            ),
            code=2,
        ),
        Case(
            "render-all-replaces-an-orphan-and-a-stale-file-together",
            setup=(
                rerender,
                lambda root: shutil.copytree(
                    root / "compose" / "tiny-chat", root / "compose" / "tiny-gone"
                ),
                edit(PROFILE, "title: Tiny-7B bf16 + EAGLE-3, TP2", "title: Tiny renamed"),
            ),
            args=("render", "--all"),
            code=0,
            says=(
                "wrote compose/tiny-chat/compose.yaml",
                "removed compose/tiny-gone/compose.yaml",
            ),
            leaves=orphan_gone,
        ),
    ]
