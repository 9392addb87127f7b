"""The hostile-registry corpus: small registries built from tests/registry/base, one per case.

Each case lays files over a fresh copy of the base (or builds what cannot be a plain file:
symlinks, FIFOs, folders), runs one command and states how it must end: the exit code and
the exact located findings, or a clean success. A case marked `bounded` runs the real CLI in
a subprocess with a time and memory limit: the classes that used to hang, eat gigabytes or
crash the interpreter. `test_hostile.py` also proves every failing run wrote nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

Setup = Callable[[Path], None]

MODELINE = "# yaml-language-server: $schema=../../schema/{}.schema.json\n"
GPU = "registry/gpus/rtx-3090.yaml"
RIG = "registry/rigs/2x3090.yaml"
MODEL = "registry/models/tiny-7b.yaml"
PROFILE = "registry/profiles/tiny-chat.yaml"
CHILD = "registry/profiles/tiny-chat-long.yaml"
PATCH_FILE = "registry/patches/files/tiny-fix/fix.patch"
LOCK = "profilegen.lock.json"
LAYOUT_HINT = "(registry/{0}/ holds one *.yaml file per {1})"


@dataclass(frozen=True)
class Case:
    name: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    setup: tuple[Setup, ...] = ()
    args: tuple[str, ...] = ("check",)
    code: int = 1
    # Every located finding the run prints (`file:line: severity: [rule] message`), exactly.
    findings: tuple[str, ...] = ()
    # Other lines the output must hold (a command's own error, a summary).
    says: tuple[str, ...] = ()
    bounded: bool = False  # the real CLI in a subprocess, with a time and memory limit


# -- building blocks -------------------------------------------------------------------------


def doc(kind: str, body: str) -> str:
    return MODELINE.format(kind) + body


def gpu(body: str) -> str:
    """A gpu file (id `bad`, file registry/gpus/bad.yaml) with `body` after the modeline."""
    return doc("gpu", body)


def alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return gpu("\n".join(lines) + "\n")


def edit(path: str, old: str, new: str) -> Setup:
    def apply(root: Path) -> None:
        target = root / path
        text = target.read_text(encoding="utf-8")
        assert old in text, f"{path} has no {old!r}"
        target.write_text(text.replace(old, new, 1), encoding="utf-8")

    return apply


def symlink(path: str, target: str) -> Setup:
    def apply(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to(target)

    return apply


def fifo(path: str) -> Setup:
    return lambda root: os.mkfifo(root / path)


def folder(path: str) -> Setup:
    return lambda root: (root / path).mkdir(parents=True)


def remove(path: str) -> Setup:
    return lambda root: (root / path).unlink()


def lock_entry(key: str, **changes: object) -> Setup:
    def apply(root: Path) -> None:
        data = json.loads((root / LOCK).read_text())
        data["artifacts"][key].update(changes)
        (root / LOCK).write_text(json.dumps(data, indent=2))

    return apply


def lock_text(text: str) -> Setup:
    return lambda root: (root / LOCK).write_text(text)


def schema_finding(path: str, line: int, message: str, hint: str = "") -> str:
    return f"{path}:{line}: error: [schema] {message}" + (f" ({hint})" if hint else "")


BOMB = "the document expands to more than 50,000 values (an alias bomb?)"
BOMB_HINT = "registry files are small: write values out instead of nesting aliases"
DEEP = "nesting deeper than 64 levels"
OUTSIDE = "resolves outside the repository (a symlink?); only files inside it are read"
TOO_BIG = "is {:,} bytes, more than the 256 KiB profilegen reads"
LOCK_HINT = "run `profilegen lock` with network access to record it again"


def cases() -> list[Case]:
    return [*_yaml_cases(), *_layout_cases(), *_integrity_cases(), *_write_cases()]


# -- YAML that hangs, explodes or crashes a naive loader (issue item 1) ----------------------


def _yaml_cases() -> list[Case]:
    bad = "registry/gpus/bad.yaml"
    return [
        Case(
            "alias-bomb-7-levels-list",
            {bad: alias_bomb(7)},
            args=("list",),
            findings=(schema_finding(bad, 6, BOMB, BOMB_HINT),),
            bounded=True,
        ),
        Case(
            "alias-bomb-10-levels-check",
            {bad: alias_bomb(10)},
            findings=(schema_finding(bad, 6, BOMB, BOMB_HINT),),
            bounded=True,
        ),
        Case(
            "alias-bomb-in-a-profile-show",
            {"registry/profiles/bomb.yaml": alias_bomb(8).replace("gpu.schema", "profile.schema")},
            args=("show", "tiny-chat"),
            findings=(schema_finding("registry/profiles/bomb.yaml", 6, BOMB, BOMB_HINT),),
        ),
        Case(
            "alias-self-reference-in-a-list",
            {bad: gpu("a: &a [1, *a]\n")},
            args=("list",),
            findings=(schema_finding(bad, 2, "alias *a refers to a node that contains it"),),
        ),
        Case(
            "alias-self-reference-in-a-mapping",
            {bad: gpu("a: &a\n  b: *a\n")},
            findings=(schema_finding(bad, 3, "alias *a refers to a node that contains it"),),
        ),
        Case(
            "alias-undefined",
            {bad: gpu("id: bad\nname: *nowhere\n")},
            findings=(schema_finding(bad, 3, "alias *nowhere names no anchor defined before it"),),
        ),
        Case(
            "alias-over-a-thousand",
            {bad: gpu("a: &a x\nb: [" + ", ".join(["*a"] * 1001) + "]\n")},
            findings=(schema_finding(bad, 3, "more than 1,000 aliases in one document"),),
        ),
        Case(
            "nesting-5000-deep-flow-list",
            {bad: gpu("a: " + "[" * 5000 + "]" * 5000 + "\n")},
            args=("list",),
            findings=(schema_finding(bad, 2, DEEP),),
        ),
        Case(
            "nesting-100000-deep-flow-list",
            {bad: gpu("a: " + "[" * 100_000 + "]" * 100_000 + "\n")},
            findings=(schema_finding(bad, 2, DEEP),),
            bounded=True,
        ),
        Case(
            "nesting-5000-deep-flow-mapping",
            {bad: gpu("a: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")},
            findings=(schema_finding(bad, 2, DEEP),),
        ),
        Case(
            "nesting-100-deep-block-mapping",
            {bad: gpu("".join(" " * i + "a:\n" for i in range(100)) + " " * 100 + "b\n")},
            findings=(schema_finding(bad, 66, DEEP),),
        ),
        Case(
            "file-over-the-size-cap",
            {bad: gpu("#" + "x" * 300_000 + "\nid: bad\n")},
            findings=(f"{bad}: error: [layout] bad.yaml {TOO_BIG.format(300_071)}",),
        ),
        Case(
            "file-of-50-megabytes",
            {bad: gpu("# " + "padding " * 6_500_000 + "\n")},
            args=("list",),
            findings=(f"{bad}: error: [layout] bad.yaml {TOO_BIG.format(52_000_064)}",),
            bounded=True,
        ),
        Case(
            "two-documents",
            {bad: gpu("id: bad\n---\nid: worse\n")},
            findings=(
                schema_finding(bad, 3, "a registry file holds one YAML document, found a second"),
            ),
        ),
        Case(
            "merge-key",
            {bad: gpu("base: &b {x: 1}\nother:\n  <<: *b\n")},
            findings=(
                schema_finding(
                    bad, 4, "merge keys (<<) are not supported in registry files", "use `extends`"
                ),
            ),
        ),
        Case(
            "python-object-tag",
            {bad: gpu("id: !!python/object/apply:os.system [echo owned]\n")},
            findings=(
                schema_finding(
                    bad, 2, "tag !!python/object/apply:os.system is not allowed in a registry file"
                ),
            ),
        ),
        Case(
            "binary-tag",
            {bad: gpu("id: !!binary aGVsbG8=\n")},
            findings=(schema_finding(bad, 2, "tag !!binary is not allowed in a registry file"),),
        ),
        Case(
            "set-tag",
            {bad: gpu("id: !!set {a, b}\n")},
            findings=(schema_finding(bad, 2, "tag !!set is not allowed in a registry file"),),
        ),
        Case(
            "custom-tag",
            {bad: gpu("id: !env HOME\n")},
            findings=(schema_finding(bad, 2, "tag !env is not allowed in a registry file"),),
        ),
        Case(
            "int-tag-on-text",
            {bad: gpu("id: !!int abc\n")},
            findings=(schema_finding(bad, 2, "cannot read 'abc' as int"),),
        ),
        Case(
            "complex-key",
            {bad: gpu("? [a, b]\n: c\n")},
            findings=(
                schema_finding(bad, 2, "a key must be a plain value, not a mapping or a list"),
            ),
        ),
        Case(
            "utf16-file",
            {bad: gpu("id: bad\n").encode("utf-16")},
            findings=(schema_finding(bad, 1, "file is UTF-16 text", "save it as UTF-8"),),
        ),
        Case(
            "binary-file",
            {bad: b"\x7fELF\x02\x01\x01\x00\x00\n\x00\x00"},
            findings=(schema_finding(bad, 1, "file is binary (it holds a NUL byte), not YAML"),),
        ),
        Case(
            "latin-1-file",
            {bad: gpu("id: bad\nname: Caf\xe9\n").encode("latin-1")},
            findings=(schema_finding(bad, 3, "file is not valid UTF-8"),),
        ),
        Case(
            "control-character",
            {bad: gpu("id: bad\nname: bell\x07\n")},
            findings=(
                schema_finding(
                    bad, 3, "malformed YAML: character #x07: control characters are not allowed"
                ),
            ),
        ),
        Case(
            "tab-indentation",
            {bad: gpu("id: bad\nvram:\n\tvalue: 24\n")},
            findings=(
                schema_finding(
                    bad, 4, "malformed YAML: found character that cannot start any token"
                ),
            ),
        ),
        Case(
            "utf8-byte-order-mark-is-fine",
            setup=(edit(GPU, "# yaml", "\ufeff# yaml"),),
            code=0,
            says=("check passed: 0 errors, 0 warnings",),
        ),
        Case(
            "small-anchors-are-fine",
            setup=(
                edit(PROFILE, "siblings: [tiny-chat-long]", "siblings: [&s tiny-chat-long]"),
                edit(PROFILE, "title: Tiny", "caveats: [&c one, *c]\ntitle: Tiny"),
            ),
            args=("list",),
            code=0,
        ),
        Case(
            "impossible-date-unquoted",
            setup=(_evidence("2026-13-45"),),
            findings=(
                schema_finding(
                    CHILD, 11, "evidence.0.date: 2026-13-45 is not a calendar date (YYYY-MM-DD)"
                ),
            ),
        ),
        Case(
            "impossible-date-quoted",
            setup=(_evidence('"2026-02-30"'),),
            findings=(
                schema_finding(
                    CHILD, 11, "evidence.0.date: 2026-02-30 is not a calendar date (YYYY-MM-DD)"
                ),
            ),
        ),
        Case(
            "plain-date-is-read-as-text",
            setup=(_evidence("2026-02-28"),),
            args=("show", "tiny-chat-long", "--format", "json"),
            code=0,
            says=('"date": "2026-02-28"',),
        ),
        Case(
            "extends-chain-too-deep",
            setup=(_chain_of(18),),
            args=("list",),
            findings=tuple(
                f"registry/profiles/chain-{i}.yaml:3: error: [extends-depth] extends chain is "
                f"deeper than 16 levels (chain-{i} -> chain-{i - 1} -> chain-{i - 2} -> "
                f"chain-{i - 3} -> …)"
                for i in (17, 18)
            ),
        ),
        Case(
            "integer-key",
            setup=(edit(PROFILE, "port: 8200", "port: 8200\n1: one"),),
            findings=(
                schema_finding(
                    PROFILE,
                    12,
                    "unknown key '1'",
                    "allowed keys: id, abstract, extends, upstream_key, title, status, model, "
                    "weights, mmproj, engine, rig, drafter, patches, port, bind_host, nvlink_mode, "
                    "envelope, serve, switches, tunables, env, mounts, user_gid, passthrough, "
                    "shm_size, restart, template_note, best_for, caveats, siblings, evidence, "
                    "notes",
                ),
            ),
        ),
    ]


def _chain_of(length: int) -> Setup:
    """chain-1 extends tiny-chat, chain-2 extends chain-1, … (each with its own port)."""

    def apply(root: Path) -> None:
        for i in range(1, length + 1):
            parent = "tiny-chat" if i == 1 else f"chain-{i - 1}"
            body = f"id: chain-{i}\nextends: {parent}\ntitle: link {i}\nport: {9000 + i}\n"
            (root / f"registry/profiles/chain-{i}.yaml").write_text(doc("profile", body))

    return apply


def _evidence(date: str) -> Setup:
    return edit(
        CHILD,
        "siblings: [tiny-chat]",
        "siblings: [tiny-chat]\nevidence:\n"
        f"  - date: {date}\n    rig: 2x3090\n    source: a run\n    measured: {{boots: true}}",
    )


# -- what sits in registry/: symlinks, FIFOs, folders, strays (issue item 5) -----------------


def _layout_cases() -> list[Case]:
    profiles = "registry/profiles"
    hint = LAYOUT_HINT.format("profiles", "profile")
    return [
        Case(
            "symlink-to-a-secret-outside",
            setup=(symlink(f"{profiles}/secret.yaml", "/etc/passwd"),),
            findings=(f"{profiles}/secret.yaml: error: [layout] secret.yaml {OUTSIDE}",),
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
                "drafters, patches, profiles)",
            ),
        ),
        Case(
            "hidden-files-are-skipped",
            files={f"{profiles}/.gitkeep": "", f"{profiles}/.tiny-chat.yaml.swp": b"\x00\x01"},
            code=0,
            says=("check passed: 0 errors, 0 warnings",),
        ),
        Case(
            "vendored-patch-linked-outside",
            setup=(remove(PATCH_FILE), symlink(PATCH_FILE, "/etc/passwd")),
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


# -- what the files say: keys, addresses, inheritance, the lock (items 3, 5, 6) --------------


def _integrity_cases() -> list[Case]:
    key_hint = "each upstream key names one profile; keep it on one of them"
    lock_unverified = (
        "is locked from declared facts only: no commit, file sizes or sha256 to verify a "
        "download against (run `profilegen lock` with network access; until then `fetch` can "
        "check only the declared size)"
    )
    return [
        Case(
            "duplicate-upstream-key",
            setup=(
                edit(PROFILE, "port: 8200", "port: 8200\nupstream_key: vllm/tiny"),
                edit(CHILD, "siblings:", "upstream_key: vllm/tiny\nsiblings:"),
            ),
            findings=(
                f"{CHILD}:9: error: [reference] upstream_key 'vllm/tiny' is also the key of "
                f"tiny-chat ({PROFILE}:12) ({key_hint})",
                f"{PROFILE}:12: error: [reference] upstream_key 'vllm/tiny' is also the key of "
                f"tiny-chat-long ({CHILD}:9) ({key_hint})",
            ),
        ),
        Case(
            "duplicate-upstream-key-show",
            setup=(
                edit(PROFILE, "port: 8200", "port: 8200\nupstream_key: vllm/tiny"),
                edit(CHILD, "siblings:", "upstream_key: vllm/tiny\nsiblings:"),
            ),
            args=("show", "vllm/tiny"),
            findings=(
                f"{CHILD}:9: error: [reference] upstream_key 'vllm/tiny' is also the key of "
                f"tiny-chat ({PROFILE}:12) ({key_hint})",
                f"{PROFILE}:12: error: [reference] upstream_key 'vllm/tiny' is also the key of "
                f"tiny-chat-long ({CHILD}:9) ({key_hint})",
            ),
            says=("2 errors, 0 warnings",),
        ),
        Case(
            "bind-host-a-name",
            setup=(edit(PROFILE, "port: 8200", "port: 8200\nbind_host: localhost"),),
            findings=(
                schema_finding(
                    PROFILE,
                    12,
                    "bind_host: String should match pattern '^[0-9a-fA-F.:]+$' (got 'localhost')",
                ),
            ),
        ),
        Case(
            "bind-host-impossible-address",
            setup=(edit(PROFILE, "port: 8200", "port: 8200\nbind_host: 999.1.1.1"),),
            findings=(
                # Its own file is invalid, so tiny-chat-long (which extends it) is not read.
                schema_finding(
                    PROFILE, 12, "bind_host: '999.1.1.1' is not an IPv4 or IPv6 address"
                ),
            ),
        ),
        Case(
            "bind-host-ipv6-renders",
            setup=(edit(PROFILE, "port: 8200", "port: 8200\nbind_host: '::1'"),),
            args=("render", "tiny-chat"),
            code=0,
            says=('"::1:${PORT:-8200}:8000"',),
        ),
        Case(
            "inherited-tp-beyond-the-rig",
            setup=(edit(PROFILE, "  tp: 2", "  tp: 4"), _rerender),
            findings=(
                f"{PROFILE}:13: error: [hw-tp] TP 4 needs 4 GPUs, rig 2x3090 has 2 "
                "(inherited by tiny-chat-long)",
            ),
        ),
        Case(
            "inherited-utilization-over-the-rig-policy",
            setup=(
                edit(
                    RIG,
                    "host_os: linux",
                    "host_os: linux\npolicy:\n  max_gpu_memory_utilization: 0.85\n  reason: a desktop shares card 0",
                ),
                _rerender,
            ),
            findings=(
                f"{PROFILE}:17: error: [hw-memory] utilization 0.9 exceeds rig 2x3090's policy "
                "of 0.85 (inherited by tiny-chat-long) (a desktop shares card 0)",
            ),
        ),
        Case(
            "lock-claims-5-bytes-for-15-gb",
            setup=(
                lock_entry(
                    "tiny-7b/bf16",
                    files=[{"path": "model.safetensors", "size": 5, "sha256": "a1" * 32}],
                    total_size=5,
                ),
            ),
            findings=(
                f"{MODEL}:17: error: [lock] {LOCK} entry of artifact tiny-7b/bf16 records 5 bytes "
                "of files, the registry declares 15,000,000,000 (±5%): it cannot vouch for the "
                f"files ({LOCK_HINT})",
            ),
        ),
        Case(
            "lock-with-a-malformed-sha256",
            setup=(
                lock_entry(
                    "tiny-eagle",
                    files=[{"path": "model.safetensors", "size": 500_000_000, "sha256": "abc"}],
                    total_size=500_000_000,
                ),
            ),
            findings=(
                "registry/drafters/tiny-eagle.yaml:5: error: [lock] profilegen.lock.json entry of "
                "artifact tiny-eagle records model.safetensors with a malformed sha256: it cannot "
                f"vouch for the files ({LOCK_HINT})",
            ),
        ),
        Case(
            "lock-resolved-without-files",
            setup=(lock_entry("tiny-eagle", files=[], total_size=None),),
            findings=(
                "registry/drafters/tiny-eagle.yaml:5: error: [lock] profilegen.lock.json entry of "
                f"artifact tiny-eagle records no files: it cannot vouch for the files ({LOCK_HINT})",
            ),
        ),
        Case(
            "lock-unresolved-is-a-warning",
            setup=(
                lock_entry("tiny-eagle", resolved=False, commit=None, files=[], total_size=None),
            ),
            code=0,
            findings=(
                "registry/drafters/tiny-eagle.yaml:5: warning: [lock] artifact tiny-eagle (used "
                f"by tiny-chat, tiny-chat-long) {lock_unverified}",
            ),
        ),
        Case(
            "lock-declared-size-changed",
            setup=(edit(MODEL, "{value: 15, unit: GB}", "{value: 16, unit: GB}"), _rerender),
            findings=(
                f"{MODEL}:17: error: [lock] artifact tiny-7b/bf16 changed since {LOCK} was "
                "written (run `profilegen lock`)",
            ),
        ),
        Case(
            "lock-not-json",
            setup=(lock_text("{ not json"),),
            findings=(
                f"{LOCK}: error: [lock] cannot be read as JSON (Expecting property name enclosed "
                "in double quotes: line 1 column 3 (char 2)); rerun `profilegen lock`",
            ),
        ),
        Case(
            "lock-entries-not-objects",
            setup=(lock_text('{"lock_version": 1, "artifacts": {"tiny-eagle": 5}}'),),
            findings=(
                f"{LOCK}: error: [lock] artifacts must map keys to entries; rerun `profilegen lock`",
            ),
        ),
        Case(
            "lock-not-json-fetch-dry-run",
            setup=(lock_text("[]"),),
            args=("fetch", "tiny-chat", "--model-dir", "{out}", "--dry-run"),
            says=(f"error: {LOCK}: unknown lock_version; rerun `profilegen lock`",),
        ),
        Case(
            "fetch-dry-run-from-an-unresolved-lock",
            setup=(
                lock_entry("tiny-eagle", resolved=False, commit=None, files=[], total_size=None),
            ),
            args=("fetch", "tiny-chat", "--model-dir", "{out}", "--dry-run"),
            code=0,
            says=("file list unknown without the Hub",),
        ),
    ]


def _rerender(root: Path) -> None:
    """Regenerates compose/ and docs/ so that only the case's own finding remains."""
    from tests.support.cli import invoke_in

    invoke_in(root, "render", "--all")


# -- write commands: a failed run leaves the tree byte for byte (acceptance) -----------------


def _write_cases() -> list[Case]:
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
                "2x3090 has 2",
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
            says=("error: cannot access",),
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
