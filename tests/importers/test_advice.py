"""What an imported profile is best for and which engine bugs it runs into, read from a small
upstream-shaped catalogue written for these tests, each with the file and line it came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from .fixtures import REGISTRY, VLLM_COMPOSE, base_files, commit
from .test_club3090 import run, snapshot

# Lines counted from 1: the statements sit at the lines the assertions name.
DUAL_PAGE = """\
# Two cards, for these tests

### Tiny 9B

| Slug | Context |
|---|--:|
| `vllm/tiny-dual-fast` ⭐ | 65536 |

All tiny-9b slugs are exposed to open [vllm#50021](https://example.invalid/50021) (a crash \
class). Mitigate with `SPEC=off`.

`vllm/tiny-dual-fast` suits editors: **Strongly recommended for IDE coding agents** here.
"""
WITH_WORKLOADS = REGISTRY.replace(
    "    engine: vllm-stable\n", "    engine: vllm-stable\n    workload: long-ctx-single\n"
).replace("    engine: llama-cpp-local\n", "    engine: llama-cpp-local\n    workload: fast-chat\n")
HEADER = "# MTP is exposed to OPEN vllm#50021 in this pin; turn the drafter off to avoid it.\n"
COMPOSE = "models/tiny-9b/vllm/compose/dual/int4/mtp.yml"
LLAMA = "models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml"
EFFECT = (
    "workers can die under sustained multi-turn traffic (an out-of-bounds write in the GDN "
    "speculative-decoding path)"
)


def _catalogue(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    tree = base_files()
    tree["scripts/lib/profiles/registry.yaml"] = WITH_WORKLOADS
    tree.update(files)
    repo = tmp_path / "club-3090"
    return repo, commit(repo, tree, "catalogue")


def _profile(root: Path, ident: str) -> dict[str, Any]:
    data = YAML(typ="safe").load((root / "registry/profiles" / f"{ident}.yaml").read_text())
    assert isinstance(data, dict)
    return data


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_page_gives_the_use_the_pick_and_a_model_wide_exposure_with_its_line(
    tmp_path: Path, target: Path
) -> None:
    repo, rev = _catalogue(tmp_path, {"docs/DUAL_CARD.md": DUAL_PAGE})
    result = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert result.code == 0, result.text
    page = {"file": "docs/DUAL_CARD.md", "rev": rev[:8]}
    fast = _profile(target, "tiny-dual-fast")
    assert fast["best_for"] == "IDE coding agents"
    assert fast["best_for_source"] == {**page, "line": _line(DUAL_PAGE, "Strongly")}
    assert fast["exposures"] == [
        {"issue": "vllm#50021", "effect": EFFECT, "mitigation": "SPEC=off: serve without the "
         "drafter", "source": {**page, "line": _line(DUAL_PAGE, "All tiny-9b")}}
    ]  # fmt: skip
    assert "exposures_source" not in fast
    assert fast["recommendations"] == [
        {"kind": "pick", "says": "upstream's pick among the two-card configurations",
         "rig": "2x3090", "source": {**page, "line": _line(DUAL_PAGE, "⭐")}},
        {"kind": "pick", "says": "recommended for IDE coding agents", "rig": "2x3090",
         "source": {**page, "line": _line(DUAL_PAGE, "Strongly")}},
    ]  # fmt: skip
    # The llama.cpp profile of the same model: upstream says every slug of it is exposed; it
    # has no drafter to switch off, so no mitigation is claimed. Its use is its workload's.
    single = _profile(target, "tiny-single-q4")
    assert [(e["issue"], "mitigation" in e) for e in single["exposures"]] == [("vllm#50021", False)]
    assert single["best_for"] == "short-context chat where decode speed matters most"
    assert single["best_for_source"] == {
        "file": "scripts/lib/profiles/registry.yaml",
        "line": _line(WITH_WORKLOADS, "workload: fast-chat"),
        "rev": rev[:8],
    }
    strongly = _line(DUAL_PAGE, "Strongly")
    assert (
        f'best_for_source: {{file: "docs/DUAL_CARD.md", line: {strongly}, rev: '
        in (target / "registry/profiles/tiny-dual-fast.yaml").read_text()
    )  # a source is written on one line


def test_a_compose_header_states_an_exposure_and_one_without_says_none_are_known(
    tmp_path: Path, target: Path
) -> None:
    compose = HEADER + VLLM_COMPOSE
    repo, rev = _catalogue(tmp_path, {COMPOSE: compose})
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    fast = _profile(target, "tiny-dual-fast")
    assert fast["exposures"][0]["source"] == {"file": COMPOSE, "line": 1, "rev": rev[:8]}
    assert fast["exposures"][0]["mitigation"] == "SPEC=off: serve without the drafter"
    assert fast["best_for_source"]["line"] == _line(WITH_WORKLOADS, "long-ctx-single")
    single = _profile(target, "tiny-single-q4")
    assert single["exposures"] == []
    assert single["exposures_source"] == {"file": LLAMA, "rev": rev[:8]}


def test_a_reimport_keeps_a_maintainers_words_and_changes_nothing_the_second_time(
    tmp_path: Path, target: Path
) -> None:
    repo, rev = _catalogue(tmp_path, {"docs/DUAL_CARD.md": DUAL_PAGE})
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    path = target / "registry/profiles/tiny-dual-fast.yaml"
    text = path.read_text()
    ours = (
        '  - issue: "vllm#49999"\n    effect: "slow first request"\n'
        '    source: {file: "docs/NOTES.md", line: 3}\n'
    )
    text = text.replace('best_for: "IDE coding agents"', 'best_for: "editor agents, one user"')
    text = text.replace("exposures:\n", "exposures:\n" + ours, 1)
    path.write_text(text)
    again = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert again.code == 0, again.text
    fast = _profile(target, "tiny-dual-fast")
    assert fast["best_for"] == "editor agents, one user"
    assert [e["issue"] for e in fast["exposures"]] == ["vllm#50021", "vllm#49999"]
    before = snapshot(target)
    third = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert third.code == 0 and "0 files changed" in third.out
    assert snapshot(target) == before


@pytest.mark.parametrize("drop", ["best_for", "exposures"])
def test_check_warns_on_a_live_profile_that_does_not_say_it(
    tmp_path: Path, target: Path, drop: str
) -> None:
    repo, rev = _catalogue(tmp_path, {"docs/DUAL_CARD.md": DUAL_PAGE})
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    path = target / "registry/profiles/tiny-dual-fast.yaml"
    data = YAML()
    doc = data.load(path.read_text())
    doc.pop(drop)
    doc.pop(f"{drop}_source", None)
    with path.open("w") as out:
        data.dump(doc, out)
    check = run(target, "check", "--verbose")
    line = _line(path.read_text(), "id: tiny-dual-fast")
    said = {
        "best_for": "tiny-dual-fast does not say what it is best for",
        "exposures": "tiny-dual-fast does not state its known exposures (engine bugs it runs into)",
    }[drop]
    assert f"tiny-dual-fast.yaml:{line}: warning: [advice] {said}" in check.out, check.text


@pytest.mark.parametrize(
    "use", ["x" * 81, "agents\x07 that ring", "agents\x1b[31m in red"], ids=["long", "bel", "ansi"]
)
def test_a_use_that_is_no_short_plain_phrase_is_not_taken(
    tmp_path: Path, target: Path, use: str
) -> None:
    page = DUAL_PAGE.replace("IDE coding agents", use)
    repo, rev = _catalogue(tmp_path, {"docs/DUAL_CARD.md": page})
    result = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert result.code == 0, result.text
    fast = _profile(target, "tiny-dual-fast")
    assert fast["best_for"] == "one user or agent at long context, accuracy before throughput"
    assert all("recommended for" not in r["says"] for r in fast["recommendations"])
