"""Byte units, defined once: catalogues mix decimal (GB, 1e9) and binary (GiB, 2**30) sizes."""

from __future__ import annotations

KIB, MIB, GIB, TIB = 1 << 10, 1 << 20, 1 << 30, 1 << 40
KB, MB, GB, TB = 10**3, 10**6, 10**9, 10**12
# A size's unit, as the registry writes it, in bytes.
UNIT_BYTES: dict[str, int] = {
    "B": 1,
    "KB": KB,
    "MB": MB,
    "GB": GB,
    "TB": TB,
    "KiB": KIB,
    "MiB": MIB,
    "GiB": GIB,
    "TiB": TIB,
}
