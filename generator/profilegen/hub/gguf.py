"""The metadata of a GGUF file, read from its header alone: ranged reads, never the weights.

The header (key/value metadata, then one record per tensor) sits at the start of the file;
its length is only known once it is walked. We read a first range, walk it with a bounded
scanner that says how far the header goes (or that it needs more) and where each key sits,
read more until it is whole, then let the `gguf` library parse the metadata. Arrays of
strings (the tokenizer: hundreds of thousands of entries) are counted, not decoded, and the
tensor records only tell which quantization types the file holds.
"""

from __future__ import annotations

import math
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import printable
from .checkpoint import MAX_WEIGHTS, Checkpoint, CheckpointError

FIRST_READ = 2 * 2**20
MAX_HEADER = 256 * 2**20  # a tokenizer of a million entries fits; a header past it is not one
GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32  # general.alignment unless the file says otherwise
# Value type -> size of a scalar; 8 is a string, 9 an array.
_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
_MAX_DIMS = 8
# Numeric arrays up to this many entries are read (per-layer facts); longer ones (token
# scores and types) are only counted.
_KEEP_ARRAY = 4096
# Records the walk may step over one by one: keys, tensors, strings and arrays inside arrays.
# The largest headers today hold about 410K (Llama 3: 128,256 tokens and 280,147 merges) and
# a few thousand tensors; within the size cap a header could ask for 30 million (empty
# strings), a minute's walk. At this cap the walk takes a tenth of a second (bench_gguf.py).
MAX_RECORDS = 1_000_000
_U64 = struct.Struct("<Q")


class _Short(Exception):
    """The bytes read so far end inside the header; `need` guesses how many it takes (0:
    no guess), so that a long array is read whole by the next read, not walked once per
    doubling."""

    def __init__(self, need: int = 0) -> None:
        super().__init__(need)
        self.need = need


@dataclass(frozen=True)
class GgufHeader:
    """Scalar metadata and short numeric arrays as values; other arrays by their length."""

    path: str
    size: int  # of the whole file
    header_bytes: int
    metadata: dict[str, Any]
    tensor_types: dict[str, int]  # ggml type name -> number of tensors
    # The whole file's length as the header lays it out (data start, the last tensor's end,
    # padded): a copy holding only the header still tells it. None: a tensor type unknown here.
    extent: int | None = None


@dataclass
class _Layout:
    """Where the header's pieces are: kept key/value records, counted string arrays."""

    version: int = 3
    kept: list[tuple[int, int]] = field(default_factory=list)  # byte spans of records
    counted: dict[str, int] = field(default_factory=dict)  # string-array key -> entries
    tensor_types: list[int] = field(default_factory=list)
    tensors: list[tuple[int, int, int]] = field(default_factory=list)  # (type, elements, offset)
    length: int = 0


class _Scanner:
    """Walks the header structure without building it, refusing counts the file cannot hold."""

    def __init__(self, data: bytes, file_size: int) -> None:
        self.data, self.file_size, self.off = data, file_size, 0
        self.records = 0
        self.where = ""  # the field being walked, for messages ("the value of general.name")

    def spend(self, n: int, what: str) -> None:
        """Counts `n` records to walk, refusing a header that holds more than any model's."""
        self.records += n
        if self.records > MAX_RECORDS:
            raise CheckpointError(
                f"the header holds more than {MAX_RECORDS:,} records (at {n:,} {what}); "
                "no model's header has that many, so it is not read"
            )

    def take(self, n: int) -> bytes:
        if self.off + n > len(self.data):
            if self.off + n > self.file_size:
                raise CheckpointError("the header runs past the end of the file")
            raise _Short(self.off + n)
        chunk = self.data[self.off : self.off + n]
        self.off += n
        return chunk

    def u32(self) -> int:
        value: int = struct.unpack("<I", self.take(4))[0]
        return value

    def u64(self) -> int:
        value: int = struct.unpack("<Q", self.take(8))[0]
        return value

    def count(self, n: int, least: int, what: str) -> int:
        if n * least > self.file_size - self.off:
            field = f"{self.where}: " if self.where else ""
            raise CheckpointError(
                f"{field}{what} {n:,} cannot fit in a {self.file_size:,}-byte file"
            )
        return n

    def string(self) -> bytes:
        return self.take(self.count(self.u64(), 1, "string length"))

    def strings(self, n: int) -> None:
        """Steps over `n` strings in one tight loop (a tokenizer is hundreds of thousands);
        from a string the bytes in hand do not hold whole, the general path says why."""
        data, first, off, done = self.data, self.off, self.off, 0
        unpack, end = _U64.unpack_from, len(data)
        try:
            for done in range(n):  # noqa: B007 (read after the loop)
                after = off + 8 + unpack(data, off)[0]
                if after > end:
                    break
                off = after
            else:
                self.off = off
                return
        except struct.error:  # not even the length is in hand
            pass
        self.off = off
        outer = self.where
        try:
            for i in range(done, n):
                self.where = f"{outer}, string {i + 1:,} of {n:,}"
                self.string()
            self.where = outer
        except _Short:
            each = max(8, (off - first) // done) if done else 8
            raise _Short(off + (n - done) * each * 5 // 4) from None

    def value(self, kind: int, depth: int = 0) -> int | None:
        """Skips a value; returns the entry count of an array that is counted, not read."""
        if kind in _SCALAR:
            self.take(_SCALAR[kind])
        elif kind == _STRING:
            self.string()
        elif kind == _ARRAY and depth < 2:
            inner = self.u32()
            least = _SCALAR.get(inner, 8 if inner == _STRING else 12)
            n = self.count(self.u64(), least, "array length")
            if inner in _SCALAR:
                self.take(n * _SCALAR[inner])
                return n if n > _KEEP_ARRAY else None
            self.spend(n, "strings" if inner == _STRING else "values in one array")
            if inner == _STRING:
                self.strings(n)
                return n
            for _ in range(n):
                self.value(inner, depth + 1)
            return n
        else:
            raise CheckpointError(f"{self.where}: unknown metadata value type {kind}")
        return None

    def header(self) -> _Layout:
        """The header's layout and length in bytes (before alignment padding)."""
        layout = _Layout()
        if self.take(4) != GGUF_MAGIC:
            raise CheckpointError("not a GGUF file (no GGUF magic)")
        layout.version = self.u32()
        if layout.version not in (2, 3):
            raise CheckpointError("unsupported GGUF version (2 and 3 are read)")
        tensors = self.count(self.u64(), 24, "tensor count")
        kvs = self.count(self.u64(), 13, "metadata key count")
        self.spend(tensors, "tensors")
        self.spend(kvs, "metadata keys")
        for index in range(kvs):
            start = self.off
            self.where = f"the name of metadata key {index + 1:,}"
            key = self.string().decode("utf-8", "replace")
            self.where = f"the value of {printable(key[:80])}"
            entries = self.value(self.u32())
            if entries is None:
                layout.kept.append((start, self.off))
            else:
                layout.counted[key] = entries
        for index in range(tensors):
            self.where = f"the name of tensor {index + 1:,}"
            self.string()
            self.where = f"tensor {index + 1:,}"
            dims = self.u32()
            if dims > _MAX_DIMS:
                raise CheckpointError(f"{self.where}: a tensor with {dims} dimensions")
            elements = math.prod(self.u64() for _ in range(dims))
            kind = self.u32()
            layout.tensor_types.append(kind)
            layout.tensors.append((kind, elements, self.u64()))
        layout.length = self.off
        return layout


def _header_length(checkpoint: Checkpoint, path: str, size: int) -> tuple[bytes, _Layout]:
    """Reads ranges, doubling, until the whole header is in hand."""
    data = b""
    want = min(FIRST_READ, size)
    while True:
        if want > len(data):
            data += checkpoint.read_range(path, len(data), want)
        try:
            return data, _Scanner(data, size).header()
        except _Short as short:
            if len(data) < want:  # the source gave less than asked: the file ends early
                raise CheckpointError("the file ends inside its header") from None
            if want >= min(MAX_HEADER, size):
                raise CheckpointError(
                    f"the header is longer than {MAX_HEADER // 2**20} MiB; not a model header"
                ) from None
            want = min(max(want * 2, short.need), MAX_HEADER, size)


def _number(value: Any) -> Any:
    # GGUF floats are float32: 0.6 comes back as 0.6000000238418579.
    return float(f"{value:.7g}") if isinstance(value, float) else value


def _plain(entry: Any) -> Any:
    """A reader field as plain data."""
    from gguf import GGUFValueType

    if not entry.types:
        return None
    if entry.types[0] == GGUFValueType.ARRAY:
        return [_number(v.item() if hasattr(v, "item") else v) for v in entry.contents()]
    return _number(entry.contents())


def _parse(data: bytes, layout: _Layout) -> dict[str, Any]:
    """The kept records, re-framed as a header of their own, parsed by the gguf library."""
    from gguf import GGUFReader

    records = [data[a:b] for a, b in layout.kept]
    head = GGUF_MAGIC + struct.pack("<IQQ", layout.version, 0, len(records))
    with tempfile.TemporaryDirectory(prefix="profilegen-gguf-") as scratch:
        path = Path(scratch) / "header.gguf"
        path.write_bytes(head + b"".join(records))
        reader = GGUFReader(path)
        metadata = {
            name: _plain(entry)
            for name, entry in reader.fields.items()
            if not name.startswith("GGUF.")
        }
        del reader  # release the memory map before the folder goes
    return {**metadata, **layout.counted}


def _type_names(types: list[int]) -> dict[str, int]:
    from gguf import GGMLQuantizationType

    out: dict[str, int] = {}
    for raw in types:
        try:
            name = GGMLQuantizationType(raw).name
        except ValueError:
            name = f"type{raw}"
        out[name] = out.get(name, 0) + 1
    return out


def _extent(layout: _Layout, alignment: Any) -> int | None:
    """Data start plus the furthest tensor's end, padded as writers pad every tensor."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    align = alignment if isinstance(alignment, int) and alignment > 0 else DEFAULT_ALIGNMENT
    end = 0
    for kind, elements, offset in layout.tensors:
        try:
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            return None
        end = max(end, offset + elements // block * size)
    return -(-layout.length // align) * align + -(-end // align) * align


def read_gguf_header(checkpoint: Checkpoint, path: str) -> GgufHeader:
    listed = checkpoint.files.get(path)
    if listed is None:
        raise CheckpointError(f"{checkpoint.where}: no file {path}")
    size = listed.size
    if size is None:
        raise CheckpointError(f"{checkpoint.where}: the size of {path} is not known")
    try:
        data, layout = _header_length(checkpoint, path, size)
        metadata = _parse(data, layout)
    except CheckpointError as exc:
        raise CheckpointError(f"{checkpoint.where}: {path}: {exc}") from None
    except (ValueError, KeyError, IndexError, UnicodeDecodeError) as exc:
        raise CheckpointError(
            f"{checkpoint.where}: {path}: the gguf library cannot read its header "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    extent = _extent(layout, metadata.get("general.alignment"))
    if extent is not None and extent > MAX_WEIGHTS:
        raise CheckpointError(
            f"{checkpoint.where}: {path}: its tensors end {extent:,} bytes in; no checkpoint "
            f"file holds more than {MAX_WEIGHTS:,}"
        )
    types = _type_names(layout.tensor_types)
    return GgufHeader(path, size, layout.length, metadata, types, extent)
