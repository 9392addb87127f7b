"""Corpus: what the files say: keys, addresses, inheritance, the lock (issue items 3, 5, 6)."""

from __future__ import annotations

from tests.hostile.build import (
    CHILD,
    LOCK,
    LOCK_HINT,
    MODEL,
    PROFILE,
    RIG,
    Case,
    edit,
    lock_entry,
    lock_text,
    rerender,
    schema_finding,
)


def integrity_cases() -> list[Case]:
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
            setup=(edit(PROFILE, "bind_host: 127.0.0.1", "bind_host: localhost"),),
            findings=(
                schema_finding(
                    PROFILE,
                    20,
                    "bind_host: String should match pattern '^[0-9a-fA-F.:]+$' (got 'localhost')",
                ),
            ),
        ),
        Case(
            "bind-host-impossible-address",
            setup=(edit(PROFILE, "bind_host: 127.0.0.1", "bind_host: 999.1.1.1"),),
            findings=(
                # Its own file is invalid, so tiny-chat-long (which extends it) is not read.
                schema_finding(
                    PROFILE, 20, "bind_host: '999.1.1.1' is not an IPv4 or IPv6 address"
                ),
            ),
        ),
        Case(
            "bind-host-ipv6-renders",
            setup=(edit(PROFILE, "bind_host: 127.0.0.1", "bind_host: '::1'"),),
            args=("render", "tiny-chat"),
            code=0,
            says=('"::1:${PORT:-8200}:8000"',),
        ),
        Case(
            "inherited-tp-beyond-the-rig",
            setup=(edit(PROFILE, "  tp: 2", "  tp: 4"), rerender),
            findings=(
                f"{PROFILE}:13: error: [hw-tp] TP 4 needs 4 GPUs, rig 2x3090 has 2 "
                "(inherited by tiny-chat-long) (use TP 1 or 2)",
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
                rerender,
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
            setup=(edit(MODEL, "{value: 15, unit: GB}", "{value: 16, unit: GB}"), rerender),
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
