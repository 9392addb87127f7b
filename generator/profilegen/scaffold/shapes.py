"""The first rig: N cards of a GPU profilegen knows (`--rig 2x3090`), as registry documents."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError
from ..registry.yamltext import dump_plain
from .packaged import packaged

# Short name -> (the packaged GPU entry, data/gpus/<id>.yaml, a copy of the catalogue's; the
# card as a rig's name says it).
GPUS = {
    "3090": ("rtx-3090", "RTX 3090"),
    "3090ti": ("rtx-3090-ti", "RTX 3090 Ti"),
    "4090": ("rtx-4090", "RTX 4090"),
    "5090": ("rtx-5090", "RTX 5090"),
    "a6000": ("rtx-a6000", "RTX A6000"),
    "h200": ("h200", "H200"),
}
MAX_CARDS = 16
DEFAULT_RIG = "1x3090"
_SHAPE = re.compile(r"([0-9]{1,2})x([a-z0-9]+)")
_COUNTS = {1: "One", 2: "Two", 4: "Four", 8: "Eight"}


@dataclass(frozen=True)
class Shape:
    """`count` cards of the GPU `gpu` (its registry id; `card`, as a name says it), named
    `ident` (2x3090)."""

    ident: str
    gpu: str
    card: str
    count: int


def parse_shape(text: str) -> Shape:
    """`2x3090` -> two RTX 3090; anything else is a usage error naming the known GPUs."""
    known = ", ".join(GPUS)
    match = _SHAPE.fullmatch(text.strip().lower())
    if match is None:
        raise UsageError(
            f"--rig {text!r}: expected COUNTxGPU, such as {DEFAULT_RIG} or 2x5090 (GPUs: {known})"
        )
    count, short = int(match.group(1)), match.group(2)
    if short not in GPUS:
        raise UsageError(f"--rig {text!r}: no GPU {short!r} (GPUs: {known})")
    if not 1 <= count <= MAX_CARDS:
        raise UsageError(f"--rig {text!r}: a rig has 1 to {MAX_CARDS} cards")
    return Shape(f"{count}x{short}", *GPUS[short], count)


def gpu_document(shape: Shape) -> bytes:
    """registry/gpus/<id>.yaml of the shape's GPU, as packaged."""
    return packaged("gpus", f"{shape.gpu}.yaml")


def rig_document(shape: Shape) -> bytes:
    """registry/rigs/<id>.yaml: the cards on one Linux host, over PCIe when there are several."""
    cards = _COUNTS.get(shape.count, str(shape.count))
    link = "" if shape.count == 1 else " over PCIe"
    data = {
        "id": shape.ident,
        "name": f"{cards} {shape.card}{link}, Linux",
        "gpu": shape.gpu,
        "count": shape.count,
        "interconnect": {"kind": "single" if shape.count == 1 else "pcie"},
        "host_os": "linux",
    }
    head = (
        "# yaml-language-server: $schema=../../schema/rig.schema.json\n"
        f"# Written by `profilegen init --rig {shape.ident}`: say what the host really has (PCIe\n"
        "# lanes and generation, an NVLink bridge, a card that drives a desktop); `fit` and the\n"
        "# boot guards read it.\n"
    )
    return (head + dump_plain(data)).encode()
