"""`lock`'s remote patch pins, each verified against the file's own bytes before it is written.

A pin the lock records is the registry's sha256 and size *checked*: the file is read from the
patch cache or, for a changed or new pin online, downloaded (and cached), and matched against
them. A file the cache lacks is said: its entry is kept only where the lock already records
the very same pin (verified when that lock was written), never copied over from the registry
as if verified. A changed or new pin that cannot be checked leaves the lock unwritten: `check`
goes on reporting the pin that does not agree with the lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lockfile.lock import LOCK_NAME, Lock, patch_entries
from ..registry import Registry
from .deadline import Deadline
from .patchfiles import Missing, MissingPatchFiles, collect_patch_files, offline_mode


@dataclass
class PatchPins:
    """The lock's patch entries and what was proved of them."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    verified: int = 0  # read from the cache or downloaded, and matched against the pin
    kept: list[str] = field(default_factory=list)  # not in the cache: the lock's own entry


class UnverifiedPins(MissingPatchFiles):
    """Changed or new pins whose files could not be checked: the lock is not written."""

    def __init__(self, missing: list[Missing], previous: Lock) -> None:
        super().__init__(missing)
        lines = [f"{LOCK_NAME} not written: {len(missing)} remote patch pin(s) not verified:"]
        for m in missing:
            key = f"{m.patch}/{m.path}"
            before = previous.patches.get(key, {}).get("sha256")
            had = f"; {LOCK_NAME} pins sha256 {before[:12]}… for it" if before else ""
            lines.append(f"  {key} (sha256 {m.sha256[:12]}…): {m.reason}{had}")
        lines.append(
            "A pin is written only once its file's bytes match it: add the file to the cache "
            "(`profilegen cache add FILE`), or run `profilegen lock` where its host answers."
        )
        self.args = ("\n".join(lines),)

    def __str__(self) -> str:
        return str(self.args[0])


def verified_pins(
    registry: Registry, previous: Lock, offline: bool, deadline: Deadline | None = None
) -> PatchPins:
    """Every remote patch file's lock entry, its bytes checked against the pin (see above).

    The cache is read first; a changed or new pin it lacks is downloaded (unless offline), a
    pin the lock already records the same is kept without reaching the network."""
    pins = patch_entries(registry)
    absent = _missing(registry, sorted(pins), None, offline=True)
    fresh = [key for key in absent if previous.patches.get(key) != pins[key]]
    if fresh and not (offline or offline_mode()):
        still = _missing(registry, fresh, deadline, offline=False)
        absent = {k: m for k, m in absent.items() if k not in fresh} | still
    out = PatchPins()
    unverified = []
    for key, pin in sorted(pins.items()):
        lacking = absent.get(key)
        if lacking is None:
            out.entries[key] = pin
            out.verified += 1
        elif previous.patches.get(key) == pin:
            out.entries[key] = pin
            out.kept.append(key)
        else:
            unverified.append(lacking)
    if unverified:
        raise UnverifiedPins(unverified, previous)
    return out


def _missing(
    registry: Registry, keys: list[str], deadline: Deadline | None, offline: bool
) -> dict[str, Missing]:
    """The files among `keys` (`patch/path`) that cannot be had, by key."""
    patches = sorted({key.split("/", 1)[0] for key in keys})
    try:
        collect_patch_files(registry, patches, deadline, offline=offline)
    except MissingPatchFiles as exc:
        return {k: m for m in exc.missing if (k := f"{m.patch}/{m.path}") in keys}
    return {}
