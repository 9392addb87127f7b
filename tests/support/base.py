"""The small base registry (tests/registry/base) made self-consistent in a scratch folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli import invoke_in

BASE = Path(__file__).resolve().parents[1] / "registry" / "base"


def build_base(dest: Path) -> Path:
    """A copy of the base with fresh schema/, lock (offline) and compose/ and docs/."""
    shutil.copytree(BASE, dest)
    for args in (("schema",), ("lock", "--offline"), ("render", "--all")):
        run = invoke_in(dest, *args)
        assert run.code == 0, run.text
    return dest
