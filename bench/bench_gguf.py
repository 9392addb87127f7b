"""Benchmark: a GGUF header is read (or refused) in well under a second, however it is built.

`model add --gguf` walks a GGUF file's header to find where it ends. A header within every
size cap can still hold 30 million empty tokenizer strings (8 bytes each, 240 MB): walked one
Python call per string, that took 40-60 s. Three headers, read from a local file through the
same code `model add --from-dir` uses (median of runs):

- hostile: 30,000,000 empty strings in one array, within the 256 MiB header cap;
- nested: 20,000,000 empty arrays inside one array;
- at the cap: as many empty strings as the record cap allows (the slowest header read);
- real: a 262,144-token vocabulary with as many merges (more than the largest today).

Each must end (read, or refused by a cap with a clear message) in under a second.

Before the record cap and the single-pass walk (same machine, loaded: 2 cores, load 12):
hostile 106 s, nested 122 s, real 2.09 s, each read to the end. After: hostile and nested
refused at once, at the cap 0.5 s, real 0.33 s (an idle machine takes a fifth of that).
"""

from __future__ import annotations

import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for entry in (ROOT, ROOT / "generator"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from _timing import median_seconds, table  # noqa: E402

from profilegen.hub.checkpoint import CheckpointError, CheckpointFile, LocalCheckpoint  # noqa: E402
from profilegen.hub.gguf import MAX_RECORDS, read_gguf_header  # noqa: E402

RUNS = 3
LIMIT_S = 1.0
STRING, ARRAY, UINT32 = 8, 9, 4


def _string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def _kv_head(key: str) -> bytes:
    return _string(key.encode())


def header(records: list[bytes]) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(records)) + b"".join(records)


def hostile_strings(count: int) -> tuple[bytes, int]:
    """The head of one array of `count` empty strings; the rest of the file is zeros (each
    eight zero bytes are one empty string), so the file is sparse and costs no disk."""
    head = header([_kv_head("tokenizer.ggml.tokens") + struct.pack("<IIQ", ARRAY, STRING, count)])
    return head, len(head) + 8 * count + 4096


def nested_arrays(count: int) -> tuple[bytes, int]:
    """One array of `count` arrays, each empty: twelve zero bytes are an empty array of uint8
    (type 0, length 0), so the rest of the file is zeros again."""
    head = header([_kv_head("a.nested") + struct.pack("<IIQ", ARRAY, ARRAY, count)])
    return head, len(head) + 12 * count + 4096


def real_tokenizer(vocab: int) -> tuple[bytes, int]:
    tokens = b"".join(_string(f"tok{i:06d}".encode()) for i in range(vocab))
    merges = b"".join(_string(f"t{i} k{i}".encode()) for i in range(vocab))
    records = [
        _kv_head("general.architecture") + struct.pack("<I", STRING) + _string(b"llama"),
        _kv_head("llama.block_count") + struct.pack("<II", UINT32, 32),
        _kv_head("tokenizer.ggml.tokens") + struct.pack("<IIQ", ARRAY, STRING, vocab) + tokens,
        _kv_head("tokenizer.ggml.merges") + struct.pack("<IIQ", ARRAY, STRING, vocab) + merges,
    ]
    data = header(records)
    return data, len(data) + 4096


def checkpoint(folder: Path, name: str, head: bytes, size: int) -> LocalCheckpoint:
    path = folder / name
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)
    files = {name: CheckpointFile(name, size, None)}
    return LocalCheckpoint(folder, "bench/gguf", "0" * 40, files)


def attempt(source: LocalCheckpoint, name: str) -> str:
    try:
        found = read_gguf_header(source, name)
    except CheckpointError as exc:
        return f"refused: {exc}"
    return f"read: {len(found.metadata)} keys, header {found.header_bytes:,} bytes"


def main() -> int:
    rows = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-gguf-") as tmp:
        folder = Path(tmp)
        for label, name, (head, size) in (
            ("hostile 30M strings", "strings.gguf", hostile_strings(30_000_000)),
            ("nested 20M arrays", "nested.gguf", nested_arrays(20_000_000)),
            ("at the cap", "cap.gguf", hostile_strings(MAX_RECORDS - 10)),
            ("real 262K tokenizer", "real.gguf", real_tokenizer(262_144)),
        ):
            source = checkpoint(folder, name, head, size)
            outcome = attempt(source, name)
            seconds = median_seconds(lambda s=source, n=name: attempt(s, n), RUNS)
            failed |= seconds >= LIMIT_S
            rows.append((label, f"{seconds:.3f} s  {outcome}"))
    print(table(rows))
    print(f"every header ends in under {LIMIT_S:g} s: {'no' if failed else 'yes'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
