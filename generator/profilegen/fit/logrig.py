"""The rig a boot log was made on: the cards it names (llama.cpp lists them), else the rig
given, else the profile's; never a rig the log contradicts (more GPUs than it has, more memory
on a card than the card holds)."""

from __future__ import annotations

from ..errors import UsageError
from ..model import Profile
from ..registry import Registry
from ..units import GIB
from .logs import BootLog
from .rigs import find_gpu


def log_cards(registry: Registry, log: BootLog) -> list[str]:
    """The registry GPUs of the cards the log names, in device order (none: it names none)."""
    out = []
    for device, (name, _mib) in sorted(log.devices.items()):
        try:
            out.append(find_gpu(registry, name).id)
        except UsageError:
            raise UsageError(
                f"the log's {device} is a {name}, which is no registry GPU: add it under "
                "registry/gpus/ (and a rig of it) to record this boot"
            ) from None
    return out


def _cards(registry: Registry, rig_id: str) -> list[str]:
    rig = registry.rigs[rig_id]
    return sorted(rig.cards or [rig.gpu] * rig.count)


def _shown(cards: list[str]) -> str:
    return ", ".join(f"{cards.count(c)}x {c}" for c in dict.fromkeys(cards))


def _rig_of_cards(registry: Registry, cards: list[str], profile: Profile) -> str:
    fits = sorted(r for r in registry.rigs if _cards(registry, r) == sorted(cards))
    if profile.rig in fits:
        return profile.rig  # the same cards: the profile's rig says how they are linked
    if len(fits) == 1:
        return fits[0]
    if not fits:
        raise UsageError(
            f"the log shows {_shown(cards)}, which no registry rig has: add the rig under "
            "registry/rigs/ to record this boot"
        )
    raise UsageError(
        f"the log shows {_shown(cards)}, the cards of {', '.join(fits)}: name one with --rig"
    )


def cards_rig(registry: Registry, log: BootLog, profile: Profile) -> str | None:
    """The registry rig of the cards the log names, where it names some that one rig has."""
    try:
        cards = log_cards(registry, log)
        return _rig_of_cards(registry, cards, profile) if cards else None
    except UsageError:
        return None


def log_rig(registry: Registry, log: BootLog, profile: Profile, asked: str | None) -> str:
    """The registry rig to record the boot on (refused where the log says otherwise)."""
    if asked is not None and asked not in registry.rigs:
        raise UsageError(
            f"--record needs a registry rig; {asked!r} is not one (add it under registry/rigs/)"
        )
    cards = log_cards(registry, log)
    if cards and asked is not None and _cards(registry, asked) != sorted(cards):
        raise UsageError(
            f"the log shows {_shown(cards)}; --rig {asked} is {_shown(_cards(registry, asked))}: "
            "a boot is recorded on the cards it ran on"
        )
    rig = asked or (_rig_of_cards(registry, cards, profile) if cards else profile.rig)
    _fits_the_rig(registry, log, rig, "--rig" if asked else "the profile's rig")
    return rig


def _fits_the_rig(registry: Registry, log: BootLog, rig_id: str, said: str) -> None:
    rig = registry.rigs[rig_id]
    gpus = [registry.gpus[g] for g in (rig.cards or [rig.gpu] * rig.count)]
    tp = log.args.get("tensor_parallel_size", 1)
    pp = log.args.get("pipeline_parallel_size", 1)
    if isinstance(tp, int) and isinstance(pp, int) and tp * pp > rig.count:
        raise UsageError(
            f"the log's boot ran on {tp * pp} GPUs (TP {tp} x PP {pp}); {said} {rig_id} has "
            f"{rig.count}: name the rig it ran on with --rig"
        )
    largest = max(g.vram.bytes for g in gpus)
    per_card = (log.weights_loaded_bytes or 0) + (log.kv_available_bytes or 0)
    per_card = max([per_card, *log.device_bytes.values()])
    if per_card > largest:
        raise UsageError(
            f"the log's boot holds {per_card / GIB:,.1f} GiB on one GPU; the cards of {said} "
            f"{rig_id} have {largest / GIB:,.1f} GiB: name the rig it ran on with --rig"
        )
