"""The size of a safetensors file, read from its header alone: never the tensors.

A safetensors file is an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range (`data_offsets`, from the end of the header), then the
tensor bytes. The header says how long the whole file is, so a copy that holds only its
first bytes still sizes the weights.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from .checkpoint import MAX_WEIGHTS, Checkpoint, CheckpointError, json_object

# The safetensors library refuses headers past 100 MB; no model's header comes near it.
MAX_HEADER = 100_000_000
# Bits per element of each dtype the format defines.
DTYPE_BITS = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "I64": 64,
    "U64": 64,
    "F64": 64,
    "C64": 64,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
}


@dataclass(frozen=True)
class SafetensorsHeader:
    path: str
    header_bytes: int  # the length field and the JSON header
    tensor_bytes: int  # the tensors' bytes, from their data_offsets

    @property
    def file_bytes(self) -> int:
        """What the whole file holds: the header, then every tensor's bytes."""
        return self.header_bytes + self.tensor_bytes


def _tensor_range(name: str, entry: Any) -> tuple[int, int]:
    """The tensor's byte range, after checking it against its dtype and shape."""
    if not isinstance(entry, dict):
        raise CheckpointError(f"tensor {name!r} is not an object")
    offsets, shape, dtype = entry.get("data_offsets"), entry.get("shape"), entry.get("dtype")
    if not (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
        and offsets[0] <= offsets[1]
    ):
        raise CheckpointError(f"tensor {name!r} has no valid data_offsets [begin, end]")
    if not (
        isinstance(shape, list)
        and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
    ):
        raise CheckpointError(f"tensor {name!r} has no valid shape")
    bits = DTYPE_BITS.get(dtype) if isinstance(dtype, str) else None
    if bits is not None:
        want = (_elements(name, shape) * bits + 7) // 8  # whole numbers: no float overflows
        if offsets[1] - offsets[0] != want:
            shown = shape if len(shape) <= 8 else f"of {len(shape):,} dimensions"
            raise CheckpointError(
                f"tensor {name!r} spans {offsets[1] - offsets[0]:,} bytes; {dtype} of shape "
                f"{shown} takes {want:,}"
            )
    return offsets[0], offsets[1]


def _elements(name: str, shape: list[int]) -> int:
    """The elements of a shape, refused once past what any checkpoint holds (a shape of
    100,000 dimensions was an OverflowError, and a product of millions of them a hang)."""
    if 0 in shape:
        return 0
    count = 1
    for dim in shape:
        count *= dim
        if count > MAX_WEIGHTS * 8:
            raise CheckpointError(
                f"tensor {name!r} has a shape of more elements than any checkpoint holds"
            )
    return count


def _laid_end_to_end(ranges: list[tuple[int, int, str]]) -> int:
    """Where the tensor bytes end, refusing ranges that overlap or leave a gap: the format
    lays tensors end to end (as the safetensors library requires), so bytes shared by two
    tensors would be counted twice and a gap would be bytes no tensor holds."""
    end, last = 0, ""
    for begin, stop, name in sorted(ranges):
        if begin < end:
            raise CheckpointError(
                f"tensors {last!r} and {name!r} overlap (bytes {begin:,} to {min(end, stop):,}):"
                " a safetensors file lays its tensors end to end"
            )
        if begin > end:
            raise CheckpointError(
                f"bytes {end:,} to {begin:,} belong to no tensor (before {name!r}): a "
                "safetensors file lays its tensors end to end"
            )
        end, last = stop, name
    return end


def read_safetensors_header(checkpoint: Checkpoint, path: str) -> SafetensorsHeader:
    """The header of `path`: two ranged reads (its length, then the JSON)."""
    where = f"{checkpoint.where}: {path}"
    first = checkpoint.read_range(path, 0, 8)
    if len(first) < 8:
        raise CheckpointError(f"{where}: shorter than a safetensors header's 8-byte length")
    (length,) = struct.unpack("<Q", first)
    if length < 2 or length > MAX_HEADER:
        raise CheckpointError(
            f"{where}: its first 8 bytes give a header of {length:,} bytes; a safetensors "
            f"header holds 2 to {MAX_HEADER:,}: it is not a safetensors file"
        )
    raw = checkpoint.read_range(path, 8, 8 + length)
    if len(raw) < length:
        raise CheckpointError(f"{where}: the file ends inside its {length:,}-byte header")
    header = json_object(raw, f"{where} (header)")
    try:
        ranges = [(*_tensor_range(k, v), k) for k, v in header.items() if k != "__metadata__"]
        end = _laid_end_to_end(ranges)
    except CheckpointError as exc:
        raise CheckpointError(f"{where}: {exc}") from None
    if end > MAX_WEIGHTS:
        raise CheckpointError(
            f"{where}: its header places tensor bytes {end:,} bytes in; no checkpoint file "
            f"holds more than {MAX_WEIGHTS:,}"
        )
    return SafetensorsHeader(path, 8 + length, end)
