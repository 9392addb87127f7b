"""`fit --from-log` on the real engines' own boot logs (this build's line formats, -lv 4): the
tiny model's buffers, predicted from its registry facts, against what llama-server logged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from profilegen.fit.logs import parse_log
from tests.support.cli import invoke_in
from tests.support.realengines import TINY_PROFILE

MIB = 1 << 20


@pytest.mark.parametrize("name", ["alias-key", "path"])
def test_fit_predicts_the_tiny_model_s_buffers(real_engines: dict[str, Any], name: str) -> None:
    engine = real_engines["engines"][name]
    log = Path(engine["log"])
    facts = parse_log(log.read_text(errors="replace"))
    assert facts.version == f"b{real_engines['server']['source_build']}"
    assert facts.buffers == {}  # a CPU build: every buffer is the host's
    run = invoke_in(
        Path(real_engines["root"]), "fit", "--from-log", str(log), "--profile", TINY_PROFILE,
        "--format", "json",
    )  # fmt: skip
    assert run.code == 0, run.text
    terms = {t["name"]: t for t in json.loads(run.out)["terms"]}
    assert set(terms) == {"model buffers (host)", "KV buffers", "compute buffers", "buffers in all"}
    # The weights and the cache are arithmetic: exact to the log's 0.01 MiB.
    for term in ("model buffers (host)", "KV buffers"):
        assert abs(terms[term]["predicted"] - terms[term]["measured"]) <= 0.01 * MIB, terms[term]
    assert abs(terms["compute buffers"]["error"]) <= 0.10, terms["compute buffers"]
    # The log's settings, not the profile's, were fitted: its context and cache types.
    assert terms["KV buffers"]["measured"] == facts.host_buffers["KV"]
