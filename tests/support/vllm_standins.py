"""Stand-ins for a profile's remote patch files, made against the real installed vLLM source.

A remote patch's files are pinned upstream files fetched over the network; the tests reach no
network and the project copies no upstream file. So in the tests' scratch registry such a
patch keeps its id, mount folder and steps (method, target, marker, interpreter) and gets
files of the tests' own, vendored, that do something real to the installed package at the
same place the real ones would:

- a diff step's file is a unified diff adding one comment line, holding the step's marker,
  to the step's target in the real installed source (a new file where the release has none),
  so the entrypoint's `patch --dry-run`, `patch` and marker check all run on the real tree;
- a script step's file is a bash script that appends one comment line, holding the step's
  marker if it has one, to its target (else to `vllm/__init__.py`) under
  `PROFILEGEN_PACKAGE_DIR`, as the entrypoint hands it.

Every line a stand-in writes starts with `STANDIN`, so a test can find them in the booted
package.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tests.support.vllm_cpu import Substitution, patch_substitution

STANDIN = "# profilegen stand-in"
SCRIPT_TARGET = "__init__.py"


def _line(patch_id: str, name: str, marker: str | None) -> str:
    return f"{STANDIN} for {patch_id}/{name}" + (f": {marker}" if marker else "")


def _diff(package: Path, target: str, line: str) -> str:
    path = package / target
    if not path.is_file():
        return f"--- /dev/null\n+++ b/{target}\n@@ -0,0 +1 @@\n+{line}\n"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if not lines or not lines[-1].endswith("\n"):
        raise AssertionError(f"{path}: a stand-in diff needs a file that ends in a newline")
    n = len(lines)
    return f"--- a/{target}\n+++ b/{target}\n@@ -{n},1 +{n},2 @@\n {lines[-1]}+{line}\n"


def _script(line: str, target: str) -> str:
    return (
        "#!/bin/bash\n"
        "# A stand-in of the tests' own: notes itself in the installed vLLM package.\n"
        "set -euo pipefail\n"
        f"printf '%s\\n' {_quote(line)} >>\"${{PROFILEGEN_PACKAGE_DIR:?}}/{target}\"\n"
    )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def standin_files(patch: Any, package: Path) -> dict[str, str]:
    """The stand-in files of `patch` (by path in its folder) for the installed `package`."""
    files: dict[str, str] = {}
    for step in patch.steps:
        line = _line(patch.id, step.file, step.marker)
        if step.method == "diff":
            files[step.file] = _diff(package, step.target, line)
        elif step.method == "script":
            files[step.file] = _script(line, step.target or SCRIPT_TARGET)
        else:
            raise AssertionError(f"{patch.id}: no stand-in for a {step.method} step")
    return files


def _source_block(files: dict[str, str]) -> str:
    lines = ["source:", "  kind: vendored", "  files:"]
    for name, text in files.items():
        data = text.encode()
        digest = hashlib.sha256(data).hexdigest()
        lines.append(f"    - {{path: {name}, size: {len(data)}, sha256: {digest}}}")
    return "\n".join(lines) + "\n"


def replace_remote(root: Path, patch: Any, package: Path) -> Substitution:
    """Rewrites the scratch registry's `patch` to vendored stand-ins; what was substituted."""
    files = standin_files(patch, package)
    folder = root / "registry" / "patches" / "files" / patch.id
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    path = root / "registry" / "patches" / f"{patch.id}.yaml"
    kept, skipping = [], False
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("source:"):
            skipping = True
            kept.append(_source_block(files))
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    path.write_text("".join(kept), encoding="utf-8")
    how = "; ".join(
        f"{s.file}: {'a diff adding' if s.method == 'diff' else 'a script appending'} one "
        f"comment line to {s.target or SCRIPT_TARGET}"
        for s in patch.steps
    )
    return patch_substitution(patch.id, [f.path for f in patch.source.files], how)
