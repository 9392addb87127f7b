"""What each profile's container runs, under the fixed scenarios, as one reviewable record.

`render --all` writes it beside the compose file (`compose/<id>/explain.json`) and `check`
proves it fresh, so a change to a template or a registry value that alters what any container
runs is a reviewable diff in the pull request that makes it. The defaults are recorded whole;
every other scenario by what it changes (the engine's command is one line, as a shell reads
it).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from ..cache import ByIdentity
from .core import Explanation
from .report import as_json

RECORD_NAME = "explain.json"
# Keys of an explanation that say which scenario it was (the record's keys say that).
_SCENARIO_KEYS = ("profile", "scenario")


def _entry(e: Explanation) -> dict[str, Any]:
    data = {k: v for k, v in as_json(e).items() if k not in _SCENARIO_KEYS}
    if e.launched:
        data["argv"] = shlex.join([e.exe or "", *e.argv])
        data.pop("exe", None)
    return data


def _difference(entry: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """What differs from the defaults: a mapping (the environment) key by key, a variable the
    scenario drops as null; anything else whole; what it does not have at all under `unset`."""
    changed: dict[str, Any] = {}
    for key, value in entry.items():
        before = defaults.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            keys = sorted(set(value) | set(before))
            diff = {k: value.get(k) for k in keys if value.get(k) != before.get(k)}
            if diff:
                changed[key] = diff
        elif value != before:
            changed[key] = value
    gone = sorted(set(defaults) - set(entry))
    if gone:
        changed["unset"] = gone
    return changed


_RECORDS: ByIdentity[bytes] = ByIdentity(1_000)


def record(explanations: list[Explanation]) -> bytes:
    """One profile's record: the defaults whole, each other scenario as its differences
    (written once per set of explanations: they are immutable)."""
    return _RECORDS.get(tuple(explanations), lambda: _record(explanations))


def _record(explanations: list[Explanation]) -> bytes:
    entries = {e.scenario.label: _entry(e) for e in explanations}
    defaults = entries.pop("defaults", {})
    out: dict[str, Any] = {"defaults": defaults}
    for label in sorted(entries):
        out[label] = _difference(entries[label], defaults)
    return (json.dumps(out, indent=1, sort_keys=True, ensure_ascii=True) + "\n").encode()
