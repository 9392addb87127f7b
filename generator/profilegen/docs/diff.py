"""`profilegen diff A B`: what two profiles do differently, as data (pure): their settings,
their patches, the engine flags the containers pass, and what was measured on each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import Profile
from ..model.common import is_option
from ..model.evidence import has_decode, newest

# Naming and prose, not behaviour: not compared.
PROSE = {"id", "title", "upstream_key", "upstream_rev", "abstract", "extends", "evidence", "siblings",
         "alternatives", "notes", "caveats", "best_for", "template_note", "deviations",
         "patches", "best_for_source", "exposures_source", "recommendations"}  # fmt: skip


@dataclass(frozen=True)
class Change:
    what: str
    a: Any
    b: Any


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def env_value(spec: Any) -> str:
    """A container variable as one value, the way the compose file writes it: a literal, the
    host's own (`${NAME}`), or the first host variable set, else a default
    (`${A:-${B:-default}}`)."""
    if spec is None:
        return "(the host's, passed through)"
    if isinstance(spec, dict):
        text = str(spec.get("default", ""))
        for name in reversed(spec.get("host", [])):
            text = f"${{{name}:-{text}}}"
        return text
    return str(spec)


def _settings(p: Profile) -> dict[str, Any]:
    data = {k: v for k, v in p.model_dump(mode="json").items() if k not in PROSE}
    # One line a variable: its host names and default are one value, not two settings.
    data["env"] = {name: env_value(spec) for name, spec in data.get("env", {}).items()}
    return _flat(data)


def setting_changes(a: Profile, b: Profile) -> list[Change]:
    """Every setting (dotted path) whose value differs; unset on one side reads as None."""
    da, db = _settings(a), _settings(b)
    return [
        Change(k, da.get(k), db.get(k)) for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)
    ]


def patch_changes(a: Profile, b: Profile) -> list[Change]:
    out = [Change(p, "applied", None) for p in a.patches if p not in b.patches]
    out += [Change(p, None, "applied") for p in b.patches if p not in a.patches]
    shared = [p for p in a.patches if p in b.patches]
    if shared != [p for p in b.patches if p in a.patches]:
        out.append(Change("(order)", " -> ".join(a.patches), " -> ".join(b.patches)))
    return out


def flags(argv: tuple[str, ...]) -> dict[str, str]:
    """An engine command as flag -> its value words (positional words under "(args)"; a flag
    given twice keeps both, joined by " ; ")."""
    out: dict[str, str] = {}
    current = "(args)"
    values: dict[str, list[str]] = {}
    for word in argv:
        if is_option(word):
            current = word
            values.setdefault(current, [])
            if current in out:
                values[current].append(";")
            out[current] = ""
        else:
            values.setdefault(current, []).append(word)
    return {k: " ".join(v) for k, v in values.items()}


def flag_changes(argv_a: tuple[str, ...] | None, argv_b: tuple[str, ...] | None) -> list[Change]:
    fa, fb = flags(argv_a or ()), flags(argv_b or ())
    return [
        Change(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)
    ]


def evidence_text(p: Profile) -> str:
    """How much was measured, and the newest speed on the profile's own rig (or any)."""
    if not p.evidence:
        return "no evidence"
    ev = newest(p.evidence, lambda e: has_decode(e) and e.rig == p.rig) or newest(
        p.evidence, has_decode
    )
    head = f"{len(p.evidence)} record(s)"
    if ev is None:
        return head + ", no speed measured"
    m = ev.measured
    speed = " / ".join(
        "-" if v is None else f"{v:g}" for v in (m.decode_tps_narrative, m.decode_tps_code)
    )
    return f"{head}; newest speed {speed} tok/s on {ev.rig} ({ev.date})"
