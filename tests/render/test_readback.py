"""What render reads its own YAML back with (`parse_yaml`): the data ruamel's safe loader
reads from the same text, for every generated compose and gateway file, and a located
refusal for a document past the reader's limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from profilegen.render.context import RenderError
from profilegen.render.verify import parse_yaml, verify_compose
from tests.support.repo import REPO

GENERATED = sorted(
    [*REPO.glob("compose/*/compose.yaml"), *REPO.glob("gateways/*/*.yaml")],
    key=lambda p: p.relative_to(REPO).as_posix(),
)


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.relative_to(REPO).as_posix())
def test_read_back_as_the_safe_loader_reads_it(path: Path) -> None:
    text = path.read_text()
    assert parse_yaml(text) == YAML(typ="safe").load(text)


def test_the_generated_files_are_all_read() -> None:
    assert len(GENERATED) > 100


def test_a_compose_past_the_limits_is_a_render_error() -> None:
    deep = "name: x\nservices:\n  s: " + "[" * 100 + "]" * 100 + "\n"
    with pytest.raises(RenderError) as caught:
        verify_compose("p", deep.encode(), {})
    assert str(caught.value).startswith("p: rendered compose is not valid YAML: ")
