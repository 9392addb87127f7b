"""`show` prints registry text: a URL's credentials in it are hidden in every format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import Invoke

DUAL_FAST = "registry/profiles/qwen38-27b-dual-fast.yaml"
SOURCE = 'source: "club-3090 BENCHMARKS.md@4a29ab57 line 358"'


@pytest.mark.parametrize("fmt", ["text", "yaml", "json"])
def test_show_hides_the_credentials_of_an_evidence_source(
    repo: Path, invoke: Invoke, fmt: str
) -> None:
    path = repo / DUAL_FAST
    text = path.read_text()
    assert SOURCE in text
    planted = 'source: "bench http://bob:hunter2@10.0.0.7:8000/v1?api_key=k9&x=1"'
    path.unlink()  # the scratch copy shares unchanged files with the pristine one
    path.write_text(text.replace(SOURCE, planted))
    run = invoke("show", "qwen38-27b-dual-fast", "--format", fmt)
    assert run.code == 0, run.text
    assert "hunter2" not in run.out and "k9" not in run.out
    if fmt != "text":
        assert "http://***@10.0.0.7:8000/v1?api_key=***&x=1" in run.out
