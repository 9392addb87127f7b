"""BENCHMARKS.md rows imported as evidence, on a small upstream-shaped catalogue."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.support.cli import Run, invoke_in

from .fixtures import LLAMA_COMPOSE, VLLM_COMPOSE, base_files, commit, empty_registry

REAL = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"

BENCHMARKS = """\
# Benchmarks

## Canonical bench

Three warmups, five measured runs.

## Tiny 9B

### Dual-card (2× RTX 3090, TP=2) — vLLM

| Compose | Rig | KV | Max ctx | Narr / Code TPS | PP tok/s | Peak VRAM | Date | Notes |
| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |
| `dual/int4/mtp.yml` ⭐ | @alice (2× 3090 PCIe x8/x8, no NVLink, 280 W cap, Ryzen 9 5950X) | fp8 | 65536 | **71.5 / 93.2** (decode) | 1446 @10K / 1118 @90K | 22.5 GB/card | 2026-07-27 | First row — measured. Soak: ✓ PASS |
| `vllm/tiny-dual-fast` (`MAX_NUM_SEQS=1`) | @bob (2× 3090 NVLink, 230W cap) | fp8 | 65536 | 80 / 101 | — | ~23.0 GB | 2026-07-28 | A second rig. |
| `dual-turbo.yml` | @alice (2× 3090 PCIe) | TQ3 | 65536 | 60 / 70 | — | — | 2026-05-01 | Archived since. |
| `dual.yml`-shape forced TP=1 | @carol (1× RTX 5090) | fp8 | 32K | 120 / 150 | — | — | 2026-05-07 | By hand. |
| `vllm/tiny-dual-fast` | @dave (2× Tesla V100-SXM2-16GB) | fp8 | 65536 | 40 / 50 | — | — | 2026-05-08 | A GPU we lack. |

> A note between rows.

| `vllm/tiny-dual-fast` | @erin (2× 3090 PCIe) | fp8 | 65536 | TBD | — | — | — | Not yet. |

### Single-card (1× RTX 3090) — llama.cpp

| Compose | Rig | Quant | Max ctx | Narr / Code TPS | PP tok/s | Peak VRAM | Date | Notes |
| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |
| `llamacpp/tiny-single-q4` | @alice (1× 3090, 350 W) | Q4 | 32K | 21 / 22 | — | ~20 GB | 2026-04-21 | Single card. |

| Language | A | B |
| --- | --- | --- |
| Go | 4/5 | 3/5 |
"""


def files(benchmarks: str = BENCHMARKS) -> dict[str, str]:
    out = base_files()
    out["models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml"] = LLAMA_COMPOSE
    out["models/tiny-9b/vllm/compose/_archive/dual/int4/turbo.yml"] = VLLM_COMPOSE
    out["BENCHMARKS.md"] = benchmarks
    return out


@dataclass(frozen=True)
class Imported:
    repo: Path
    rev: str
    root: Path  # the registry the catalogue was imported into (copy it before changing it)
    result: Run


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """The catalogue imported once into an empty registry (the GPU the rigs need, schemas)."""
    tmp = tmp_path_factory.mktemp("benchmarks")
    repo = tmp / "club-3090"
    rev = commit(repo, files(), "catalogue")
    root = empty_registry(tmp / "ours")
    return Imported(repo, rev, root, run(root, "import", "club3090", str(repo), "--rev", rev))


@pytest.fixture
def target(imported: Imported, tmp_path: Path) -> Path:
    """A copy of the imported registry to change."""
    return Path(shutil.copytree(imported.root, tmp_path / "ours"))


def run(root: Path, *args: str) -> Run:
    return invoke_in(root, *args)


def evidence(root: Path, profile: str) -> list[dict[str, Any]]:
    """The records as the import wrote them in the profile's file."""
    data = YAML(typ="safe").load((root / "registry/profiles" / f"{profile}.yaml").read_text())
    records: list[dict[str, Any]] = data.get("evidence", [])
    return records


def test_rows_land_on_the_profiles_they_measured(imported: Imported) -> None:
    rev, target, result = imported.rev, imported.root, imported.result
    assert result.code == 0, result.text
    assert "3 benchmark rows as evidence on 2 profiles" in result.out
    first, second = evidence(target, "tiny-dual-fast")
    line = (
        BENCHMARKS.splitlines().index(next(x for x in BENCHMARKS.splitlines() if "@alice (2×" in x))
        + 1
    )
    assert first == {
        "date": "2026-07-27",
        "rig": "2x3090-pcie",
        "method": "bench",
        "contributor": "@alice",
        "hardware": {
            "cards": 2,
            "gpu": "RTX 3090",
            "link": "PCIe x8/x8",
            "nvlink": False,
            "power_cap_w": [280],
            "host": "Ryzen 9 5950X",
        },
        "source": f"club-3090 BENCHMARKS.md@{rev[:8]} line {line}",
        "origin": {"file": "BENCHMARKS.md", "rev": rev[:8], "line": line},
        "summary": "dual/int4/mtp.yml: First row - measured.",
        "measured": {
            "decode_tps_narrative": 71.5,
            "decode_tps_code": 93.2,
            "prefill": [
                {"context_tokens": 10000, "tokens_per_s": 1446},
                {"context_tokens": 90000, "tokens_per_s": 1118},
            ],
            "peak_vram_mib": 46080,
            "soak": "pass",
        },
    }
    assert second["contributor"] == "@bob" and second["hardware"]["nvlink"] is True
    assert second["settings"] == {"max_num_seqs": 1}
    assert second["measured"]["peak_vram_mib"] == round(23.0 * 1024 * 2)  # per card, 2 cards
    (single,) = evidence(target, "tiny-single-q4")
    assert (single["rig"], single["measured"]["decode_tps_narrative"]) == ("1x3090", 21)
    shown = json.loads(run(target, "show", "tiny-dual-fast", "--format", "json").out)
    assert shown["evidence"][0]["hardware"]["power_cap_w"] == [280]
    assert shown["evidence"][0]["origin"]["line"] == line


def test_rows_that_cannot_land_are_listed_with_why(imported: Imported) -> None:
    result = imported.result
    lines = {
        x.split(": ", 2)[1]: x.split(": ", 2)[2]
        for x in result.err.splitlines()
        if x.startswith("unmapped:")
    }
    at = {x: i + 1 for i, x in enumerate(BENCHMARKS.splitlines())}
    row = {key: next(n for text, n in at.items() if key in text) for key in (
        "`dual-turbo.yml`", "-shape", "@dave", "@erin", "| Language")}  # fmt: skip
    assert lines[f"BENCHMARKS.md:{row['`dual-turbo.yml`']}"] == (
        "`dual-turbo.yml` is models/tiny-9b/vllm/compose/_archive/dual/int4/turbo.yml, "
        "archived upstream: no profile"
    )
    assert lines[f"BENCHMARKS.md:{row['-shape']}"] == (
        "a server built by hand after a compose, not the compose"
    )
    assert lines[f"BENCHMARKS.md:{row['@dave']}"] == (
        "vllm/tiny-dual-fast: measured on V100 the registry has no GPU entry for"
    )
    assert lines[f"BENCHMARKS.md:{row['@erin']}"] == "vllm/tiny-dual-fast: no date"
    table = f"BENCHMARKS.md:{row['| Language']}-{row['| Language'] + 2}"
    assert lines[table] == "1 rows of a table of another shape (Language | A | B), not evidence"


def test_a_reimport_keeps_curated_records_and_replaces_imported_ones(
    imported: Imported, target: Path, tmp_path: Path
) -> None:
    rev = imported.rev
    repo = Path(shutil.copytree(imported.repo, tmp_path / "club-3090"))
    path = target / "registry/profiles/tiny-dual-fast.yaml"
    text = path.read_text()
    assert "\nevidence:\n" in text
    own = (
        '  - date: "2026-08-01"\n    rig: "2x3090-pcie"\n    source: "my own boot"\n'
        "    measured: {kv_pool_tokens: 123456}\n"
    )
    path.write_text(text.replace("\nevidence:\n", "\nevidence:\n" + own))
    again = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert again.code == 0 and "0 files changed" in again.out, again.text
    records = evidence(target, "tiny-dual-fast")
    assert [r["source"] for r in records][0] == "my own boot"
    assert len(records) == 3

    # The next revision drops the second rig's row: its record goes, the curated one stays.
    newer = BENCHMARKS.replace(next(x for x in BENCHMARKS.splitlines() if "@bob" in x) + "\n", "")
    rev2 = commit(repo, {"BENCHMARKS.md": newer}, "drop a row")
    assert run(target, "import", "club3090", str(repo), "--rev", rev2).code == 0
    records = evidence(target, "tiny-dual-fast")
    assert [r.get("contributor") for r in records] == [None, "@alice"]
    assert records[1]["origin"]["rev"] == rev2[:8]


def test_the_benchmark_page_charts_every_measured_row(target: Path) -> None:
    assert run(target, "render", "--all").code == 0
    page = (target / "docs/benchmarks/tiny-9b.md").read_text()
    assert "![Decode tok/s by profile and context, one series per rig](tiny-9b.svg)" in page
    assert (
        "| `tiny-dual-fast` | 2026-07-27 | @alice | 2x RTX 3090, PCIe x8/x8, 280 W, Ryzen 9 5950X |"
        in page
    )
    root = ET.parse(target / "docs/benchmarks/tiny-9b.svg").getroot()
    drawn = {
        (r.get("data-profile"), r.get("data-rig"), r.get("data-kind")): r
        for r in root.iter(f"{SVG}rect")
        if r.get("data-profile")
    }
    expected = {}
    for profile in ("tiny-dual-fast", "tiny-single-q4"):
        for ev in evidence(target, profile):
            m = ev["measured"]
            expected[(profile, ev["rig"], "narrative")] = m["decode_tps_narrative"]
            expected[(profile, ev["rig"], "code")] = m["decode_tps_code"]
    assert {k: float(r.get("data-value", "0")) for k, r in drawn.items()} == expected
    # One scale for every bar: its length is its value times the same factor.
    scale = {
        round(float(r.get("width", "0")) / float(r.get("data-value", "1")), 3)
        for r in drawn.values()
    }
    assert len(scale) == 1


def test_a_reimport_replaces_imported_records_where_they_stand() -> None:
    from profilegen.importers.club3090.run import _replaced_imports

    def row(n: int) -> dict[str, Any]:
        return {"source": f"row {n}", "origin": {"file": "BENCHMARKS.md", "line": n}}

    mine, later = {"source": "my own boot"}, {"source": "a GPU boot recorded after the import"}
    # Records a maintainer added after an import stay after the imported rows.
    assert _replaced_imports([row(1), row(2), later], [row(3)]) == [row(3), later]
    assert _replaced_imports([mine, row(1), later], [row(2), row(3)]) == [
        mine,
        row(2),
        row(3),
        later,
    ]
    # A first import puts its rows after the profile's own records; none left, none added.
    assert _replaced_imports([mine], [row(1)]) == [mine, row(1)]
    assert _replaced_imports([row(1), later], []) == [later]


def test_what_a_maintainer_adds_to_an_imported_record_survives_a_reimport(
    imported: Imported, target: Path
) -> None:
    """The drafter settings a row was measured with, added by hand with a comment, stay."""
    path = target / "registry/profiles/tiny-dual-fast.yaml"
    text = path.read_text()
    first = next(line for line in text.splitlines() if line.startswith("    measured:"))
    added = "    # Measured at n=4, which the profile lacks.\n    settings: {spec_n: 4}\n"
    path.write_text(text.replace(first + "\n", added + first + "\n", 1))
    before = path.read_text()
    again = run(target, "import", "club3090", str(imported.repo), "--rev", imported.rev)
    assert again.code == 0 and "0 files changed" in again.out, again.text
    assert path.read_text() == before
    assert evidence(target, "tiny-dual-fast")[0]["settings"] == {"spec_n": 4}


def test_a_row_a_maintainer_already_recorded_is_not_added_twice(
    imported: Imported, target: Path
) -> None:
    """The same day and decode speeds as a maintainer's own record: the same measurement."""
    path = target / "registry/profiles/tiny-dual-fast.yaml"
    yaml = YAML()
    doc = yaml.load(path.read_text())
    first = dict(doc["evidence"][0])
    own = {k: v for k, v in first.items() if k not in ("origin", "source")}
    doc["evidence"] = [{"source": "my own notes of that bench", **own}, *doc["evidence"][1:]]
    with path.open("w") as out:
        yaml.dump(doc, out)
    again = run(target, "import", "club3090", str(imported.repo), "--rev", imported.rev)
    assert again.code == 0, again.text
    records = evidence(target, "tiny-dual-fast")
    assert [r["source"] for r in records][0] == "my own notes of that bench"
    assert len(records) == 2  # the row it repeats is not imported again beside it
