"""What each imported live profile is best for and what it is exposed to, with where it was read.

From the catalogue at the imported revision: the entry's `workload` (every entry names one),
the picks, uses and quality figures its pages state (`docreading.py`), the exposures its pages
state for a whole model, and those its compose file's header states. Each value carries its
source (file, line, revision); the words are profilegen's own.
"""

from __future__ import annotations

import re
from typing import Any

from .catalog import Entry
from .docreading import Reading, Statement, read_pages
from .entities import Catalogue
from .source import Tree

# An upstream workload id, in a few plain words of what a profile with it is for.
WORKLOADS = {
    "fast-chat": "short-context chat where decode speed matters most",
    "long-ctx-single": "one user or agent at long context, accuracy before throughput",
    "multi-stream-tenant": "two to four agents served at once, context and speed balanced",
    "tool-heavy": "tool-calling agents with quick turns at moderate context",
    "vision-coding": "coding and inspection with images",
}
# What a known engine bug does, in a line.
EFFECTS = {
    "vllm#50021": "workers can die under sustained multi-turn traffic (an out-of-bounds write "
    "in the GDN speculative-decoding path)",
}
UNKNOWN_EFFECT = "an open engine issue the catalogue says this configuration runs into"
SPEC_OFF = "SPEC=off: serve without the drafter"
_PROJECT = r"(?:vllm|llama\.cpp|sglang|ik_llama)#\d{3,9}"
_HEADER_EXPOSED = re.compile(
    rf"exposed to (?:OPEN |open )?\[?(?P<a>{_PROJECT})|(?P<b>{_PROJECT}), OPEN\b"
)
FIELDS = ("best_for", "best_for_source", "exposures", "exposures_source", "recommendations")


def advise(tree: Tree, registry_file: str, entries: list[Entry], out: Catalogue) -> None:
    """Adds best_for, exposures and recommendations to every live imported profile."""
    by_key = {e.key: e for e in entries}
    reading = read_pages(tree, set(by_key))
    for data in out.profiles.values():
        entry = by_key.get(str(data.get("upstream_key")))
        if entry is None or data.get("status") == "retired":
            continue
        advice = _Advice(tree, out, entry, data)
        data.update(advice.fields(reading, registry_file))


class _Advice:
    def __init__(self, tree: Tree, out: Catalogue, entry: Entry, data: dict[str, Any]) -> None:
        self.tree, self.out, self.entry, self.data = tree, out, entry, data

    def source(self, file: str, line: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"file": file}
        if line:
            out["line"] = line
        if self.out.rev:
            out["rev"] = self.out.rev
        return out

    def fields(self, reading: Reading, registry_file: str) -> dict[str, Any]:
        about = reading.about.get(self.entry.key, [])
        result: dict[str, Any] = {}
        use = next((s for s in about if s.kind == "use"), None)
        workload = str(self.entry.get("workload", ""))
        if use is not None:
            result["best_for"] = use.says
            result["best_for_source"] = self.source(use.file, use.line)
        elif workload in WORKLOADS:
            result["best_for"] = WORKLOADS[workload]
            line = self.entry.lines.get("workload")
            result["best_for_source"] = self.source(registry_file, line)
        else:
            self.out.note(self.entry.key, "note", f"no use stated upstream (workload {workload!r})")
        exposures = self.exposures(reading)
        result["exposures"] = exposures
        if not exposures:
            result["exposures_source"] = self.source(self.entry.compose_path)
        recommendations = [self.recommendation(s) for s in about if s.kind != "use"]
        if recommendations:
            result["recommendations"] = _unique(recommendations)
        return result

    def recommendation(self, statement: Statement) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": statement.kind, "says": statement.says}
        if statement.rig:
            out["rig"] = statement.rig
        out["source"] = self.source(statement.file, statement.line)
        return out

    def exposures(self, reading: Reading) -> list[dict[str, Any]]:
        topology = self.entry.compose_path.split("/compose/", 1)[-1].split("/", 1)[0]
        found: dict[str, dict[str, Any]] = {}
        for model, within, statement in reading.scoped:
            ours = str(self.data.get("model"))
            if (ours == model or ours.startswith(f"{model}-")) and topology.startswith(within):
                issue = statement.extra["issue"]
                how = statement.extra.get("mitigation")
                if how == "SPEC=off":  # switches the drafter off: none without one
                    how = SPEC_OFF if self.data.get("drafter") else None
                mitigation = how
                found.setdefault(
                    issue, self.exposure(issue, mitigation, statement.file, statement.line)
                )
        for issue, line in self.header_exposures():
            mitigation = SPEC_OFF if self.data.get("drafter") else None
            found.setdefault(issue, self.exposure(issue, mitigation, self.entry.compose_path, line))
        return list(found.values())

    def exposure(self, issue: str, mitigation: str | None, file: str, line: int) -> dict[str, Any]:
        if issue not in EFFECTS:
            self.out.note(self.entry.key, "note", f"{file}:{line}: {issue} has no effect on record; "
                          "stated as an open issue")  # fmt: skip
        out: dict[str, Any] = {"issue": issue, "effect": EFFECTS.get(issue, UNKNOWN_EFFECT)}
        if mitigation:
            out["mitigation"] = mitigation
        out["source"] = self.source(file, line)
        return out

    def header_exposures(self) -> list[tuple[str, int]]:
        """(issue, line) for each issue the compose's comments say it is exposed to."""
        text = self.tree.text(self.entry.compose_path) or ""
        out: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.lstrip().startswith("#"):
                continue
            for m in _HEADER_EXPOSED.finditer(line):
                out.setdefault(m["a"] or m["b"], number)
        return list(out.items())


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
