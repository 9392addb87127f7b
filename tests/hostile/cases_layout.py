"""Corpus: what sits in registry/ (symlinks, FIFOs, folders, strays) and write commands that fail."""

from __future__ import annotations

from tests.hostile.build import (
    BOMB,
    BOMB_HINT,
    LAYOUT_HINT,
    OUTSIDE,
    PATCH_FILE,
    PROFILE,
    SECRET,
    Case,
    alias_bomb,
    doc,
    edit,
    fifo,
    folder,
    remove,
    schema_finding,
    symlink,
)


def layout_cases() -> list[Case]:
    profiles = "registry/profiles"
    hint = LAYOUT_HINT.format("profiles", "profile")
    return [
        Case(
            "symlink-to-a-secret-outside",
            setup=(symlink(f"{profiles}/secret.yaml", "/etc/passwd"),),
            findings=(f"{profiles}/secret.yaml: error: [layout] secret.yaml {OUTSIDE}",),
            never=(SECRET,),
        ),
        Case(
            "symlink-to-an-outside-folder",
            setup=(symlink(f"{profiles}/etc", "/etc"),),
            findings=(f"{profiles}/etc: error: [layout] etc {OUTSIDE}",),
        ),
        Case(
            "kind-folder-linked-outside",
            setup=(
                lambda root: (root / "registry" / "rigs").rename(root.parent / "rigs-outside"),
                symlink("registry/rigs", "../../rigs-outside"),
            ),
            findings=(
                f"registry/rigs: error: [layout] rigs {OUTSIDE}",
                # Its rigs are not read, so the rig a profile names is not defined.
                f"{PROFILE}:8: error: [reference] rig '2x3090' is not defined (inherited by "
                "tiny-chat-long) (known: none)",
            ),
        ),
        Case(
            "symlink-to-dev-zero",
            setup=(symlink(f"{profiles}/zero.yaml", "/dev/zero"),),
            findings=(f"{profiles}/zero.yaml: error: [layout] zero.yaml {OUTSIDE}",),
            bounded=True,
        ),
        Case(
            "symlink-inside-the-repository-is-followed",
            files={
                "shared/tiny-extra.yaml": doc(
                    "profile", "id: tiny-extra\nextends: tiny-chat\ntitle: extra\nport: 8300\n"
                )
            },
            setup=(symlink(f"{profiles}/tiny-extra.yaml", "../../shared/tiny-extra.yaml"),),
            args=("list",),
            code=0,
            says=("tiny-extra",),
        ),
        Case(
            "dangling-symlink",
            setup=(symlink(f"{profiles}/gone.yaml", "gone-for-good.yaml"),),
            findings=(f"{profiles}/gone.yaml: error: [layout] gone.yaml is a dangling symlink",),
        ),
        Case(
            "symlink-loop",
            setup=(
                symlink(f"{profiles}/a.yaml", "b.yaml"),
                symlink(f"{profiles}/b.yaml", "a.yaml"),
            ),
            findings=(
                f"{profiles}/a.yaml: error: [layout] a.yaml is a symlink loop",
                f"{profiles}/b.yaml: error: [layout] b.yaml is a symlink loop",
            ),
        ),
        Case(
            "fifo-named-yaml",
            setup=(fifo(f"{profiles}/pipe.yaml"),),
            findings=(
                f"{profiles}/pipe.yaml: error: [layout] pipe.yaml is a FIFO, not a regular file",
            ),
            bounded=True,
        ),
        Case(
            "fifo-among-profiles",
            setup=(fifo(f"{profiles}/pipe"),),
            code=0,
            findings=(f"{profiles}/pipe: warning: [layout] pipe is a FIFO: it is not read {hint}",),
            bounded=True,
        ),
        Case(
            "folder-named-yaml",
            setup=(folder(f"{profiles}/old.yaml"),),
            findings=(
                f"{profiles}/old.yaml: error: [layout] old.yaml is a folder, not a regular file",
            ),
        ),
        Case(
            "subfolder-of-profiles",
            files={f"{profiles}/drafts/tiny-draft.yaml": doc("profile", "id: tiny-draft\n")},
            code=0,
            findings=(
                f"{profiles}/drafts: warning: [layout] drafts is a folder: it is not read {hint}",
            ),
        ),
        Case(
            "stray-text-file",
            files={f"{profiles}/NOTES.txt": "remember the milk\n"},
            code=0,
            findings=(
                f"{profiles}/NOTES.txt: warning: [layout] NOTES.txt is not a YAML file: it is not read {hint}",
            ),
        ),
        Case(
            "stray-file-at-the-top",
            files={"registry/README.md": "# registry\n"},
            code=0,
            findings=(
                "registry/README.md: warning: [layout] README.md is a file: it is not read "
                "(registry files live in registry/<kind>/: gpus, rigs, engines, models, "
                "drafters, patches, profiles, gateways)",
            ),
        ),
        Case(
            "hidden-files-are-reported-but-an-empty-gitkeep",
            files={f"{profiles}/.gitkeep": "", f"{profiles}/.tiny-chat.yaml.swp": b"\x00\x01"},
            code=0,
            findings=(
                f"{profiles}/.tiny-chat.yaml.swp: warning: [layout] .tiny-chat.yaml.swp is a "
                f"hidden file: it is not read {hint}",
            ),
        ),
        Case(
            "vendored-patch-linked-outside",
            setup=(remove(PATCH_FILE), symlink(PATCH_FILE, "/etc/passwd")),
            never=(SECRET,),
            findings=(
                "registry/patches/tiny-fix.yaml:8: error: [patch-vendored] vendored file "
                f"registry/patches/files/tiny-fix/fix.patch {OUTSIDE}",
            ),
        ),
        Case(
            "vendored-patch-is-a-fifo",
            setup=(remove(PATCH_FILE), fifo(PATCH_FILE)),
            findings=(
                "registry/patches/tiny-fix.yaml:8: error: [patch-vendored] vendored file "
                "registry/patches/files/tiny-fix/fix.patch is a FIFO, not a regular file",
            ),
            bounded=True,
        ),
        Case(
            "vendored-folder-of-no-patch",
            files={"registry/patches/files/gone-patch/fix.patch": "old\n"},
            code=0,
            findings=(
                "registry/patches/files/gone-patch: warning: [patch-vendored] gone-patch belongs "
                "to no vendored patch: it is not read (registry/patches/files/<patch-id>/ holds "
                "the files of that vendored patch)",
            ),
        ),
    ]


def write_cases() -> list[Case]:
    bad = "registry/gpus/bad.yaml"
    bomb = schema_finding(bad, 6, BOMB, BOMB_HINT)
    return [
        Case(
            "render-all-with-an-alias-bomb",
            {bad: alias_bomb(9)},
            args=("render", "--all"),
            findings=(bomb,),
        ),
        Case(
            "render-bundle-with-an-alias-bomb",
            {bad: alias_bomb(9)},
            args=("render", "tiny-chat", "-o", "{out}"),
            findings=(bomb,),
        ),
        Case(
            "lock-offline-with-an-alias-bomb",
            {bad: alias_bomb(9)},
            args=("lock", "--offline"),
            findings=(bomb,),
        ),
        Case(
            "new-with-an-alias-bomb",
            {bad: alias_bomb(9)},
            args=("new", "tiny-new", "--from", "tiny-chat"),
            findings=(bomb,),
        ),
        Case(
            "new-beyond-the-rig",
            args=("new", "tiny-new", "--from", "tiny-chat", "--set", "envelope.tp=4"),
            findings=(
                "registry/profiles/tiny-new.yaml:10: error: [hw-tp] TP 4 needs 4 GPUs, rig "
                "2x3090 has 2 (use TP 1 or 2)",
            ),
        ),
        Case(
            "render-bundle-with-a-tampered-vendored-patch",
            setup=(edit(PATCH_FILE, "-", "+"),),
            args=("render", "tiny-chat", "-o", "{out}"),
            says=(
                "error: 1 patch file(s) are not available:",
                "  tiny-fix/fix.patch (sha256 dd5d0074ae46…): vendored file does not match its "
                "pinned sha256/size",
            ),
        ),
        Case(
            "render-k8s-bundle-with-a-tampered-vendored-patch",
            setup=(edit(PATCH_FILE, "-", "+"),),
            args=("render", "tiny-chat", "--target", "k8s", "-o", "{out}"),
            says=(
                "error: 1 patch file(s) are not available:",
                "  tiny-fix/fix.patch (sha256 dd5d0074ae46…): vendored file does not match its "
                "pinned sha256/size",
            ),
        ),
        Case(
            "render-k8s-with-a-title-that-is-yaml-and-shell",
            setup=(
                edit(
                    PROFILE,
                    "title: Tiny-7B bf16 + EAGLE-3, TP2",
                    'title: "yes\\n---\\nkind: Secret\\ndata: $(HF_TOKEN) ${HOME} \\u2028 #"',
                ),
            ),
            args=("render", "tiny-chat", "--target", "k8s"),
            code=0,
            says=(
                '    profilegen.io/title: "yes\\n---\\nkind: Secret\\ndata: $(HF_TOKEN) ${HOME} '
                '\\U00002028 #"',
            ),
            never=("\nkind: Secret",),
        ),
        Case(
            "render-bundle-with-a-vendored-fifo",
            setup=(remove(PATCH_FILE), fifo(PATCH_FILE)),
            args=("render", "tiny-chat", "-o", "{out}"),
            says=(
                "  tiny-fix/fix.patch (sha256 dd5d0074ae46…): vendored file is a FIFO, not a "
                "regular file",
            ),
            bounded=True,
        ),
        Case(
            "render-bundle-below-a-file",
            files={"blocker": "a file, not a folder\n"},
            args=("render", "tiny-chat", "-o", "{root}/blocker/bundle"),
            code=2,
            says=("error: cannot write {root}/blocker/bundle: Not a directory",),
        ),
        Case(
            "render-without-a-profile",
            args=("render",),
            code=2,
            says=("error: name a PROFILE to render (or use --all)",),
        ),
        Case(
            "render-all-with-a-profile",
            args=("render", "--all", "tiny-chat"),
            code=2,
            says=("error: --all renders every profile into compose/; give no PROFILE or -o",),
        ),
    ]
