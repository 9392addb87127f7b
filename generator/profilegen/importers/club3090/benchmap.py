"""Which catalogue entry a BENCHMARKS.md row measured: its compose cell resolved to a key.

A row names its server by key (`vllm/qwen38-27b-dual-max`), by compose path
(`dual/nvfp4/mtp.yml`), by the flat names composes had before they were sorted into
topology/weights folders (`dual-dflash.yml`), or by a short slug (`multi-fast`). A name that
fits no entry, or more than one, is not guessed: the row is listed with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .catalog import Entry

TOPOLOGIES = ("single", "dual", "multi4", "multi8")
LLAMA_DIRS = ("llama-cpp", "ik-llama", "beellama", "llamacpp-club3090")
# Upstream's engine folders (models/<model>/<folder>/compose/...), and the words its
# BENCHMARKS.md section headings use for its two engine families.
ENGINE_DIRS = (*LLAMA_DIRS, "vllm", "sglang")
LLAMA_HEADING, VLLM_HEADING = "llama.cpp", "vLLM"
# A row that measured something built after a compose rather than the compose itself.
HAND_BUILT = re.compile(
    r"-shape|not a stack compose|hand-rolled|custom build|host build|\bfork\b", re.IGNORECASE
)
_SPAN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Resolved:
    key: str | None
    why: str | None = None  # set when key is None


@dataclass(frozen=True)
class Compose:
    path: str  # models/<model>/<engine dir>/compose/<rest>
    model: str
    engine_dir: str
    rest: str  # <topology>/<weights>/<name>.yml, or _archive/...

    @property
    def archived(self) -> bool:
        return self.rest.startswith("_archive/")

    @property
    def parts(self) -> list[str]:
        return self.rest.removeprefix("_archive/").split("/")


class Catalogue:
    """The entries and compose files of one revision, for resolving rows."""

    def __init__(self, entries: list[Entry], files: list[str]) -> None:
        self.keys = {e.key: e for e in entries}
        self.models = sorted({str(e.get("model")) for e in entries})
        self.by_path: dict[str, list[str]] = {}
        for e in entries:
            self.by_path.setdefault(e.compose_path, []).append(e.key)
        self.composes = [c for c in map(_compose, files) if c is not None]

    def models_of(self, heading: str) -> list[str]:
        """The models a `## ` heading is about (its words hold each of the model's words;
        where several fit, those sharing its first word)."""
        words = set(_words(heading))
        fits = [m for m in self.models if set(_words(m)) <= words]
        first = _words(heading)[:1]
        best = [m for m in fits if _words(m)[:1] == first]
        return best or fits

    def resolve(self, cell: str, heading: str, section: str) -> Resolved:
        spans = [s.strip() for s in _SPAN.findall(cell)]
        if not spans:
            return Resolved(None, "names no compose or catalogue key")
        if HAND_BUILT.search(cell):
            return Resolved(None, "a server built by hand after a compose, not the compose")
        keys = [s for s in spans if s in self.keys]
        reasons: list[str] = []
        if not keys:
            for span in spans:
                got = self._span(span, self.models_of(heading), _engines(section))
                if got.key:
                    keys.append(got.key)
                elif got.why:
                    reasons.append(got.why)
        keys = list(dict.fromkeys(keys))
        if len(keys) > 1 and re.search(r"\bvs\.?\b", cell):
            return Resolved(None, f"compares {len(keys)} profiles in one row ({', '.join(keys)})")
        if keys:
            return Resolved(keys[0])  # the first name; later ones are aliases or asides
        return Resolved(None, reasons[0] if reasons else f"`{spans[0]}` is no compose or key")

    def _span(self, span: str, models: list[str], engines: tuple[str, ...] | None) -> Resolved:
        name = span.split()[0]
        head, _, tail = name.partition("/")
        if head in self.models:
            models, name = [head], tail
            first = name.split("/", 1)[0]
            if first in ENGINE_DIRS:
                engines, name = (first,), name.split("/", 1)[1]
        if not name.endswith(".yml"):
            return self._slug(name, models)
        default = self._default(name, models, engines)
        if default is not None:
            return Resolved(default)
        if not models:
            return Resolved(None, f"`{span}`: the section names no model to find it in")
        hits = [
            c
            for c in self.composes
            if c.model in models
            and (engines is None or c.engine_dir in engines)
            and _names(c, name)
        ]
        if not hits:
            return Resolved(
                None, f"`{name}` names no compose of {', '.join(models)} at this revision"
            )
        if len(hits) > 1:
            where = ", ".join(c.rest for c in hits)
            return Resolved(None, f"`{name}` fits {len(hits)} composes ({where})")
        hit = hits[0]
        if hit.archived:
            return Resolved(None, f"`{name}` is {hit.path}, archived upstream: no profile")
        keys = self.by_path.get(hit.path, [])
        if not keys:
            return Resolved(None, f"{hit.path} is in no catalogue entry")
        # Entries sharing a compose are one server; the one named after its topology (the
        # default it was benched as) is preferred, else the catalogue's first.
        named = [k for k in keys if k.split("/", 1)[1] == hit.parts[0]]
        return Resolved((named or keys)[0])

    def _default(self, name: str, models: list[str], engines: tuple[str, ...] | None) -> str | None:
        """`dual.yml`, `dual/docker-compose.yml`: the topology's default, the entry keyed by it
        (`vllm/dual`)."""
        topology = name.removesuffix(".yml").removesuffix("/docker-compose")
        if topology not in TOPOLOGIES:
            return None
        family = "llamacpp" if engines == LLAMA_DIRS else "vllm"
        entry = self.keys.get(f"{family}/{topology}")
        return entry.key if entry is not None and str(entry.get("model")) in models else None

    def _slug(self, name: str, models: list[str]) -> Resolved:
        """`dual-max`: the entry of the section's model whose key name is, or ends with, it."""
        if "-" not in name:
            return Resolved(None, f"`{name}` is no compose or key")
        hits = [
            k
            for k, e in self.keys.items()
            if str(e.get("model")) in models
            and (k.split("/", 1)[1] == name or k.split("/", 1)[1].endswith("-" + name))
        ]
        if len(hits) == 1:
            return Resolved(hits[0])
        why = "no entry" if not hits else f"{len(hits)} entries ({', '.join(hits)})"
        return Resolved(None, f"`{name}` names {why} of {', '.join(models) or 'no model'}")


def _compose(path: str) -> Compose | None:
    m = re.fullmatch(r"models/([^/]+)/([^/]+)/compose/(.+\.yml)", path)
    return Compose(path, m.group(1), m.group(2), m.group(3)) if m else None


def _names(c: Compose, name: str) -> bool:
    """Whether `name` (as a row writes it) names compose `c`: its path's tail, or one of the
    flat names composes had before the topology/weights folders."""
    parts = c.parts
    if len(parts) != 3:
        return False
    topology, weights, file = parts
    stem = file.removesuffix(".yml")
    if "/" in name:
        if f"/{c.rest}".endswith(f"/{name}"):
            return True
        top, _, leaf = name.partition("/")
        return top == topology and leaf == file  # dual/bf16-mtp.yml: weights folder unnamed
    flat = name.removesuffix(".yml")
    return flat in (stem, f"{topology}-{stem}", weights, f"{topology}-{weights}")


def _engines(section: str) -> tuple[str, ...] | None:
    if LLAMA_HEADING in section:
        return LLAMA_DIRS
    if VLLM_HEADING in section:
        return ("vllm",)
    return None


def _words(text: str) -> list[str]:
    text = re.sub(r"\(.*", "", text).lower()
    return [w for w in re.split(r"[\s-]+", text) if w]
