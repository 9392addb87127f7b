"""Corpus: YAML that hangs, explodes or crashes a naive loader (issue item 1)."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.build import (
    BOMB,
    BOMB_HINT,
    CHILD,
    DEEP,
    GPU,
    PROFILE,
    TOO_BIG,
    Case,
    Setup,
    alias_bomb,
    doc,
    edit,
    gpu,
    schema_finding,
)


def yaml_cases() -> list[Case]:
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
                    bad,
                    3,
                    "malformed YAML at column 11: character #x07: control characters are not "
                    "allowed",
                ),
            ),
        ),
        Case(
            "tab-indentation",
            {bad: gpu("id: bad\nvram:\n\tvalue: 24\n")},
            findings=(
                schema_finding(
                    bad,
                    4,
                    "malformed YAML at column 1: found a tab character in the indentation",
                    "YAML indents with spaces only: replace the tab with spaces",
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
                    "allowed keys: id, abstract, extends, upstream_key, upstream_rev, title, "
                    "status, model, weights, mmproj, engine, rig, drafter, patches, port, "
                    "alternatives, bind_host, nvlink_mode, envelope, serve, runtime, switches, tunables, "
                    "tunable_aliases, env, mounts, kubernetes, user_gid, shm_size, restart, "
                    "template_note, best_for, best_for_source, exposures, exposures_source, "
                    "recommendations, caveats, siblings, deviations, spellings, evidence, notes",
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
