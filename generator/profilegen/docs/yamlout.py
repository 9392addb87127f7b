"""Plain YAML output of data for `show` (block style, keys in insertion order)."""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML


def dump_yaml(data: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    # Keep the order the data was built in (id first), not alphabetical.
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
