"""What the catalogue's pages say about its entries: picks, uses, quality figures, exposures.

Pages are read as text, line by line; a statement is kept with the file and line it was read
at. Only the facts and figures are taken (which entry, which use, which score, which issue):
the words written into the registry are profilegen's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .source import Tree

# Pages about one rig shape: the rig their picks are for.
RIG_PAGES = {"docs/SINGLE_CARD.md": "1x3090", "docs/DUAL_CARD.md": "2x3090",
             "docs/MULTI_CARD.md": None}  # fmt: skip
SCOPE = {"docs/SINGLE_CARD.md": "one-card", "docs/DUAL_CARD.md": "two-card",
         "docs/MULTI_CARD.md": "multi-card"}  # fmt: skip
_MODEL_PAGE = re.compile(r"^models/(?P<model>[^/]+)/README\.md$")
_SLUG = re.compile(r"`(?P<slug>[a-z][a-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9._-]*|[a-z][a-z0-9.-]+)`")
_ALIAS = re.compile(r"`(?P<a>[^`]+)`[^`|]*\(≡ `(?P<b>[^`]+)`\)")
ISSUE = re.compile(r"\b(?P<project>vllm|llama\.cpp|sglang|ik_llama)#(?P<number>\d{3,9})\b")
_EXPOSED = re.compile(r"exposed to (?:open |OPEN )?\[?(?:vllm|llama\.cpp|sglang|ik_llama)#\d")
_ALL_OF = re.compile(r"\b(?:All|Every) (?P<model>[a-z][\w.-]*) slugs\b")
_BOTH_MULTI = re.compile(r"\bBoth (?P<model>[a-z][\w.-]*) multi slugs\b")
_MITIGATE = re.compile(r"Mitigat\w* with `(?P<how>[A-Z_]+=[\w.-]+)`")
_RECOMMENDED = re.compile(r"\*\*Strongly recommended for (?P<use>[^*\x00-\x1f\x7f]{1,80}?)\*\*")
_PICK = re.compile(r"(?:\*\*The |⭐ )(?P<use>[a-z][\w-]{0,40}) pick\b")
_STREAMS = re.compile(r"flat to N=(?P<flat>\d+) streams.*?at N=(?P<knee>\d+)")
_TIE = re.compile(
    r"(?P<a>\w+) and (?P<b>\w+) are a tie on quality.*?(?P<x>\d+)/(?P<n>\d+) vs (?P<y>\d+)/\d+"
)
_THINK = re.compile(r"(?P<off>\d+)/(?P<n>\d+) think-off\W+(?P<on>\d+)/\d+ think-on")


@dataclass
class Statement:
    keys: list[str]
    kind: str  # pick | quality | warning | use | exposure
    says: str
    file: str
    line: int
    rig: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reading:
    """Statements by the entry key they are about, and model-wide exposure statements."""

    about: dict[str, list[Statement]] = field(default_factory=dict)
    # (model, topology prefix or "", statement): every entry of that model (and topology).
    scoped: list[tuple[str, str, Statement]] = field(default_factory=list)

    def add(self, statement: Statement, aliases: dict[str, str]) -> None:
        keys = list(statement.keys)
        keys += [aliases[k] for k in keys if k in aliases and aliases[k] not in keys]
        for key in keys:
            self.about.setdefault(key, []).append(statement)


def read_pages(tree: Tree, keys: set[str]) -> Reading:
    reading = Reading()
    pages = [p for p in RIG_PAGES if tree.is_file(p)]
    pages += [p for p in tree.files() if _MODEL_PAGE.match(p)]
    for page in pages:
        text = tree.text(page) or ""
        _read_page(page, text.splitlines(), keys, reading)
    return reading


def _read_page(page: str, lines: list[str], keys: set[str], reading: Reading) -> None:
    aliases = _aliases(lines, keys)
    model_page = _MODEL_PAGE.match(page)
    scope = SCOPE.get(page) or (f"{model_page['model']}" if model_page else page)
    rig = RIG_PAGES.get(page)
    section: list[str] = []
    default = next(
        (n for x in lines if x.startswith("|") and "(default)" in x and (n := _named(x, keys))), []
    )
    for number, line in enumerate(lines, 1):
        if line.startswith("#"):
            section = []
            continue
        named = _named(line, keys)
        if line.startswith("|"):
            section += named
        where = (page, number)
        for statement in _statements(line, named, section, default, scope, rig, where):
            reading.add(statement, aliases)
        exposure = _exposure(line, where)
        if exposure is not None:
            _scope(line, exposure, reading)


def _statements(
    line: str,
    named: list[str],
    section: list[str],
    default: list[str],
    scope: str,
    rig: str | None,
    where: tuple[str, int],
) -> list[Statement]:
    out = []
    if line.startswith("|") and "⭐" in line and named:
        out.append(_pick(line, named, scope, rig, where))
    if (m := _RECOMMENDED.search(line)) and named:
        use = m["use"].strip()
        out.append(Statement(named[:1], "use", use, *where, rig=rig))
        out.append(Statement(named[:1], "pick", f"recommended for {use}", *where, rig=rig))
    if (m := _PICK.search(line)) and named:
        out.append(Statement(named[:1], "use", _pick_use(m["use"]), *where, rig=rig))
    if (m := _TIE.search(line)) and section:
        out += _tie(m, section, where, rig)
    if (m := _THINK.search(line)) and default:
        suite = " on the 8-pack" if "8-pack" in line else ""
        says = f"scores {m['off']}/{m['n']}{suite} with thinking off, {m['on']}/{m['n']} with it on"
        out.append(Statement(default[:1], "quality", says, *where, rig=rig))
    return out


def _pick(
    line: str, named: list[str], scope: str, rig: str | None, where: tuple[str, int]
) -> Statement:
    lower = line.lower()
    what = ""
    if "concurrency" in lower or "multi-agent" in lower:
        what = " for many streams at once"
    elif "long-context" in lower:
        what = " for long context"
    default = ", its default" if "(default)" in line else ""
    says = f"upstream's pick{what} among the {scope} configurations{default}"
    statement = Statement(named[:1], "pick", says, *where, rig=rig)
    if (m := _STREAMS.search(line)) is not None:
        statement.says += (f"; throughput holds to {m['flat']} streams where the dense 27B "
                           f"falls off at {m['knee']}")  # fmt: skip
    return statement


def _pick_use(word: str) -> str:
    return {"multi-agent": "several agents served at once",
            "long-context": "long context on one card"}.get(word, f"{word} work")  # fmt: skip


def _tie(
    m: re.Match[str], section: list[str], where: tuple[str, int], rig: str | None
) -> list[Statement]:
    """`Fast and max are a tie on quality ... 109/150 vs 110/150`: each tier's score."""
    tiers = [(m["a"].lower(), m["x"], m["b"].lower(), m["y"]),
             (m["b"].lower(), m["y"], m["a"].lower(), m["x"])]  # fmt: skip
    out = []
    for tier, mine, other, theirs in tiers:
        keys = [k for k in section if k.endswith(f"-{tier}")]
        says = (f"as good as the {other} tier: {mine} vs {theirs} of {m['n']} on the 8-pack, "
                "within noise; compare speeds only within one session")  # fmt: skip
        if keys:
            out.append(Statement(keys, "quality", says, *where, rig=rig))
    return out


def _exposure(line: str, where: tuple[str, int]) -> Statement | None:
    if not _EXPOSED.search(line) or (issue := ISSUE.search(line)) is None:
        return None
    statement = Statement([], "exposure", "", *where)
    statement.extra["issue"] = f"{issue['project']}#{issue['number']}"
    if (m := _MITIGATE.search(line)) is not None:
        statement.extra["mitigation"] = m["how"]
    return statement


def _scope(line: str, statement: Statement, reading: Reading) -> None:
    if (m := _ALL_OF.search(line)) is not None:
        reading.scoped.append((m["model"], "", statement))
    elif (m := _BOTH_MULTI.search(line)) is not None:
        reading.scoped.append((m["model"], "multi", statement))


def _named(line: str, keys: set[str]) -> list[str]:
    """Entry keys a line names in backticks, in order (a bare name takes the engine prefix of
    the key before it: `vllm/dual` ≡ `qwen-27b-dual-fast`)."""
    out: list[str] = []
    for m in _SLUG.finditer(line):
        slug = m["slug"]
        if "/" not in slug and out:
            slug = f"{out[-1].split('/')[0]}/{slug}"
        if slug in keys and slug not in out:
            out.append(slug)
    return out


def _aliases(lines: list[str], keys: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        for m in _ALIAS.finditer(line):
            a = m["a"]
            b = m["b"] if "/" in m["b"] else f"{a.split('/')[0]}/{m['b']}"
            if a in keys and b in keys:
                out[a], out[b] = b, a
    return out
