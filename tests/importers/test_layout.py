"""A re-import keeps how a maintainer laid out a file: comments, and one-line mappings."""

from __future__ import annotations

from pathlib import Path

from profilegen.importers.emit import document
from profilegen.importers.layout import carry_comments, styles

from .test_club3090 import run, upstream  # noqa: F401 (fixtures)

OLD = """\
# yaml-language-server: $schema=../../schema/model.schema.json
# Imported header: not carried.
id: tiny
architecture:
  # Read from config.json text_config.
  num_layers: 32
  moe: {experts: 8, per_token: 2}
artifacts:
  int4:
    # Measured on download.
    size: {value: 5, unit: GiB}
evidence:
  # The first boot.
  - key: boot-1
    measured: {tokens: 10}
# A note on a key that is gone.
retired_key: 1
"""


def test_comments_go_back_before_their_keys() -> None:
    data = {
        "id": "tiny",
        "architecture": {"num_layers": 32, "moe": {"experts": 8, "per_token": 2}},
        "artifacts": {"int4": {"size": {"value": 5, "unit": "GiB"}}},
        "evidence": [{"key": "boot-1", "measured": {"tokens": 10}}],
    }
    carried = carry_comments(OLD, document("models", data, ["New header."], styles(OLD)))
    assert carried.text == (
        "# yaml-language-server: $schema=../../schema/model.schema.json\n"
        "# New header.\n"
        + OLD[OLD.index("id: tiny") : OLD.index("# A note on a key that is gone.")]
    )
    assert carried.dropped == ("retired_key",)


def test_a_comment_on_a_key_now_inside_a_one_line_mapping_goes_before_that_mapping() -> None:
    old = "shape:\n  # Shared with the target.\n  kv_layers: 0\n  heads: 1\n"
    new = "# header\nshape: {kv_layers: 0, heads: 1}\n"
    assert carry_comments(old, new).text == (
        "# header\n# Shared with the target.\nshape: {kv_layers: 0, heads: 1}\n"
    )


def test_the_text_of_a_block_scalar_is_neither_a_comment_nor_a_key() -> None:
    old = (
        "# header\nnotes: >-\n  # not a comment\n  looks: like a key\n# Why the port.\nport: 8000\n"
    )
    new = '# header\nnotes: "# not a comment looks: like a key"\nport: 8000\n'
    carried = carry_comments(old, new)
    assert carried.text == new.replace("port:", "# Why the port.\nport:")
    assert carried.dropped == ()
    assert styles(old) == {}


def test_a_value_keeps_the_style_the_old_file_gave_it() -> None:
    wide = {f"field_number_{i}": i for i in range(8)}
    data = {"id": "x", "shape": wide, "architecture": {"moe": wide}, "short": {"a": 1}}
    plain = document("models", data, [])
    assert "shape:\n  field_number_0: 0" in plain and "\nshort: {a: 1}" not in plain
    assert "\n  moe:\n    field_number_0: 0" in plain
    kept = {("shape",): "flow", ("architecture", "moe"): "flow", ("short",): "block"}
    laid = document("models", data, [], kept)
    assert "\nshape: {field_number_0: 0," in laid and "\n  moe: {field_number_0: 0," in laid
    assert "\nshort:\n  a: 1" in laid
    assert {k: v for k, v in styles(laid).items() if k in kept} == kept


def test_a_reimport_keeps_comments_and_one_line_mappings(
    upstream: tuple[Path, str],  # noqa: F811
    target: Path,  # noqa: F811
) -> None:
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    path = target / "registry/models/tiny-9b.yaml"
    text = path.read_text()
    edited = text.replace("artifacts:\n", "# Two quantizations.\nartifacts:\n", 1)
    edited = edited.replace("served_name:", "# Served as its id.\nserved_name:", 1)
    path.write_text(edited)
    again = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert again.code == 0 and "0 files changed" in again.out
    assert path.read_text() == edited
