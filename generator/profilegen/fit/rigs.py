"""Rigs by name: a registry rig, or one spelt out on the command line (2x5090, 3090ti+3090)."""

from __future__ import annotations

import difflib
import re

from ..errors import UsageError, suggest
from ..model import Gpu, Rig
from ..model.rig import Interconnect
from ..registry import Registry

# "2x5090", "1 x rtx-3090", "3090ti" (one card); parts joined by "+" make a mixed rig.
_PART = re.compile(r"^\s*(?:(\d{1,2})\s*[x×*]\s*)?([A-Za-z0-9][A-Za-z0-9 ._-]{0,40}?)\s*$")
MAX_CARDS = 16
# How close to a registry rig's id a name must be to count as a typo of it (not as cards).
RIG_TYPO = 0.88


def _key(text: str) -> str:
    """'NVIDIA GeForce RTX 3090 Ti', 'rtx-3090-ti' and '3090ti' all become '3090ti'."""
    words = re.split(r"[\s_-]+", text.lower())
    return "".join(w for w in words if w not in {"nvidia", "geforce", "rtx", "gpu"})


def find_gpu(registry: Registry, name: str) -> Gpu:
    """A registry GPU by id, by name or by its short name (3090, 3090ti, a6000)."""
    if name in registry.gpus:
        return registry.gpus[name]
    want = _key(name)
    found = [g for g in registry.gpus.values() if want in (_key(g.id), _key(g.name))]
    if len(found) == 1:
        return found[0]
    known = sorted(registry.gpus)
    close = suggest(name, known + [_key(g) for g in known])
    hint = f"did you mean {close!r}?" if close else "known: " + ", ".join(known)
    raise UsageError(f"no GPU {name.strip()!r} ({hint})")


def _parse(registry: Registry, spec: str) -> list[Gpu]:
    cards: list[Gpu] = []
    for part in spec.split("+"):
        match = _PART.match(part)
        if not match:
            raise UsageError(
                f"--rig {spec!r}: expected a registry rig or cards like 2x5090, 1x3090, 3090ti+3090"
            )
        count = int(match.group(1) or 1)
        if count < 1:
            raise UsageError(f"--rig {spec!r}: a rig needs at least one card")
        cards += [find_gpu(registry, match.group(2))] * count
    if len(cards) > MAX_CARDS:
        raise UsageError(f"--rig {spec!r}: at most {MAX_CARDS} cards")
    return cards


def adhoc_rig(registry: Registry, spec: str) -> Rig:
    """A rig of the cards `spec` names: identical cards, or mixed ones listed card by card."""
    cards = _parse(registry, spec)
    ids = [g.id for g in cards]
    runs: list[tuple[str, int]] = []
    for gid in ids:
        if runs and runs[-1][0] == gid:
            runs[-1] = (gid, runs[-1][1] + 1)
        else:
            runs.append((gid, 1))
    ident = "-".join(f"{n}x{_key(gid)}" for gid, n in runs)
    name = " + ".join(f"{n} x {registry.gpus[gid].name}" for gid, n in runs)
    smallest = min(cards, key=lambda g: (g.vram.bytes, g.id))
    link = Interconnect(kind="single") if len(cards) == 1 else Interconnect(kind="pcie")
    return Rig(
        id=ident,
        name=f"{name} (from --rig {spec.strip()})",
        gpu=smallest.id,
        count=len(cards),
        cards=ids if len(set(ids)) > 1 else [],
        interconnect=link,
    )


def find_rig(registry: Registry, name: str) -> Rig:
    """A registry rig by id or by its cards (`2x3090` is the registry's plain rig of two 3090s,
    the same in every command), else the rig the cards spell out (fit and list take rigs the
    registry does not have: 2x4090, 3090ti+3090).

    A name close to a registry rig's id is taken for a typo of it; otherwise the error
    names the card that is not known.
    """
    found = _registry_rig(registry, name)
    if found is not None:
        return found
    return adhoc_rig(registry, name)


def find_registry_rig(registry: Registry, name: str) -> Rig:
    """A registry rig, by id or by its cards (`2x3090`), for what must name one (a profile's
    rig, a gateway's, a recorded bench)."""
    try:
        found = _registry_rig(registry, name)
        cards = adhoc_rig(registry, name) if found is None else None
    except UsageError:
        # Not cards the registry knows: the nearest registry rig is the better guess here.
        close = suggest(name, sorted(registry.rigs))
        if close is None:
            raise
        raise UsageError(f"no rig {name!r} (did you mean {close!r}?)") from None
    if found is not None:
        return found
    assert cards is not None
    raise UsageError(
        f"no registry rig of {cards.name.split(' (from')[0]} (registry rigs: "
        f"{', '.join(sorted(registry.rigs))}; add one under registry/rigs/)"
    )


def _registry_rig(registry: Registry, name: str) -> Rig | None:
    if name in registry.rigs:
        return registry.rigs[name]
    near = difflib.get_close_matches(name, list(registry.rigs), n=1, cutoff=RIG_TYPO)
    if near:
        raise UsageError(f"no rig {name!r} (did you mean {near[0]!r}?)")
    if not all(_PART.match(part) for part in name.split("+")):
        close = suggest(name, list(registry.rigs))
        hint = (
            f"did you mean {close!r}?"
            if close
            else "a registry rig, or cards like 2x5090 or 3090ti+3090"
        )
        raise UsageError(f"no rig {name!r} ({hint})")
    wanted = sorted(g.id for g in _parse(registry, name))
    same = [r for r in registry.rigs.values() if sorted(r.cards or [r.gpu] * r.count) == wanted]
    return min(same, key=plainness) if same else None


def plainness(rig: Rig) -> tuple[int, int, int, str]:
    """How plain a rig is, for naming it by its cards: PCIe before NVLink, a Linux host without a
    desktop on a card, the shortest id (2x3090 is 2x3090-pcie, not 2x3090-nvlink)."""
    linked = rig.interconnect.nvlink or rig.interconnect.kind == "nvlink"
    desktop = rig.host_os != "linux" or rig.desktop_gpu is not None
    return (int(linked), int(desktop), len(rig.id), rig.id)


def same_cards(a: Rig, b: Rig) -> bool:
    return sorted(a.cards or [a.gpu] * a.count) == sorted(b.cards or [b.gpu] * b.count)


def rig_gpus(registry: Registry, rig: Rig) -> list[Gpu]:
    """The GPU of every card, in card order."""
    return [registry.gpus[g] for g in (rig.cards or [rig.gpu] * rig.count)]
