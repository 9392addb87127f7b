"""Registry documents as YAML text: the one way profilegen writes YAML of its own data.

A round-trip document (a file `new`, `model add` or `fit --record` edits) keeps its comments,
key order and quoting; plain data (`show --format yaml`) is written in block style in the order
it was built. Both write one value per line however long, and a missing value as `~`, as the
registry's own files do.
"""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.representer import BaseRepresenter


def _null(representer: BaseRepresenter, _value: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "~")


def round_trip() -> YAML:
    """The reader and writer of a registry file that is edited, not regenerated."""
    yaml = YAML(typ="rt")
    yaml.width = 4096  # one value per line, as the hand-written files have them
    yaml.preserve_quotes = True
    # The registry's layout: a sequence item's dash two spaces in under its key.
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(type(None), _null)
    return yaml


def load_document(text: str) -> Any:
    """A registry file as a round-trip document (comments and layout kept)."""
    return round_trip().load(text)


def dump_document(doc: CommentedMap) -> str:
    """A round-trip document as the text of its file."""
    out = io.StringIO()
    round_trip().dump(doc, out)
    return out.getvalue()


def dump_plain(data: Any) -> str:
    """Plain data (dicts, lists, scalars) in block style, keys in the order they were built."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    yaml.representer.add_representer(type(None), _null)
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
