"""A BENCHMARKS.md rig cell read as facts: who measured, on how many of which cards, how they
were linked, at what power cap, on what host."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Card names as rows write them -> the registry's GPU id (None: a GPU the registry lacks).
CARDS: tuple[tuple[str, str | None], ...] = (
    (r"3090\s*Ti", "rtx-3090-ti"),
    (r"3090", "rtx-3090"),
    (r"4090", "rtx-4090"),
    (r"5090", "rtx-5090"),
    (r"A6000", "rtx-a6000"),
    (r"3080", None),
    (r"5070\s*Ti", None),
    (r"A5000", None),
    (r"V100", None),
)
_CARD = re.compile(
    r"(?:(?P<count>\d+)\s*[×x]\s*)?(?:(?:RTX|Tesla|GeForce)\s+)?(?P<name>"
    + "|".join(p for p, _ in CARDS)
    + r")",
    re.IGNORECASE,
)
_POWER = re.compile(r"(\d{3}(?:\.\d+)?)(?:\s*/\s*(\d{3}))?\s*W\b")
_HOST_WORDS = re.compile(
    r"ryzen|epyc|xeon|threadripper|\bTR\b|\bi[3579]-|intel|amd|proxmox|kvm|vfio|\bvm\b|wsl|"
    r"linux|ubuntu|debian|cachyos|bazzite|bare metal|egpu|oculink|thunderbolt|usb4|lxc|headless|"
    r"nuc|miniPC|strix|dell|asus",
    re.IGNORECASE,
)


@dataclass
class RigCell:
    contributor: str | None = None
    cards: int | None = None
    gpus: list[str | None] = field(default_factory=list)  # registry GPU ids, card by card
    names: list[str] = field(default_factory=list)  # the cards as written
    link: str | None = None
    nvlink: bool | None = None
    power_cap_w: list[float] = field(default_factory=list)
    host: str | None = None
    driver: str | None = None

    def hardware(self) -> dict[str, Any]:
        """The Hardware record (model/evidence.py) of what the cell states."""
        out: dict[str, Any] = {}
        if self.cards:
            out["cards"] = self.cards
        if self.names:
            out["gpu"] = " + ".join(dict.fromkeys(self.names))
        if self.link:
            out["link"] = ascii_text(self.link)
        if self.nvlink is not None:
            out["nvlink"] = self.nvlink
        if self.power_cap_w:
            out["power_cap_w"] = self.power_cap_w
        if self.host:
            out["host"] = ascii_text(self.host)
        if self.driver:
            out["driver"] = self.driver
        return out


# Symbols rows use, as the registry's plain text writes them; other non-ASCII (emoji) goes.
ASCII = {"→": "->", "—": "-", "–": "-", "≈": "~", "×": "x", "≤": "<=", "≥": ">=", "−": "-",
         "·": ";", "±": "+/-", "µ": "u", "↑": "(above)", "↓": "(below)", "⤷": "", "’": "'"}  # fmt: skip


def plain(text: str) -> str:
    """Markdown markup removed: links to their text, emphasis and code marks dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"\*\*|__|`", "", text).strip()


def ascii_text(text: str) -> str:
    """The text in ASCII, spaces collapsed: what a registry file and a terminal show alike."""
    out = "".join(ASCII.get(ch, ch) if ord(ch) > 127 else ch for ch in text)
    out = "".join(ch for ch in out if ord(ch) < 128)
    return " ".join(out.split())


def read_rig(cell: str, fallback: str = "") -> RigCell:
    """The cell's facts; `fallback` (the section heading, "Dual-card (2× RTX 3090, TP=2)")
    supplies the cards where the cell names only a person."""
    text = plain(cell)
    out = RigCell()
    who = re.search(r"@([A-Za-z0-9][A-Za-z0-9_-]*)", text)
    if who:
        out.contributor = "@" + who.group(1)
    inner = text[text.index("(") + 1 :] if "(" in text and who else text
    inner = inner[: inner.rindex(")")] if inner.endswith(")") else inner
    _cards(out, inner) or _cards(out, plain(fallback))
    _link(out, inner)
    out.power_cap_w = _power(inner)
    parts = [p.strip() for p in re.split(r"[,;]|\s\+\s", inner)]
    host = [p for p in parts if _HOST_WORDS.search(p) and not _CARD.search(p)]
    out.host = ", ".join(host)[:200] or None
    driver = re.search(r"driver\s+([0-9][0-9.]+)", inner)
    out.driver = driver.group(1) if driver else None
    return out


def _cards(out: RigCell, text: str) -> bool:
    """Cards counted where the cell counts them ("2× 3090 + 1× 5090"), else each card named
    once (a mixed pair named card by card, and named again in a note)."""
    found = list(_CARD.finditer(text))
    if not found:
        return False
    counted = [m for m in found if m.group("count")]
    seen: set[str] = set()
    for m in counted or found:
        gpu = next(g for p, g in CARDS if re.fullmatch(p, m.group("name"), re.IGNORECASE))
        name = re.sub(r"\s+", " ", m.group("name"))
        if not counted and name.lower() in seen:
            continue
        seen.add(name.lower())
        out.names.append(f"RTX {name}" if gpu and gpu.startswith("rtx") else name)
        out.gpus += [gpu] * (int(m.group("count")) if counted else 1)
    out.cards = len(out.gpus)
    return True


def _link(out: RigCell, text: str) -> None:
    low = text.lower()
    if re.search(r"no[ -]nvlink|no nvlink|nvlink-cable-attached|phb / no-p2p", low):
        out.nvlink = False
    elif "nvlink" in low:
        out.nvlink = True
    pcie = re.search(r"PCIe[^,;()]*", text, re.IGNORECASE)
    words = []
    if pcie:
        # "PCIe + Ryzen 9 5950X": what follows a plus is the host, not the link.
        kept = [w for w in pcie.group(0).split(" + ") if not _HOST_WORDS.search(w)]
        words.append(" + ".join(kept).strip(" —-"))
    if out.nvlink and not any("nvlink" in w.lower() for w in words):
        words.append("NVLink")
    if re.search(r"p2p (engaged|transfer-verified)|patched p2p engaged|p2p engaged", low):
        words.append("patched P2P")
    out.link = ", ".join(w for w in words if w)[:120] or None


def _power(text: str) -> list[float]:
    """Stated power caps per card; "default 600" and drawn watts are not caps."""
    caps: list[float] = []
    for m in _POWER.finditer(text):
        before = text[max(0, m.start() - 12) : m.start()].lower()
        if "default" in before or "draw" in before or "~" in before:
            continue
        caps.append(float(m.group(1)))
        if m.group(2):
            caps.append(float(m.group(2)))
    return [int(c) if c.is_integer() else c for c in caps]
