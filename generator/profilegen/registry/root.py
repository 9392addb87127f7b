"""Where the registry is: --root, PROFILEGEN_ROOT, or the nearest folder holding registry/.

Light on purpose (no data model): commands that answer from the cache start here.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError


def find_root(start: Path | None = None, explicit: str | None = None) -> Path:
    """The registry root: --root, else PROFILEGEN_ROOT, else the nearest parent with registry/."""
    given = explicit or os.environ.get("PROFILEGEN_ROOT")
    if given:
        root = Path(given).expanduser().resolve()
        if not (root / "registry").is_dir():
            raise UsageError(f"{root} has no registry/ folder")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "registry").is_dir():
            return candidate
    raise UsageError(f"no registry/ folder in {here} or any parent (use --root or PROFILEGEN_ROOT)")
