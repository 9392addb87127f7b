"""Corpus: a Hub answer (or a lock) naming files outside the model folder (issue item 7).

`lock` refuses such an answer and records nothing, `check --online` reports it on the
artifact, `check` reports a lock entry that records one at its line in the lock, and `fetch`
and `verify` never open a path outside the model folder.
"""

from __future__ import annotations

from pathlib import Path

from tests.hostile import hubs
from tests.hostile.build import LOCK, MODEL, Case, lock_entry

NOT_WRITTEN = "error: lock not written:"
REFUSED = "  tiny-7b/bf16 (example/Tiny-7B): the Hub's answer is refused: "
LEAVES = "it would leave the model folder"
AGAIN = "the lock is not what `profilegen lock` writes: run it again"
SIZE = 14_999_999_000  # the weights' size the base lock records


def hub_names(slug: str, name: str, why: str, shown: str | None = None) -> list[Case]:
    """`lock` and `check --online` against a Hub that also lists `name`."""
    text = f"file name {shown or repr(name)} {why}: {LEAVES}"
    return [
        Case(
            f"lock-when-the-hub-names-{slug}",
            hub=hubs.named(name),
            args=("lock",),
            says=(NOT_WRITTEN, REFUSED + text),
        ),
        Case(
            f"check-online-when-the-hub-names-{slug}",
            hub=hubs.named(name),
            args=("check", "--online"),
            findings=(
                f"{MODEL}:17: error: [hub-bad-listing] tiny-7b/bf16 (example/Tiny-7B): the Hub's "
                f"answer is refused: {text}",
            ),
        ),
    ]


def locked_as(*paths: str) -> object:
    """Setup: the lock's weights entry records these file names (each of the weights' size)."""
    files = [{"path": p, "size": SIZE // len(paths), "sha256": "a1" * 32} for p in paths]
    return lock_entry("tiny-7b/bf16", files=files, total_size=sum(f["size"] for f in files))


def lock_finding(line: int, name: str, why: str) -> str:
    return (
        f"{LOCK}:{line}: error: [lock] artifact tiny-7b/bf16 records the file name {name}, "
        f"which {why}: fetch and verify would not open it ({AGAIN})"
    )


def secret_beside(root: Path) -> None:
    """A file outside MODEL_DIR, and a weights file inside it that links there."""
    (root.parent / "secret.txt").write_text("top secret\n")
    folder = root.parent / "out" / "tiny-7b-bf16"
    folder.mkdir(parents=True)
    (folder / "config.json").write_bytes(b"{}")
    (folder / "model.safetensors").symlink_to(root.parent / "secret.txt")


def hub_cases() -> list[Case]:
    return [
        *hub_names("a-path-up", "../../../../tmp/x", "has a '.' or '..' segment"),
        *hub_names("an-absolute-path", "/etc/passwd", "is an absolute path"),
        *hub_names("a-backslash", "..\\..\\x", "holds a backslash", "'..\\\\..\\\\x'"),
        *hub_names("a-nul", "a\x00b", "holds a NUL byte", "'a\\x00b'"),
        *hub_names("a-newline", "a\nb", "holds a control character", "'a\\nb'"),
        *hub_names("an-empty-name", "", "is empty"),
        *hub_names("an-empty-segment", "a//b", "has an empty segment"),
        *hub_names("a-drive", "C:x", "is a Windows drive path"),
        Case(
            "lock-when-the-hub-names-a-dot-segment",
            hub=hubs.named("a/./b"),
            args=("lock",),
            says=(NOT_WRITTEN, REFUSED + f"file name 'a/./b' has a '.' or '..' segment: {LEAVES}"),
        ),
        Case(
            "lock-when-the-hub-lists-a-file-twice",
            hub=hubs.listing(lambda siblings: [*siblings, dict(siblings[0])]),
            args=("lock",),
            says=(NOT_WRITTEN, REFUSED + "file name 'config.json' is listed twice"),
        ),
        Case(
            "lock-when-the-hub-reports-a-negative-size",
            hub=hubs.listing(
                lambda siblings: [
                    {**s, "size": -5, "lfs": {**s["lfs"], "size": -5}} if "lfs" in s else s
                    for s in siblings
                ]
            ),
            args=("lock",),
            says=(NOT_WRITTEN, REFUSED + "file 'model.safetensors' has no size a file can have"),
        ),
        Case(
            "lock-when-the-hub-reports-a-malformed-sha256",
            hub=hubs.listing(
                lambda siblings: [
                    {**s, "lfs": {**s["lfs"], "sha256": "abc"}} if "lfs" in s else s
                    for s in siblings
                ]
            ),
            args=("lock",),
            says=(NOT_WRITTEN, REFUSED + "file 'model.safetensors' has a malformed sha256"),
        ),
        Case(
            "lock-when-the-hub-is-honest",
            hub=hubs.honest(),
            args=("lock",),
            code=0,
            says=(
                "wrote profilegen.lock.json: 2 artifacts (2 resolved on the Hub), 0 remote patch files",
            ),
        ),
        Case(
            "fetch-when-the-hub-names-a-path-up",
            hub=hubs.named("../../../../tmp/x"),
            args=("fetch", "tiny-chat", "--model-dir", "{out}"),
            says=(
                "error: cannot fetch tiny-7b/bf16: tiny-7b/bf16 (example/Tiny-7B): the Hub's "
                f"answer is refused: file name '../../../../tmp/x' has a '.' or '..' segment: {LEAVES}",
            ),
        ),
        Case(
            "check-a-lock-naming-a-path-up",
            setup=(locked_as("config.json", "../../../../tmp/x"),),
            findings=(lock_finding(16, "'../../../../tmp/x'", "has a '.' or '..' segment"),),
        ),
        Case(
            "check-a-lock-naming-an-absolute-path",
            setup=(locked_as("/etc/passwd"),),
            findings=(lock_finding(11, "'/etc/passwd'", "is an absolute path"),),
        ),
        Case(
            "check-a-lock-naming-a-file-twice",
            setup=(locked_as("model.safetensors", "model.safetensors"),),
            findings=(lock_finding(16, "'model.safetensors'", "is listed twice"),),
        ),
        Case(
            "check-a-lock-naming-a-number",
            setup=(lock_entry("tiny-7b/bf16", files=[{"path": 7, "size": SIZE, "sha256": None}]),),
            findings=(lock_finding(11, "7", "is not a file name"),),
        ),
        Case(
            "verify-with-a-lock-naming-a-path-up",
            setup=(locked_as("../../../../tmp/x"),),
            args=("verify", "tiny-chat", "--model-dir", "{out}"),
            says=(
                f"error: {LOCK}: artifact tiny-7b/bf16 records the file name '../../../../tmp/x', "
                "which has a '.' or '..' segment: nothing was opened (run `profilegen lock` "
                "again; `profilegen check` shows the line)",
            ),
        ),
        Case(
            "fetch-dry-run-with-a-lock-naming-a-path-up",
            setup=(locked_as("../../../../tmp/x"),),
            args=("fetch", "tiny-chat", "--model-dir", "{out}", "--dry-run"),
            says=(
                f"error: {LOCK}: artifact tiny-7b/bf16 records the file name '../../../../tmp/x', "
                "which has a '.' or '..' segment: nothing was opened (run `profilegen lock` "
                "again; `profilegen check` shows the line)",
            ),
        ),
        Case(
            "verify-does-not-follow-a-weights-file-linked-out",
            setup=(secret_beside,),
            args=("verify", "tiny-chat", "--model-dir", "{out}"),
            says=(
                "  {out}/tiny-7b-bf16/model.safetensors: outside {out}/tiny-7b-bf16 (a link?), not "
                "opened",
            ),
            never=("top secret",),
        ),
    ]
