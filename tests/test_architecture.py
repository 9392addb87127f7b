"""The package layout holds: each subpackage imports only what its docstring allows, no circles."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "generator" / "profilegen"
# Top-level modules everything may use; they import nothing of profilegen themselves.
FOUNDATION = {"errors", "resources", "units", "write"}
ENTRY = {"cli", "__main__"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module's syntax tree (read once: several tests walk every module)."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """Absolute profilegen modules a file imports, wherever the import statement sits."""
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in _nodes(path):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "profilegen"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "profilegen":
                continue
            found.add(target)
            # `from . import x` may name a submodule.
            found |= {f"{target}.{a.name}" for a in node.names}
    return frozenset(found)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _allowed(subpackage: str) -> set[str]:
    doc = ast.get_docstring(ast.parse((PACKAGE / subpackage / "__init__.py").read_text())) or ""
    match = re.search(r"May import:(.*?)(?:\n\n|\Z)", doc, re.S)
    assert match, f"profilegen/{subpackage}/__init__.py: the docstring must say 'May import:'"
    return set(re.findall(r"`([\w*]+)`", match.group(1)))


def _subpackages() -> list[str]:
    return sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))


@pytest.mark.parametrize("subpackage", _subpackages())
def test_subpackage_imports_only_what_its_docstring_allows(subpackage: str) -> None:
    allowed = _allowed(subpackage)
    modules = _modules()
    wrong = []
    for name, path in sorted(modules.items()):
        if _top(name) != subpackage:
            continue
        for target in sorted(_imports(path)):
            top = _top(target)
            if target not in modules and target.rsplit(".", 1)[0] in modules:
                top = _top(target.rsplit(".", 1)[0])  # `from pkg import name` of a non-module
            if top in ("", subpackage) or top in allowed or ("*" in allowed and top not in ENTRY):
                continue
            wrong.append(f"{path.relative_to(PACKAGE.parent)} imports {target}")
    assert not wrong, f"{subpackage} may import only {sorted(allowed)}:\n" + "\n".join(wrong)


def test_foundation_modules_import_nothing_of_profilegen() -> None:
    for name in FOUNDATION:
        assert _imports(PACKAGE / f"{name}.py") == set(), name


def test_every_module_belongs_to_a_subpackage_or_the_foundation() -> None:
    loose = {p.stem for p in PACKAGE.glob("*.py")} - FOUNDATION - ENTRY - {"__init__"}
    assert not loose, f"modules outside any stage: {sorted(loose)}"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, if any (depth-first search with colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circles_between_modules() -> None:
    modules = _modules()
    graph = {
        name: {t if t in modules else t.rsplit(".", 1)[0] for t in _imports(path)} - {name}
        for name, path in modules.items()
    }
    graph = {k: {t for t in v if t in modules} for k, v in graph.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_no_import_circles_between_subpackages() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph.setdefault(_top(name), set()).update(
            _top(t) for t in _imports(path) if _top(t) != _top(name)
        )
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _kind_literals(node: ast.AST) -> list[str]:
    """Engine-kind strings a comparison names (`kind == "vllm"`, `kind in ("vllm", …)`)."""
    from profilegen.families import kinds

    found = []
    for part in [node.left, *node.comparators] if isinstance(node, ast.Compare) else []:
        items = part.elts if isinstance(part, ast.Tuple | ast.List | ast.Set) else [part]
        found += [i.value for i in items if isinstance(i, ast.Constant) and i.value in kinds()]
    return found


def test_engine_kinds_are_compared_only_in_their_families() -> None:
    """A stage asks the family (`family(kind).single_process`, `.fit`, …) what to do; only
    families/ knows which kind is which."""
    wrong = []
    for name, path in sorted(_modules().items()):
        if _top(name) == "families":
            continue
        for node in _nodes(path):
            for kind in _kind_literals(node):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} compares {kind!r}")
    assert not wrong, "\n".join(wrong)


# Libraries that reach the network, and the one module beside hub/ that does: it shells out
# to `pip download` / `pip install` for engine releases (a maintainer's command and CI's
# rehearsal).
NETWORK_MODULES = (
    "urllib.request",
    "http.client",
    "socket",
    "requests",
    "httpx",
    "huggingface_hub",
)
RELEASES = "profilegen.facts.releases"


def _reaches_network(path: Path) -> list[str]:
    found = []
    for node in _nodes(path):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(NETWORK_MODULES)]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if (node.module or "").startswith(NETWORK_MODULES):
                found.append(node.module or "")
        elif isinstance(node, ast.Constant) and node.value == "pip":
            found.append("pip")
    return found


def test_only_hub_and_the_releases_module_reach_the_network() -> None:
    wrong = []
    for name, path in sorted(_modules().items()):
        if _top(name) == "hub" or name == RELEASES or ".probes." in name:
            continue
        wrong += [f"{name}: {what}" for what in _reaches_network(path)]
    assert not wrong, "\n".join(wrong)
    assert _reaches_network(PACKAGE / "facts" / "releases.py") == ["pip"]
