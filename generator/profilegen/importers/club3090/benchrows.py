"""The figures of one BENCHMARKS.md row, read as an evidence record's `measured` and `settings`.

Only what a cell states plainly is read: a figure carried from another row, a range, a delta
or a number without its unit stays in the record's summary, not in its figures.
"""

from __future__ import annotations

import re
from typing import Any

from .benchrig import ascii_text, plain

_NUM = r"[\d,]+(?:\.\d+)?"
_PAIR = re.compile(rf"^(?:wall\s+)?~?({_NUM})\s*/\s*~?({_NUM})(?!\s*(?:GB|GiB|MiB|%))")
_AT = re.compile(rf"~?({_NUM})\s*(K)?\s*@\s*(\d+)K\b")
_ARROW = re.compile(rf"~?({_NUM})\s*(K)?\s*→\s*~?({_NUM})\s*(K)?[^→]{{0,40}}?(\d+)K\s*→\s*(\d+)K")
_VRAM = re.compile(rf"^~?\s*((?:{_NUM}\s*[+/]\s*~?\s*)*{_NUM})\s*(GB|GiB|MiB)\b(.*)", re.DOTALL)
KV_WORDS = {
    "fp8": "fp8",
    "fp8/e4m3": "fp8_e4m3",
    "fp8_e4m3": "fp8_e4m3",
    "fp8 e4m3": "fp8_e4m3",
    "fp8-e4m3": "fp8_e4m3",
    "fp8/e5m2": "fp8_e5m2",
    "fp8_e5m2": "fp8_e5m2",
    "int8-pth": "int8_per_token_head",
    "int8_per_token_head": "int8_per_token_head",
    "bf16": "bfloat16",
    "fp16": "float16",
    "q8_0": "q8_0",
    "q4_0": "q4_0",
    "q5_0": "q5_0",
}
# The engine's own default is what an unset dtype means; these name the same cache.
SAME_KV = {
    (None, "bfloat16"),
    (None, "float16"),
    (None, "auto"),
    ("fp8_e4m3", "fp8"),
    ("fp8", "fp8_e4m3"),
}


def number(text: str) -> float:
    return float(text.replace(",", ""))


def decode(cell: str) -> tuple[float, float] | None:
    """(narrative, code) tok/s: the cell's first pair; rows that write code first say so."""
    text = plain(cell).lstrip()
    swapped = re.match(rf"^({_NUM})\s*code\s*/\s*({_NUM})\s*narr", text)
    if swapped:
        return number(swapped.group(2)), number(swapped.group(1))
    m = _PAIR.match(text)
    if m is None:
        return None
    first, second = number(m.group(1)), number(m.group(2))
    if first <= 0 or second <= 0:
        return None
    return first, second


def prefill(cell: str) -> list[dict[str, float | int]]:
    """Prefill tok/s at stated depths: `1446 @10K`, `1288 → 1175 (10K→90K)`."""
    text = plain(cell)
    points: dict[int, float] = {}
    for m in _AT.finditer(text):
        value = number(m.group(1)) * (1000 if m.group(2) else 1)
        points.setdefault(int(m.group(3)) * 1000, value)
    if not points:
        for m in _ARROW.finditer(text):
            first = number(m.group(1)) * (1000 if m.group(2) else 1)
            second = number(m.group(3)) * (1000 if m.group(4) else 1)
            points.setdefault(int(m.group(5)) * 1000, first)
            points.setdefault(int(m.group(6)) * 1000, second)
    return [
        {"context_tokens": depth, "tokens_per_s": _tidy(value)}
        for depth, value in sorted(points.items())
        if value > 0
    ]


def peak_vram_mib(cell: str, cards: int, card_gib: float) -> int | None:
    """GPU memory in use summed over the cards, from a cell that starts with it: per card
    (`22.5 GB/card`, `21.8 / 21.2 GB/card`, `12.6+17.2 GB`) or in total (`45,816 MiB total`).
    A bare figure on a multi-card row is per card when one card could hold it. Upstream's GB
    are nvidia-smi MiB / 1024."""
    m = _VRAM.match(plain(cell))
    if m is None:
        return None
    figures = [number(n) for n in re.findall(_NUM, m.group(1))]
    unit, rest = m.group(2), m.group(3).lstrip()[:12].lower()
    scale = 1 if unit == "MiB" else 1024
    if rest.startswith("free") or any(f <= 0 for f in figures):
        return None
    if len(figures) > 1:
        total = sum(figures)
    elif rest.startswith(("/card", "per card", "/gpu")) or (
        "total" not in rest and cards > 1 and figures[0] * scale <= card_gib * 1024
    ):
        total = figures[0] * cards
    else:
        total = figures[0]
    return round(total * scale)


def kv_dtype(cell: str) -> str | None:
    text = plain(cell).lower().split("(")[0].strip()
    key = text.split("/")[0].strip() if text.startswith("q") else text
    return KV_WORDS.get(key.replace(" / ", "/"))


def soak(*cells: str) -> str | None:
    for cell in cells:
        text = plain(cell)
        if re.search(r"soak[^.;|]{0,20}(✗|fail)|^\s*fail", text, re.IGNORECASE):
            return "fail"
        if re.search(r"soak[^.;|]{0,20}(✓|pass)|^\s*pass", text, re.IGNORECASE):
            return "pass"
    return None


def compose_settings(cell: str) -> dict[str, Any]:
    """Settings a compose cell states (`MAX_MODEL_LEN=131072`, `max-num-seqs=4`, `MTP n=3`)."""
    text = plain(cell)
    out: dict[str, Any] = {}
    for key, pattern, cast in (
        ("max_model_len", r"max[-_ ]model[-_ ]len[= ](\d+)", int),
        ("max_num_seqs", r"max[-_ ]num[-_ ]seqs[= ](\d+)", int),
        ("gpu_memory_utilization", r"mem-util[= ](0\.\d+)", float),
        ("spec_n", r"(?:MTP|DFlash2?|EAGLE-?3?)\s+n\s*=\s*(\d+)", int),
        ("tp", r"\bTP\s*=\s*(\d+)", int),
    ):
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            out[key] = cast(m.group(1))
    if re.search(r"spec-off|SPEC=off", text):
        out["spec_n"] = 0
    dtype = re.search(r"KV_CACHE_DTYPE=([A-Za-z0-9_]+)", text)
    if dtype:
        out["kv_cache_dtype"] = KV_WORDS.get(dtype.group(1).lower(), dtype.group(1))
    return out


def differing(settings: dict[str, Any], profile: dict[str, Any]) -> dict[str, Any]:
    """The settings that are not the profile's own."""
    env = profile.get("envelope", {})
    drafter = profile.get("drafter") or {}
    own = {
        "max_model_len": env.get("max_model_len"),
        "max_num_seqs": env.get("max_num_seqs", 1),
        "gpu_memory_utilization": env.get("gpu_memory_utilization"),
        "spec_n": drafter.get("width", 0),
        "tp": env.get("tp"),
    }
    out = {}
    for key, value in settings.items():
        if key == "kv_cache_dtype":
            mine = env.get("kv_cache_dtype")
            if value != mine and (mine, value) not in SAME_KV:
                out[key] = value
        elif own.get(key) != value:
            out[key] = value
    return out


def summary(compose: str, notes: str, limit: int = 280) -> str:
    """The compose cell and the notes' first sentence, as one plain line."""
    first = re.split(r"(?<=[.!?])\s", ascii_text(plain(notes)), maxsplit=1)[0] if notes else ""
    text = ascii_text(plain(compose))
    if first and first not in ("—", "-"):
        text = f"{text}: {first}"
    return text if len(text) <= limit else text[: limit - 3].rsplit(" ", 1)[0] + "..."


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 2)
